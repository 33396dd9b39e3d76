"""Fitted utilities Û_g (ML Compass §4.5) as inspectable rows, and back: arrays and text, never serialized objects.

One row per context group, the `compass.utility_models` table:

| column | linear / logistic | lightgbm | structural (given β, §3) or linear_score (PRISM, §5.6) |
|---|---|---|---|
| estimator | `linear` / `logistic` | `lightgbm` | `structural` / `linear_score` |
| features | JSON list of the feature columns, in model order | same | the measures |
| coefficients | JSON list, one per feature | null | β, or the fit's normalized abs(β̂) |
| intercept | α | null | 0 |
| model_text | null | LightGBM's own text model format (`Booster.model_to_string`) | null |

Linear and logistic models are rebuilt as scikit-learn estimators with their
fitted attributes set, so a rebuilt Û computes exactly what the fitted one did
(`predict` / `predict_proba`); a LightGBM booster is reloaded from its text
model, which LightGBM writes with round-trip precision. Rows read back with SQL
(`json_extract`) as well as with `utility_from_row`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import lightgbm as lgb
import numpy as np
import pandas as pd
from scipy.special import expit

from compass.mlcompass.utilities import UtilityFit, UtilityFn

COLUMNS = ["context_group", "estimator", "features", "coefficients", "intercept", "model_text"]

__all__ = [
    "COLUMNS",
    "fitted_model_rows",
    "linear_score_rows",
    "structural_model_rows",
    "utilities_from_rows",
    "utility_from_row",
]


def _row(group: str, estimator: str, features: list[str], coefficients: list[float] | None,
         intercept: float | None, model_text: str | None) -> dict[str, object]:
    return {"context_group": group, "estimator": estimator, "features": json.dumps(features),
            "coefficients": None if coefficients is None else json.dumps([float(c) for c in coefficients]),
            "intercept": np.nan if intercept is None else float(intercept), "model_text": model_text}


def _frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=COLUMNS)
    return frame.astype({c: "string" for c in ("context_group", "estimator", "features", "coefficients", "model_text")})


def fitted_model_rows(fits: Mapping[str, UtilityFit]) -> pd.DataFrame:
    """One row per fitted context group (module docstring); utilities fitted on context features are refused."""
    rows = []
    for group, fit in fits.items():
        if fit.feature_cols != fit.measure_cols:
            raise ValueError(f"context group {group!r}: a utility fitted on context features {fit.feature_cols} "
                             "cannot be published as a function of the measures alone")
        features = list(fit.feature_cols)
        if fit.estimator == "lightgbm":
            rows.append(_row(group, fit.estimator, features, None, None, fit.model.booster_.model_to_string()))
        else:
            rows.append(_row(group, fit.estimator, features, np.ravel(fit.model.coef_),
                             float(np.ravel(fit.model.intercept_)[0]), None))
    return _frame(rows)


def structural_model_rows(beta: pd.Series, group: str = "all") -> pd.DataFrame:
    """The given weights β of a structural utility (Û = βᵀx, Assumption 3.1) as one row."""
    return _frame([_row(group, "structural", list(beta.index), beta.to_numpy(float), 0.0, None)])


def linear_score_rows(fits: Mapping[str, UtilityFit]) -> pd.DataFrame:
    """The paper's PRISM utility per group, Û_g = β̂_gᵀx with β̂_g the normalized |coefficients| (§5.6)."""
    return _frame([_row(g, "linear_score", list(f.weights.index), f.weights.to_numpy(float), 0.0, None)
                   for g, f in fits.items()])


def utility_from_row(row: Mapping[str, object]) -> UtilityFn | pd.Series:
    """Û of one `compass.utility_models` row: the weights β for a structural row (Û = βᵀx), else a function
    of an (n, I) array of measures in the row's feature order, computing what the fitted model did."""
    estimator, features = str(row["estimator"]), json.loads(str(row["features"]))
    if estimator in ("structural", "linear_score"):
        return pd.Series(json.loads(str(row["coefficients"])), index=features, dtype=float)
    if estimator == "lightgbm":
        booster = lgb.Booster(model_str=str(row["model_text"]))
        return lambda x: booster.predict(pd.DataFrame(np.atleast_2d(np.asarray(x, dtype=float)), columns=features))
    if estimator in ("linear", "logistic"):
        # What sklearn's predict / predict_proba[:, 1] compute, in numpy: the target solvers call Û thousands of
        # times on single points, where sklearn's input validation costs 100x the arithmetic.
        coef, intercept = np.asarray(json.loads(str(row["coefficients"])), dtype=float), float(row["intercept"])
        link = (lambda z: z) if estimator == "linear" else expit
        return lambda x: link(np.atleast_2d(np.asarray(x, dtype=float)) @ coef + intercept)
    raise ValueError(f"compass.utility_models: unknown estimator {estimator!r} for group {row['context_group']!r}")


def utilities_from_rows(rows: pd.DataFrame) -> dict[str, UtilityFn | pd.Series]:
    """Context group -> Û, for every row of a case's `compass.utility_models`."""
    return {str(r["context_group"]): utility_from_row(r) for r in rows.to_dict("records")}
