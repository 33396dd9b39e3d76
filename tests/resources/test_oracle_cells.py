"""resources.oracle_cells + compass.oracle.records.from_cells: the oracle from per-cell DuckDB aggregates gives the
numbers of the per-row path (`build_arrays`), and rejects what `build_arrays` rejects (issue 47 item 3)."""

import duckdb
import numpy as np
import pandas as pd
import pytest

from compass.oracle.estimators import ESTIMATORS
from compass.oracle.naive import naive_curve
from compass.oracle.records import build_arrays, from_cells
from compass.oracle.synthetic import generate
from resources.oracle_cells import cell_floor, oracle_cells
from tests.compass.oracle.core.conftest import beta_outcomes, records_from_outcomes

# every estimator that needs no single generation (split-sample and the PGM's LogNormal cost model do)
CELL_ESTIMATORS = sorted(set(ESTIMATORS) - {"split_sample", "pgm"})


def _cells(records: pd.DataFrame, dataset: str = "d") -> pd.DataFrame:
    """The aggregates of `records` as stored in a DuckDB query_records table beside another dataset's rows."""
    other = records.iloc[: len(records) // 3].assign(correct=1.0)  # must not leak into dataset d
    table = pd.concat([records.assign(dataset=dataset), other.assign(dataset="other")], ignore_index=True)
    with duckdb.connect() as con:
        con.register("t", table.sample(frac=1.0, random_state=0))  # row order must not matter
        con.execute("create table query_records as select * from t")
        return oracle_cells(con, dataset, table="query_records")


@pytest.fixture
def small_outcomes() -> np.ndarray:
    return beta_outcomes(40, 3, 6, seed=1)[0]


@pytest.fixture(scope="module")
def synthetic_records() -> pd.DataFrame:
    return generate(300, 6, 5, seed=7).records


def test_aggregates_path_equals_the_rows_path(synthetic_records):
    rows = build_arrays(synthetic_records, dataset="d")
    cells = from_cells(_cells(synthetic_records), dataset="d")
    np.testing.assert_array_equal(cells.prompt_ids, rows.prompt_ids)
    np.testing.assert_array_equal(cells.model_ids, rows.model_ids)
    np.testing.assert_array_equal(cells.successes, rows.successes)
    np.testing.assert_array_equal(cells.trials, rows.trials)
    np.testing.assert_allclose(cells.cell_cost, rows.cell_cost, rtol=1e-12, atol=0)
    assert cells.outcomes is None and cells.gen_cost is None
    curve_rows, curve_cells = naive_curve(rows), naive_curve(cells)
    np.testing.assert_allclose(curve_cells[["quality", "cost"]], curve_rows[["quality", "cost"]], rtol=0, atol=1e-12)
    for name in CELL_ESTIMATORS:
        np.testing.assert_allclose(ESTIMATORS[name](cells), ESTIMATORS[name](rows), rtol=0, atol=1e-12, err_msg=name)


def test_per_model_cost_and_unequal_generations_match(small_outcomes):
    records = records_from_outcomes(small_outcomes)
    records = records[~((records.model_id == "m1") & (records.generation >= 2))]  # per-model G: allowed
    cost = {"m0": 1.0, "m1": 2.0, "m2": 0.5}
    rows, cells = build_arrays(records, cost), from_cells(_cells(records), cost)
    np.testing.assert_array_equal(cells.generations, [6, 2, 6])
    np.testing.assert_array_equal(cells.successes, rows.successes)
    np.testing.assert_array_equal(cells.cell_cost, rows.cell_cost)
    keep, first = np.array([True, False, True]), np.arange(5)
    np.testing.assert_array_equal(cells.select_models(keep).take(first).cell_cost,
                                  rows.select_models(keep).take(first).cell_cost)


def test_generations_beyond_the_bit_mask_fall_back_on_count_distinct():
    rng = np.random.default_rng(3)
    records = records_from_outcomes((rng.random((4, 2, 70)) < 0.5).astype(float), rng.uniform(0.1, 1.0, (4, 2, 70)))
    cells = _cells(records)
    assert (cells["generations"] == 70).all()
    np.testing.assert_array_equal(from_cells(cells).successes, build_arrays(records).successes)
    with pytest.raises(ValueError, match="duplicate"):
        from_cells(_cells(records.assign(generation=np.where(records.generation == 69, 68, records.generation))))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d[d.model_id == "m0"], "at least 2 models"),
        (lambda d: d.drop(index=d.index[(d.query_id == "q0003") & (d.model_id == "m1") & (d.generation == 5)]), "'m1'"),
        (lambda d: d.drop(index=d.index[(d.query_id == "q0003") & (d.model_id == "m1")]), "'m1'"),
        (lambda d: d.assign(generation=np.where((d.model_id == "m2") & (d.generation == 5), 7, d.generation)),
         "not numbered"),
        (lambda d: d.assign(correct=d.correct * 2), "0/1"),
        (lambda d: d.assign(correct=np.where(d.index == 5, np.nan, d.correct)), "null values"),
        (lambda d: d.assign(cost_usd=-1.0), "negative cost"),
        (lambda d: pd.concat([d, d.iloc[:1]]), "duplicate"),
        (lambda d: d.assign(cost_usd=np.where(d.index % 2 == 0, 1.0, np.nan)), "null on some"),
        (lambda d: d.assign(generation=d.generation - 1), "integers >= 0"),
        (lambda d: d.assign(generation=np.where(d.generation == 1, 0.9, d.generation)), "integers >= 0"),
    ],
)
def test_bad_input_raises_as_build_arrays_does(small_outcomes, mutate, message):
    records = mutate(records_from_outcomes(small_outcomes))
    cost = {"m0": 1.0, "m1": 1.0, "m2": 1.0}
    with pytest.raises(ValueError, match=message):
        build_arrays(records, model_cost=cost, dataset="toy")
    with pytest.raises(ValueError, match=message):
        from_cells(_cells(records), model_cost=cost, dataset="toy")


def test_an_empty_dataset_raises(small_outcomes):
    with pytest.raises(ValueError, match="no records"):
        from_cells(_cells(records_from_outcomes(small_outcomes), dataset="d").iloc[:0])
    records = records_from_outcomes(small_outcomes).assign(dataset="d")
    with duckdb.connect() as con:
        con.register("t", records)
        with pytest.raises(ValueError, match="no records"):
            from_cells(oracle_cells(con, "absent", table="t"))


def test_missing_model_cost_raises(small_outcomes):
    with pytest.raises(ValueError, match="no per-model cost for models \\['m2'\\]"):
        from_cells(_cells(records_from_outcomes(small_outcomes)), model_cost={"m0": 1.0, "m1": 1.0})


def test_per_generation_estimators_refuse_aggregates(synthetic_records):
    cells = from_cells(_cells(synthetic_records))
    for name in ("split_sample", "pgm"):
        with pytest.raises(ValueError, match="per-generation"):
            ESTIMATORS[name](cells)


def test_the_floor_reads_the_same_cells(synthetic_records):
    with duckdb.connect() as con:
        con.register("t", synthetic_records.assign(dataset="d"))
        floor = cell_floor(con, "d", table="t")
        cells = oracle_cells(con, "d", table="t")
    # the floor names cells by hashes, ours by codes: the same cells as a multiset of (count, successes, cost)
    key = ["rows", "successes", "cost"]
    floor = pd.DataFrame(floor)[key].sort_values(key, ignore_index=True)
    cells = cells[key].sort_values(key, ignore_index=True)
    np.testing.assert_array_equal(floor["successes"], cells["successes"])
    np.testing.assert_array_equal(floor["rows"], cells["rows"])
