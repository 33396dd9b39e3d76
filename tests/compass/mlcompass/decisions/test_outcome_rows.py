"""Outcome rows (§4.5, §5.5): one prompt is one question, never two questions that share an id across splits."""

import pandas as pd

from compass.mlcompass.case_inputs import outcome_rows
from compass.mlcompass.case_study import UtilitySpec
from compass.mlcompass.case_utilities import outcome_labels

SPEC = UtilitySpec(source="query_records", datasets=("qa",), context="dataset", label="within_group_mean")


def _records() -> pd.DataFrame:
    """Query 7 of train (m1 right, m2 wrong) and query 7 of test (m1 wrong, m2 right): different questions."""
    return pd.DataFrame({
        "dataset": ["qa"] * 4, "split": ["train", "train", "test", "test"], "query_id": ["7"] * 4,
        "model_id": ["m1", "m2", "m1", "m2"], "correct": [1.0, 0.0, 0.0, 1.0], "category": ["x"] * 4,
    })


def test_prompts_are_keyed_by_split():
    rows = outcome_rows(_records(), pd.DataFrame(), SPEC)
    assert rows["group"].nunique() == 2
    # Within each question, the model that beat the question's mean correctness is labelled 1. Pooling the
    # two questions (mean 0.5 for both models) would have labelled every row 0.
    assert outcome_labels(rows, SPEC).tolist() == [1.0, 0.0, 0.0, 1.0]


def test_records_without_a_split_column_keep_one_prompt_per_id():
    rows = outcome_rows(_records().drop(columns="split").iloc[:2], pd.DataFrame(), SPEC)
    assert rows["group"].tolist() == ["qa::7", "qa::7"]
