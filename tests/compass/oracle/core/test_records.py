import numpy as np
import pandas as pd
import pytest

from compass.oracle.records import build_arrays, drop_short_models, from_arrays
from tests.compass.oracle.core.conftest import records_from_outcomes


def test_build_arrays_counts_and_model_cost(small_outcomes):
    df = records_from_outcomes(small_outcomes)
    arr = build_arrays(df, model_cost={"m0": 1.0, "m1": 2.0, "m2": 0.5})
    assert arr.successes.shape == (40, 3)
    np.testing.assert_array_equal(arr.successes, small_outcomes.sum(axis=2))
    np.testing.assert_array_equal(arr.trials, 6)
    np.testing.assert_allclose(arr.cell_cost[0], [1.0, 2.0, 0.5])
    assert list(arr.topics[:4]) == ["t0", "t1", "t2", "t0"]


def test_per_record_cost_and_unequal_generations():
    rng = np.random.default_rng(0)
    out = (rng.random((5, 2, 4)) < 0.5).astype(float)
    cost = rng.uniform(0.1, 1.0, size=out.shape)
    df = records_from_outcomes(out, cost)
    # model m1 keeps only 2 generations on every prompt: allowed (per-model G)
    df = df[~((df.model_id == "m1") & (df.generation >= 2))]
    arr = build_arrays(df)
    np.testing.assert_array_equal(arr.generations, [4, 2])
    np.testing.assert_allclose(arr.cell_cost[:, 1], cost[:, 1, :2].mean(axis=1))
    np.testing.assert_array_equal(arr.successes[:, 1], out[:, 1, :2].sum(axis=1))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d[d.model_id == "m0"], "at least 2 models"),
        (lambda d: d.drop(index=d.index[(d.query_id == "q0003") & (d.model_id == "m1") & (d.generation == 5)]), "'m1'"),
        (lambda d: d.assign(correct=d.correct * 2), "0/1"),
        (lambda d: d.assign(cost_usd=-1.0), "negative cost"),
        (lambda d: pd.concat([d, d.iloc[:1]]), "duplicate"),
        (lambda d: d.drop(columns="correct"), "required columns"),
        (lambda d: d.assign(cost_usd=np.where(d.index % 2 == 0, 1.0, np.nan)), "null on some"),
    ],
)
def test_bad_input_raises(small_outcomes, mutate, message):
    df = records_from_outcomes(small_outcomes)
    with pytest.raises(ValueError, match=message):
        build_arrays(mutate(df), model_cost={"m0": 1.0, "m1": 1.0, "m2": 1.0}, dataset="toy")


def test_missing_model_cost_raises(small_outcomes):
    with pytest.raises(ValueError, match="no per-model cost for models \\['m2'\\]"):
        build_arrays(records_from_outcomes(small_outcomes), model_cost={"m0": 1.0, "m1": 1.0})


def test_from_arrays_validates():
    with pytest.raises(ValueError, match="at least 2 models"):
        from_arrays(np.zeros((3, 1, 2)), np.ones(1))
    with pytest.raises(ValueError, match="cost must have shape"):
        from_arrays(np.zeros((3, 2, 2)), np.ones(3))


def test_drop_short_models():
    rng = np.random.default_rng(1)
    out = (rng.random((6, 3, 4)) < 0.5).astype(float)
    df = records_from_outcomes(out)
    df = df[~((df.model_id == "m2") & (df.generation >= 1))]
    arr = drop_short_models(build_arrays(df, model_cost={"m0": 1.0, "m1": 1.0, "m2": 1.0}))
    assert list(arr.model_ids) == ["m0", "m1"] and arr.min_generations == 4
    with pytest.raises(ValueError, match="at least 2 models"):
        arr.select_models(np.array([True, False]))
