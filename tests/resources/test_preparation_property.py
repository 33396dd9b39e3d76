"""Issue 45, differential property: on generated record sets, mostly valid (a few models answering every query of
a train/test split with ids reused across the splits (2–6 ids, or 20: a missing record then drops its prompt, not its
model), at times one train query's records without a split, G generations, confidences, costs or token counts,
categories) and now and then with one or two perturbations (a NULL generation or correctness, a missing or
duplicated record, a NaN cost, a non-binary correctness; a record of no query id, a negative, fractional or stray
large generation, a record of no generation and no cost, models answering one prompt each (a sparse table), one
query's train records with an empty split), the oracle prepared from dense tensors
(`oracle_extract.dense_records` + `prepare_dense`) and the cascade's (query x model) matrices (`cascade_matrix`)
equal what the row path (`coded_records` + `prepare` / `prepare_records`) gives: the same arrays or the same error.
The share of sets both paths accept is measured, so the property is not vacuous (rev45: nearly every generated set
was rejected by both)."""

import duckdb
import numpy as np
import pandas as pd
import os

from hypothesis import given, seed, settings

from compass.cascades.study import prepare_records
from compass.oracle.dense import prepare_dense
from resources.cascade_matrix import NoRows, cascade_matrix
from resources.oracle_extract import dense_records
from resources.query_frames import coded_records
from tests.resources.test_cascade_matrix import LONG
from tests.resources.test_oracle_extract import _outcome, _prices, _rows_path
from tests.resources.record_sets import PERTURBATIONS, one_of_each, record_sets, with_examples
from tests.resources.test_query_frames import _assert_same_prepared

SEED = int(os.environ.get("COMPASS_PROPERTY_SEED", "45"))  # fixed: the measured share below is this seed's


def _compare(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> bool:
    """Both paths of both preparations on `frame` (as table t of `con`): equal (asserted); True when the rows
    prepared both."""
    con.register("frame", frame)
    con.execute("create or replace table t as select * from frame")
    con.unregister("frame")
    oracle = _outcome(lambda: prepare_dense(dense_records(con, "p", table="t"), _prices(), "p"))
    oracle_rows = _outcome(lambda: _rows_path(con, "p"))
    assert oracle[0] == oracle_rows[0], (oracle, oracle_rows)
    if oracle[0] == "error":
        assert oracle[1] == oracle_rows[1]
    else:
        _assert_same_prepared(oracle[1], oracle_rows[1])
    cascade = _outcome(lambda: _dataset_error(lambda: cascade_matrix(con, "p", table="t")))
    cascade_rows = _outcome(lambda: prepare_records(coded_records(con, "p", LONG, table="t"), "p"))
    assert cascade[0] == cascade_rows[0], (cascade, cascade_rows)
    if cascade[0] == "error":
        assert cascade[1] == cascade_rows[1]
    else:
        new, old = cascade[1].long(), cascade_rows[1]
        if frame["split"].isna().any() and frame["split"].notna().any():  # the long path's NULL-split (train) rows
            keys = ["split", "query_id", "model_id"]  # come first, the matrices' among the train rows (wide.py)
            new, old = new.sort_values(keys, ignore_index=True), old.sort_values(keys, ignore_index=True)
        pd.testing.assert_frame_equal(new, old[list(new.columns)], check_exact=True)
    return oracle[0] == cascade[0] == "prepared"


def _dataset_error(build):
    """`readers._cascade_matrix`'s message: the dataset named before `cascade_matrix`'s."""
    try:
        return build()
    except (ValueError, NoRows) as exc:
        raise ValueError(f"dataset 'p': {exc}") from None


def test_the_dense_and_matrix_preparations_equal_the_rows_on_generated_records():
    con = duckdb.connect(config={"threads": 1})  # one connection: a new one per example costs more
    explicit, kinds, accepted = one_of_each(PERTURBATIONS, 0), set(), []

    @seed(SEED)
    @settings(max_examples=40, deadline=None, database=None)
    @given(record_sets())
    def check(frame):
        kinds.update(frame.attrs["perturbations"])
        both = _compare(con, frame)
        if not any(frame is e for e in explicit):
            accepted.append(both)

    with_examples(check, explicit)()
    assert kinds == set(PERTURBATIONS), set(PERTURBATIONS) - kinds  # every kind met (one explicit example each)
    # power: both paths prepare nearly half the generated sets or more (measured: 29 of 40 with seed 45, 22-33 of 40
    # over seeds 1-5 and 45, so the bound holds for any of them; 35 % of the sets perturbed, most break a rule)
    assert len(accepted) == 40 and np.mean(accepted) > 0.45, np.mean(accepted)
