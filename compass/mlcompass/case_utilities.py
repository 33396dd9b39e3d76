"""Utility learning for a case study (ML Compass §4.5): outcome rows -> one Û per context group."""

from __future__ import annotations

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


def fit_case_utilities(rows: pd.DataFrame, measures: pd.DataFrame, spec: UtilitySpec, seed: int = 0) -> dict[str, UtilityFit]:
    """One utility per context group from outcome rows joined to the producing model's measures.

    Rows of models without measures are dropped; groups with fewer than
    `min_rows_per_group` rows or a single label class are skipped (not fitted).
    """
    data = rows.join(measures, on="model_id", how="inner")
    data = data.assign(label=outcome_labels(data, spec).astype(float))
    names = list(measures.columns)
    fits = {}
    for group, part in data.groupby("context_group", sort=True):
        if len(part) < spec.min_rows_per_group or part["label"].nunique() < 2:
            continue
        target = part["outcome"] if spec.estimator == "linear" else part["label"]
        fits[str(group)] = fit_utility(
            part[names], target, spec.estimator, n_repeats=spec.n_repeats, test_size=spec.test_size, seed=seed,
            auc_label=part["label"] if spec.estimator == "linear" else None,
        )
    return fits


def structural_weights(spec: UtilitySpec, measure_names: list[str]) -> pd.Series:
    """β given by the case (§3, Assumption 3.1 path, no outcome data): normalized to sum to 1."""
    beta = pd.Series({m: float(spec.weights.get(m, 0.0)) for m in measure_names})
    if beta.sum() <= 0 or np.any(beta < 0):
        raise ValueError(f"structural utility weights must be >= 0 with a positive sum over {measure_names}")
    return beta / beta.sum()
