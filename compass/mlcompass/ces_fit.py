"""CES capability frontier, problem (3) of ML Compass §4.4 Step 2.

    min_{a, b, lambda}  sum_{m in M_eff} l( s(m; a, b) - lambda_{t(m)} )
    s.t. a_i > 0, sum_i a_i = 1, lambda_1 <= ... <= lambda_T,

with s(m; a, b) = (sum_i a_i x_i(m)^b)^(1/b) (compass.mlcompass.frontier.ces_score) and l the
robust soft-l1 loss, l(r) = f^2 * 2 (sqrt(1 + (r/f)^2) - 1) as in scipy.optimize.least_squares
(loss="soft_l1", f_scale=f). Alternating optimization exactly as §4.4 lists it:
  (i)   lambda | (a, b): isotonic regression over tiers (sklearn IsotonicRegression,
        increasing from weakest tier 1 to strongest tier T). The paper's isotonic step is
        least squares; we make it consistent with the soft-l1 objective by iteratively
        reweighted isotonic regression (weights rho'(z) = 1/sqrt(1 + (r/f)^2)), a
        majorize-minimize step that never increases the loss;
  (ii)  a | (b, lambda): SLSQP on the simplex (bounds [a_min, 1], sum a = 1);
  (iii) b | (a, lambda): bounded scalar search (scipy.optimize.minimize_scalar, "bounded").
The starting b is the best point of a coarse log-grid (our choice, to avoid a poor local
start). The capability side takes no cost or price input (lineage requirement).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize, minimize_scalar
from sklearn.isotonic import IsotonicRegression

from compass.mlcompass.frontier import ces_score


@dataclass(frozen=True)
class CESFit:
    """Fitted capability side: a (simplex, ordered as `factors`), b, tier levels lambda_1..lambda_T.

    `fit_error` is the paper's normalized fitting error (EC §8.4, Tables 9-10): mean squared
    residual s(m; a, b) - lambda_t(m) over the efficient models that shape the frontier.
    """

    a: np.ndarray
    b: float
    tier_levels: np.ndarray
    loss: float
    n_iter: int
    converged: bool
    factors: list[str]
    fit_error: float
    n_efficient: int


def soft_l1(r: np.ndarray, f_scale: float) -> np.ndarray:
    """Soft-l1 loss f^2 * 2(sqrt(1 + (r/f)^2) - 1), scipy least_squares' rho scaled to residual units."""
    return f_scale ** 2 * 2.0 * (np.sqrt(1.0 + (r / f_scale) ** 2) - 1.0)


def _objective(x, tier_idx, a, b, levels, f_scale) -> float:
    return float(np.sum(soft_l1(ces_score(x, a, b) - levels[tier_idx], f_scale)))


def _update_levels(s: np.ndarray, tier_idx: np.ndarray, levels: np.ndarray, f_scale: float, n_irls: int) -> np.ndarray:
    """Step (i): IRLS isotonic regression of CES scores on tier order."""
    iso = IsotonicRegression(increasing=True)
    tiers = np.arange(levels.size, dtype=float)
    for _ in range(n_irls):
        w = 1.0 / np.sqrt(1.0 + ((s - levels[tier_idx]) / f_scale) ** 2)
        levels = iso.fit(tier_idx.astype(float), s, sample_weight=w).predict(tiers)
    return levels


