"""Utility learning for a case study (ML Compass §4.5): outcome rows -> one Û per context group."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from compass.mlcompass.case_study import UtilitySpec
from compass.mlcompass.outcome_labels import full_marks_label, threshold_label, within_group_mean_label
from compass.mlcompass.utilities import UtilityFit, fit_utility


def outcome_labels(rows: pd.DataFrame, spec: UtilitySpec) -> pd.Series:
    """The binary label of §5.5 for each outcome row, by the case's label construction."""
    if spec.label == "within_group_mean":
        return within_group_mean_label(rows, "group", "outcome")
    if spec.label == "full_marks":
        return full_marks_label(rows["outcome"], rows["outcome"].max())
    if spec.label == "threshold":
        return threshold_label(rows["outcome"], spec.threshold)
    raise ValueError(f"unknown label construction {spec.label!r}; use within_group_mean | full_marks | threshold")


def labelled_rows(rows: pd.DataFrame, measures: pd.DataFrame, spec: UtilitySpec) -> pd.DataFrame:
    """Outcome rows joined to the producing model's measures, with the binary label of §5.5 as `label`.

    Rows of models without measures are dropped first. The label is computed once, on all remaining rows,
    before any split of the rows (by row or by model). For a within-prompt label this matters for the
    training rows only: y > mean over all models iff y > mean over the other models, so a held-out model's
    labels are the same either way, while the training models' labels also compare them with it.
    """
    data = rows.join(measures, on="model_id", how="inner")
    return data.assign(label=outcome_labels(data, spec).astype(float))


def utility_groups(data: pd.DataFrame, spec: UtilitySpec) -> Iterator[tuple[str, pd.DataFrame]]:
    """The context groups of labelled rows that get a utility: at least `min_rows_per_group` rows and both
    label classes (others are skipped, not fitted)."""
    for group, part in data.groupby("context_group", sort=True):
        if len(part) >= spec.min_rows_per_group and part["label"].nunique() == 2:
            yield str(group), part


def fit_group_utility(part: pd.DataFrame, features: list[str], spec: UtilitySpec, estimator: str | None = None,
                      seed: int = 0, measure_cols: list[str] | None = None) -> UtilityFit:
    """`fit_utility` on labelled rows as the case asks (§4.5): outcome target for linear, the label otherwise,
    its repeats, test share and shape constraints; `estimator` overrides the case's."""
    estimator = estimator or spec.estimator
    linear = estimator == "linear"
    return fit_utility(
        part[features], part["outcome"] if linear else part["label"], estimator, n_repeats=spec.n_repeats,
        test_size=spec.test_size, seed=seed, measure_cols=measure_cols, auc_label=part["label"] if linear else None,
        monotone=spec.monotone, nonnegative=spec.nonnegative,
    )


def fit_case_utilities(rows: pd.DataFrame, measures: pd.DataFrame, spec: UtilitySpec, seed: int = 0) -> dict[str, UtilityFit]:
    """One utility per context group from outcome rows joined to the producing model's measures
    (`labelled_rows`, `utility_groups`)."""
    names = list(measures.columns)
    return {group: fit_group_utility(part, names, spec, seed=seed)
            for group, part in utility_groups(labelled_rows(rows, measures, spec), spec)}


def structural_weights(spec: UtilitySpec, measure_names: list[str]) -> pd.Series:
    """β given by the case (§3, Assumption 3.1 path, no outcome data): normalized to sum to 1."""
    beta = pd.Series({m: float(spec.weights.get(m, 0.0)) for m in measure_names})
    if beta.sum() <= 0 or np.any(beta < 0):
        raise ValueError(f"structural utility weights must be >= 0 with a positive sum over {measure_names}")
    return beta / beta.sum()


def beyond_outcome_range(measures: pd.DataFrame, trained_on: pd.Index) -> pd.Series:
    """How far each model's measures lie outside the range of the models the utility was learned from (§4.5):
    the Euclidean length, in measure units, of its excess over the box [min, max] of those models per measure
    (sum over measures of max(0, x - max, min - x)^2, square-rooted). 0 inside the box; Û is applied there by
    interpolation, beyond it by extrapolation over that distance. NaN for every model when no model had
    outcome data (a given, structural utility)."""
    train = measures.loc[measures.index.intersection(trained_on)]
    if train.empty:
        return pd.Series(np.nan, index=measures.index, name="beyond_outcome_range")
    excess = (measures - train.max()).clip(lower=0) + (train.min() - measures).clip(lower=0)
    return np.sqrt((excess ** 2).sum(axis=1)).rename("beyond_outcome_range")


def outcome_reach(measures: pd.DataFrame, trained_on: pd.Index, rows: pd.Index) -> dict[str, float]:
    """How much of the models `rows` (e.g. a leaderboard's top 10) the outcome models reach: their number, the
    share of `rows` inside their range on every measure, and the median and maximum `beyond_outcome_range`."""
    distance = beyond_outcome_range(measures, trained_on).reindex(rows)
    return {"outcome_models": int(measures.index.intersection(trained_on).size),
            "share_inside": float((distance <= 1e-12).mean()), "median_beyond": float(distance.median()),
            "max_beyond": float(distance.max())}
