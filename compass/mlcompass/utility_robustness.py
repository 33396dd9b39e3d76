"""Robustness of the learned utilities Û_g (EC §8.5, Tables 11-16) and their validation on held-out models.

`robustness_table` refits a case's utilities under the alternatives of EC §8.5, each with the case's
repeated random row splits (`fit_utility`):

* pooled: one utility for all context groups, on the measures only (Table 11, "without z type");
* pooled_context: one utility on the measures plus one-hot context-group columns (Table 12, "extra
  features"; our only context feature is the group itself);
* grouped: one utility per context group, the case's own construction (Tables 13, 14, 16);

for a linear and a non-linear estimator side by side (Table 15: logistic and LightGBM, plus the case's
estimator if it is neither). `mean_rows` gives the tables' MEAN rows.

A random row split puts rows of every model on both sides, and a model's rows all share its measures x(m),
so a flexible estimator can score well by memorizing each training model's success rate. The utilities are
learned from few models (9 or 23 with outcome data) and applied to hundreds; `leave_models_out` measures
that use: it fits on some models' rows and scores the rows of models it never saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from compass.mlcompass.case_study import UtilitySpec
from compass.mlcompass.case_utilities import fit_group_utility, labelled_rows, utility_groups
from compass.mlcompass.utilities import UtilityFit, auc, fit_model, utility_scores

ALL_GROUPS = "all"


def _fit_row(variant: str, estimator: str, group: str, fit: UtilityFit) -> dict[str, object]:
    return {"variant": variant, "estimator": estimator, "context_group": group, "n_train": fit.n_train,
            "n_test": fit.n_test, "train_auc": fit.train_auc_mean, "train_auc_sd": fit.train_auc_sd,
            "test_auc": fit.test_auc_mean, "test_auc_sd": fit.test_auc_sd,
            **{f"beta_{m}": w for m, w in fit.weights.items()}}


def _case_groups(rows: pd.DataFrame, measures: pd.DataFrame, spec: UtilitySpec) -> dict[str, pd.DataFrame]:
    groups = dict(utility_groups(labelled_rows(rows, measures, spec), spec))
    if not groups:
        raise ValueError("no context group has enough labelled rows with both classes to fit a utility")
    return groups


def robustness_table(
    rows: pd.DataFrame,
    measures: pd.DataFrame,
    spec: UtilitySpec,
    estimators: Sequence[str] | None = None,
    seed: int = 0,
    n_repeats: int | None = None,
) -> pd.DataFrame:
    """EC Tables 11-16 as one tidy frame [variant, estimator, context_group, n_train, n_test, train_auc,
    train_auc_sd, test_auc, test_auc_sd, beta_<measure>...] (module docstring).

    `rows`: outcome rows [model_id, group, context_group, outcome] (`case_inputs.outcome_rows`); `measures`:
    index model_id, columns C1..Ck. Labels are built once on all rows (`labelled_rows`); every variant uses
    the rows of the context groups the case fits (`utility_groups`), so the variants see the same rows.
    pooled rows have context_group "all"; pooled_context is left out when there is a single group.
    AUCs are mean and sd over the case's repeated row splits; beta_* the normalized weights over the
    measures (Table 16). `estimators` default: logistic and lightgbm, plus the case's estimator;
    `n_repeats` default: the case's number of row splits.
    """
    spec = spec if n_repeats is None else replace(spec, n_repeats=n_repeats)
    groups = _case_groups(rows, measures, spec)
    names = list(measures.columns)
    data = pd.concat(groups.values())
    context = pd.get_dummies(data["context_group"].astype(str), prefix="ctx", drop_first=True, dtype=float)
    with_context = pd.concat([data, context], axis=1)
    estimators = list(dict.fromkeys([spec.estimator, "logistic", "lightgbm"] if estimators is None else estimators))
    out = []
    for estimator in estimators:
        out.append(_fit_row("pooled", estimator, ALL_GROUPS, fit_group_utility(data, names, spec, estimator, seed)))
        if len(groups) > 1:
            fit = fit_group_utility(with_context, names + list(context.columns), spec, estimator, seed, measure_cols=names)
            out.append(_fit_row("pooled_context", estimator, ALL_GROUPS, fit))
        out += [_fit_row("grouped", estimator, group, fit_group_utility(part, names, spec, estimator, seed))
                for group, part in groups.items()]
    return pd.DataFrame(out)


def mean_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The MEAN rows of EC Tables 13-16: per variant and estimator, the mean over context groups of the
    row counts and AUCs, with the sd across groups (ddof 0, as the paper's) in the *_sd columns."""
    agg = table.groupby(["variant", "estimator"], sort=False).agg(
        n_groups=("context_group", "size"), n_train=("n_train", "mean"), n_test=("n_test", "mean"),
        train_auc=("train_auc", "mean"), train_auc_sd=("train_auc", lambda v: float(np.std(v))),
        test_auc=("test_auc", "mean"), test_auc_sd=("test_auc", lambda v: float(np.std(v))),
    )
    out = agg.reset_index().assign(context_group="MEAN")
    return out[["variant", "estimator", "context_group", *agg.columns]]