def _prepare(measures: pd.DataFrame, tiers: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    if not isinstance(measures, pd.DataFrame) or measures.empty:
        raise ValueError("measures must be a non-empty DataFrame (index model_id, columns factors)")
    need = {"model_id", "tier", "pareto_efficient"}
    if not need <= set(tiers.columns):
        raise ValueError(f"tiers is missing columns {sorted(need - set(tiers.columns))}")
    eff = tiers[tiers["pareto_efficient"].astype(bool)]
    unknown = sorted(set(eff["model_id"]) - set(measures.index))
    if unknown:
        raise ValueError(f"efficient models without measures: {unknown}")
    x = measures.loc[eff["model_id"]].to_numpy(dtype=float)
    if not np.isfinite(x).all() or (x < 0).any():
        raise ValueError("measures of efficient models must be finite and non-negative")
    n_tiers = int(tiers["tier"].max())
    present = set(eff["tier"].astype(int))
    if present != set(range(1, n_tiers + 1)):
        raise ValueError(f"every tier 1..{n_tiers} needs an efficient model; tiers present: {sorted(present)}")
    if x.shape[0] < x.shape[1] + 2:
        raise ValueError(f"too few efficient models ({x.shape[0]}) to fit a CES with {x.shape[1]} measures")
    return x, eff["tier"].to_numpy(dtype=int) - 1, n_tiers


def fit_ces(
    measures: pd.DataFrame,
    tiers: pd.DataFrame,
    f_scale: float = 0.05,
    b_bounds: tuple[float, float] = (0.2, 10.0),
    a_min: float = 1e-6,
    max_iter: int = 200,
    tol: float = 1e-9,
    n_irls: int = 5,
) -> CESFit:
    """Solve problem (3) on the efficient models of `tiers` (output of `pareto_tiers`).

    `measures`: index model_id, columns internal measures in [0, 1]. Returns `CESFit`.
    """
    x, tier_idx, n_tiers = _prepare(measures, tiers)
    if not 0 < b_bounds[0] < b_bounds[1]:
        raise ValueError(f"b_bounds must satisfy 0 < low < high, got {b_bounds}")
    n_dim = x.shape[1]
    a = np.full(n_dim, 1.0 / n_dim)
    grid = np.geomspace(b_bounds[0], b_bounds[1], 15)
    starts = []
    for b in grid:
        lv = _update_levels(ces_score(x, a, b), tier_idx, np.zeros(n_tiers), f_scale, n_irls)
        starts.append(_objective(x, tier_idx, a, b, lv, f_scale))
    b = float(grid[int(np.argmin(starts))])
    levels = _update_levels(ces_score(x, a, b), tier_idx, np.zeros(n_tiers), f_scale, n_irls)
    loss = _objective(x, tier_idx, a, b, levels, f_scale)
    simplex = {"type": "eq", "fun": lambda v: np.sum(v) - 1.0, "jac": lambda v: np.ones_like(v)}
    converged, it = False, 0
    for it in range(1, max_iter + 1):
        levels = _update_levels(ces_score(x, a, b), tier_idx, levels, f_scale, n_irls)
        if n_dim > 1:
            res = minimize(
                lambda v: _objective(x, tier_idx, v, b, levels, f_scale), a, method="SLSQP",
                bounds=[(a_min, 1.0)] * n_dim, constraints=[simplex], options={"ftol": 1e-12},
            )
            cand = np.clip(res.x, a_min, None)
            cand = cand / cand.sum()
            if _objective(x, tier_idx, cand, b, levels, f_scale) <= _objective(x, tier_idx, a, b, levels, f_scale):
                a = cand
        res_b = minimize_scalar(
            lambda v: _objective(x, tier_idx, a, v, levels, f_scale), bounds=b_bounds, method="bounded",
            options={"xatol": 1e-6},
        )
        if res_b.fun <= _objective(x, tier_idx, a, b, levels, f_scale):
            b = float(res_b.x)
        new_loss = _objective(x, tier_idx, a, b, levels, f_scale)
        if abs(loss - new_loss) <= tol * max(1.0, abs(loss)):
            loss, converged = new_loss, True
            break
        loss = new_loss
    resid = ces_score(x, a, b) - levels[tier_idx]
    return CESFit(
        a=a, b=b, tier_levels=levels, loss=loss, n_iter=it, converged=converged,
        factors=[str(c) for c in measures.columns], fit_error=float(np.mean(resid ** 2)),
        n_efficient=int(x.shape[0]),
    )


def ces_parameter_rows(fit: CESFit) -> pd.DataFrame:
    """The capability stage of compass.frontier: a_<factor>, b, lambda_<t>, ces_fit_error, n_efficient, converged."""
    rows = [(f"a_{f}", float(a)) for f, a in zip(fit.factors, fit.a)] + [("b", fit.b)]
    rows += [(f"lambda_{t + 1}", float(v)) for t, v in enumerate(fit.tier_levels)]
    rows += [("ces_fit_error", fit.fit_error), ("n_efficient", float(fit.n_efficient)), ("converged", float(fit.converged))]
    return pd.DataFrame(rows, columns=["parameter", "value"]).assign(stage="capability")


def ces_from_parameters(params: pd.Series, factors: list[str]) -> CESFit:
    """Rebuild the CES shape (a, b, λ_t) from its published rows (`ces_parameter_rows`, indexed by parameter)."""
    levels = params[[p for p in params.index if p.startswith("lambda_")]]
    levels = levels.sort_index(key=lambda idx: idx.str.removeprefix("lambda_").astype(int))
    return CESFit(
        a=params[[f"a_{f}" for f in factors]].to_numpy(float), b=float(params["b"]),
        tier_levels=levels.to_numpy(float), loss=float("nan"), n_iter=0, converged=True, factors=factors,
        fit_error=float(params["ces_fit_error"]), n_efficient=int(params["n_efficient"]),
    )
