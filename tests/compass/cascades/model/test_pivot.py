"""The numpy pivot and mean costs of the cascade records (issue 12, item 10: the fit's pandas pivot replaced)
give exactly pandas' own tables on the real MMLU records, drop incomplete queries and reject duplicates."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compass.cascades.data import mean_costs, pivot
from compass.cascades.study import CHAINS

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def mmlu() -> pd.DataFrame:
    records = pd.read_parquet(ROOT / "data" / "query_records.parquet")
    return records[records["dataset"] == "mmlu"]


def pandas_pivot(df: pd.DataFrame, column: str, split: str, models: list[str] | None) -> pd.DataFrame:
    """The pandas path the fit used before: filter, DataFrame.pivot, column selection, dropna."""
    wide = df[df["split"] == split].pivot(index="query_id", columns="model_id", values=column)
    return (wide if models is None else wide[models]).dropna()


@pytest.mark.parametrize("split", ["train", "test"])
@pytest.mark.parametrize("column", ["confidence", "correct", "cost_usd"])
@pytest.mark.parametrize("models", [None, list(CHAINS["llama"]), list(CHAINS["llama"][::-2])])
def test_pivot_equals_pandas_on_the_real_records(mmlu, split, column, models):
    want = pandas_pivot(mmlu, column, split, models)
    assert len(want) > 100
    pd.testing.assert_frame_equal(pivot(mmlu, column, split=split, models=models), want, check_exact=True)


def test_mean_costs_equal_pandas_groupby_on_the_real_records(mmlu):
    want = mmlu[mmlu["split"] == "train"].groupby("model_id")["cost_usd"].mean()
    got = mean_costs(mmlu)
    assert list(got) == list(want.index)
    np.testing.assert_array_equal(list(got.values()), want.to_numpy())


def test_pivot_drops_incomplete_queries_and_rejects_duplicates():
    df = pd.DataFrame({"split": "train", "query_id": ["q2", "q2", "q1", "q1", "q3"],
                       "model_id": ["a", "b", "b", "a", "a"], "p": [0.1, 0.2, 0.3, 0.4, 0.5]})
    wide = pivot(df, "p", split="train", models=["b", "a"])
    assert list(wide.index) == ["q1", "q2"] and list(wide.columns) == ["b", "a"]  # q3 lacks model b
    np.testing.assert_array_equal(wide.to_numpy(), [[0.3, 0.4], [0.2, 0.1]])
    assert list(pivot(df, "p", split="train").columns) == ["a", "b"]  # sorted when no models are given
    with pytest.raises(ValueError, match="duplicate"):
        pivot(pd.concat([df, df.iloc[:1]]), "p", split="train")
    with pytest.raises(ValueError, match="unknown model"):
        pivot(df, "p", split="train", models=["a", "c"])