@dataclass(frozen=True)
class HeldOutModels:
    """Output of `leave_models_out`.

    folds: one row per (context group, fold) [context_group, fold, held_out, n_models, n_rows, n_train_rows,
      positive_rate, mean_score, auc]; held_out joins the held-out model ids with ", "; auc is NaN when the
      fold's scores are all equal (one held-out model has one x, hence one score) or its label has one class.
    summary: one row per context group [context_group, n_models, n_folds, n_rows, held_out_auc, fold_auc_mean,
      fold_auc_sd, model_rate_auc, held_out_spearman]. held_out_auc: the AUC of every row scored by the fold that
      held its model out (pooled out-of-fold scores). held_out_spearman: the Spearman rank correlation, over the
      models, of each model's out-of-fold Û (mean over its rows) with its observed success rate: how well the
      utility orders models it never saw, which is what a leaderboard asks of it (NaN with < 3 models). model_rate_auc: the AUC of every row scored by its own model's success
      rate in the group: the in-sample ceiling of any utility of x when each model has its own x, and about
      the row-split test AUC of an estimator that memorizes each training model's rate.
    """

    folds: pd.DataFrame
    summary: pd.DataFrame


def model_folds(models: Sequence[str], n_folds: int | None, seed: int = 0) -> list[list[str]]:
    """Folds of model ids: one model per fold (`n_folds=None`) or `n_folds` folds of shuffled models."""
    models = sorted(models)
    if n_folds is None:
        return [[m] for m in models]
    if not 2 <= n_folds <= len(models):
        raise ValueError(f"n_folds must be in 2..{len(models)} for {len(models)} models, got {n_folds}")
    shuffled = np.random.default_rng(seed).permutation(models)
    return [sorted(fold.tolist()) for fold in np.array_split(shuffled, n_folds)]


def leave_models_out(
    rows: pd.DataFrame,
    measures: pd.DataFrame,
    spec: UtilitySpec,
    n_folds: int | None = None,
    estimator: str | None = None,
    seed: int = 0,
) -> HeldOutModels:
    """Held-out-model validation of the case's utilities Û_g (§4.5): per context group, for each fold of
    models (`model_folds`), fit on the other models' rows and score the held-out models' rows.

    Labels are computed once on all models before any split (`labelled_rows`), as the published utilities
    use them. With a within-prompt label (within_group_mean) the held-out rows' labels do not depend on this
    choice, but the training rows' labels are set against every model of the prompt, the held-out ones
    included. Groups and rows are the case's (`utility_groups`); the estimator and its shape constraints are
    the case's unless `estimator` is given.
    """
    estimator = estimator or spec.estimator
    names = list(measures.columns)
    folds, summary = [], []
    for group, part in _case_groups(rows, measures, spec).items():
        target = part["outcome" if estimator == "linear" else "label"].to_numpy(float)
        label = part["label"].to_numpy(float)
        score = np.full(len(part), np.nan)
        group_folds = []
        for i, held in enumerate(model_folds(part["model_id"].unique().tolist(), n_folds, seed)):
            test = part["model_id"].isin(held).to_numpy()
            model = fit_model(part.loc[~test, names], target[~test], estimator, seed=seed, monotone=spec.monotone,
                              nonnegative=spec.nonnegative)
            score[test] = utility_scores(model, estimator, part.loc[test, names])
            # identical measures give identical scores up to rounding (vectorized predict): no ranking to score
            varied = np.ptp(score[test]) > 1e-9 * max(1.0, float(np.abs(score[test]).max()))
            group_folds.append({"context_group": group, "fold": i, "held_out": ", ".join(held), "n_models": len(held),
                                "n_rows": int(test.sum()), "n_train_rows": int((~test).sum()),
                                "positive_rate": float(label[test].mean()), "mean_score": float(score[test].mean()),
                                "auc": auc(label[test], score[test]) if varied else float("nan")})
        fold_auc = pd.Series([f["auc"] for f in group_folds], dtype=float)
        model_rate = part.groupby("model_id")["label"].transform("mean").to_numpy(float)
        per_model = pd.DataFrame({"model_id": part["model_id"].to_numpy(), "score": score, "rate": label}).groupby(
            "model_id")[["score", "rate"]].mean()
        spearman = float(spearmanr(per_model["score"], per_model["rate"])[0]) if len(per_model) >= 3 else float("nan")
        summary.append({"context_group": group, "n_models": part["model_id"].nunique(), "n_folds": len(group_folds),
                        "n_rows": len(part), "held_out_auc": auc(label, score), "fold_auc_mean": fold_auc.mean(),
                        "fold_auc_sd": fold_auc.std(ddof=0), "model_rate_auc": auc(label, model_rate),
                        "held_out_spearman": spearman})
        folds += group_folds
    return HeldOutModels(folds=pd.DataFrame(folds), summary=pd.DataFrame(summary))
