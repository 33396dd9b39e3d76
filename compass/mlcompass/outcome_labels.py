"""Binary success labels built from interaction-level outcomes (ML Compass §4.5, §5.5).

The utility classifiers of §5.5 predict a binary success y_i; the paper builds it
differently per case study:

* PRISM (§5.5): within-user normalization, y_i = 1 iff the score of interaction i
  *exceeds* (strictly) the mean score s̄_u of that user's interactions;
* HealthBench (§5.5): y_i = 1 iff the response achieves full marks on the rubric;
* generic: score >= a fixed threshold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def within_group_mean_label(df: pd.DataFrame, group_col: str, outcome_col: str) -> pd.Series:
    """y_i = 1 iff outcome_i > mean outcome of its group (user or prompt), else 0 (§5.5, PRISM).

    Strict inequality, as in the paper ("exceeds s̄_u"). Returns an int Series aligned with df.
    """
    for col in (group_col, outcome_col):
        if col not in df.columns:
            raise ValueError(f"within_group_mean_label: column {col!r} not in DataFrame (has {list(df.columns)})")
    if df[outcome_col].isna().any():
        raise ValueError(f"within_group_mean_label: outcome column {outcome_col!r} has missing values")
    group_mean = df.groupby(group_col)[outcome_col].transform("mean")
    return (df[outcome_col] > group_mean).astype(int).rename("y")


def full_marks_label(score: pd.Series, max_score: float | pd.Series = 1.0, atol: float = 1e-9) -> pd.Series:
    """y_i = 1 iff score_i equals the maximum attainable score (§5.5, HealthBench full marks)."""
    if score.isna().any():
        raise ValueError(f"full_marks_label: score series {score.name!r} has missing values")
    if np.any(score > max_score + atol):
        raise ValueError(f"full_marks_label: some scores in {score.name!r} exceed max_score")
    return (np.abs(score - max_score) <= atol).astype(int).rename("y")


def threshold_label(score: pd.Series, threshold: float) -> pd.Series:
    """y_i = 1 iff score_i >= threshold."""
    if score.isna().any():
        raise ValueError(f"threshold_label: score series {score.name!r} has missing values")
    return (score >= threshold).astype(int).rename("y")
