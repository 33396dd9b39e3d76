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

import itertools
import warnings

import duckdb
import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from compass.cascades.study import prepare_records
from compass.oracle.dense import prepare_dense
from resources.cascade_matrix import NoRows, cascade_matrix
from resources.oracle_extract import dense_records
from resources.query_frames import coded_records
from tests.resources.test_cascade_matrix import LONG
from tests.resources.test_oracle_extract import _outcome, _prices, _rows_path
from tests.resources.test_query_frames import _assert_same_prepared

MODELS = ("a", "b", "c", "d", "e", "f")  # a..e priced (`_prices`), f not
PERTURBATIONS = ("null_generation", "null_correct", "missing_record", "duplicate_record", "nan_cost",
                 "not_binary", "null_query_id", "negative_generation", "fractional_generation", "stray_generation",
                 "no_generation_no_cost", "sparse_models", "empty_split")

_KINDS = itertools.count()  # Hypothesis' seeds repeat (one kind drawn 9 times in 23, six never): kinds in turn


@st.composite
def record_sets(draw) -> pd.DataFrame:
    """One dataset "p" of records, valid unless one or two perturbations (35 % of the sets) break or bend a rule."""
    n_models = draw(st.integers(2, 4))
    models = sorted(draw(st.permutations(MODELS))[:n_models])
    n_queries = 20 if draw(st.integers(0, 3)) == 0 else draw(st.integers(2, 6))
    g = draw(st.integers(1, 2))
    short = draw(st.booleans()) and n_models >= 3 and g == 2  # one single-generation model among G = 2 ones
    costed, split, category = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    rows = []
    for s in ("train", "test") if split else (None,):
        for q in range(n_queries):
            for j, model in enumerate(models):
                for generation in range(1 if short and j == 0 else g):
                    rows.append({"dataset": "p", "split": s, "query_id": f"q{q}", "model_id": model,
                                 "generation": generation, "correct": float(rng.integers(0, 2)),
                                 "confidence": float(np.log(0.05 + 0.9 * rng.random())) if generation == 0 else None,
                                 "cost_usd": float(rng.random()) / 100 if costed else None,
                                 "latency_ms": 100 + 50 * rng.random(), "tokens_in": float(rng.integers(10, 500)),
                                 "tokens_out": float(rng.integers(10, 500)),
                                 "category": f"c{q % 3}" if category else None})
    frame = pd.DataFrame(rows)
    frame["cost_usd"] = frame["cost_usd"].astype(float)
    # NULL splits and perturbations decided by a generator seeded with every draw: Hypothesis' own draws lean to
    # small values and dwell on a neighbourhood (5 or 21 perturbed sets of 40 by the seed, one kind 13 times)
    pick = np.random.default_rng([seed, n_models, n_queries, g, short, costed, split, category, *map(ord, models)])
    if split and pick.random() < 0.3:  # valid: one train query's records without a split (oracle key "/q", train)
        frame.loc[frame["query_id"].eq(f"q{pick.integers(n_queries)}") & frame["split"].eq("train"), "split"] = None
    chance = pick.random()
    for _ in range(2 if chance < 0.1 else 1 if chance < 0.35 else 0):  # the kinds in turn: each one drawn
        frame = _perturbed(frame, PERTURBATIONS[next(_KINDS) % len(PERTURBATIONS)], pick)
    return frame.sample(frac=1.0, random_state=int(rng.integers(0, 1000)))  # stored in no order


def _perturbed(frame: pd.DataFrame, perturbation: str, pick: np.random.Generator) -> pd.DataFrame:
    """`frame` with one record broken (or added, or taken away) as `perturbation` says."""
    frame = frame.reset_index(drop=True)
    i = int(pick.integers(len(frame)))
    row = frame.loc[[i]]
    added = {"null_query_id": {"query_id": None, "generation": int(pick.integers(0, 3))},
             "stray_generation": {"generation": 1000}, "no_generation_no_cost": {"generation": None, "cost_usd": None}}
    if perturbation in added:
        with warnings.catch_warnings():  # pandas' notice about the all-NA columns of the added row
            warnings.simplefilter("ignore", FutureWarning)
            frame.loc[len(frame)] = {**frame.loc[i].to_dict(), **added[perturbation]}
        return frame
    if perturbation == "missing_record":
        return frame.drop(index=i)
    if perturbation == "duplicate_record":
        return pd.concat([frame, row], ignore_index=True)
    if perturbation == "sparse_models":  # a few models answering one prompt each
        strays = frame.loc[pick.integers(len(frame), size=int(pick.integers(6, 11)))]
        return pd.concat([frame, strays.assign(model_id=[f"z{k}" for k in range(len(strays))], generation=0)],
                         ignore_index=True)
    if perturbation == "empty_split":
        frame.loc[frame["query_id"].eq(row["query_id"].iloc[0]) & frame["split"].eq("train"), "split"] = ""
        return frame
    column, value = {"null_generation": ("generation", None), "null_correct": ("correct", None),
                     "nan_cost": ("cost_usd", np.nan), "not_binary": ("correct", 2.0),
                     "negative_generation": ("generation", -1.0), "fractional_generation": ("generation", 0.5)
                     }[perturbation]
    frame[column] = frame[column].astype(object if value is None else float)
    frame.loc[i, column] = value
    return frame


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
    accepted, con = [], duckdb.connect(config={"threads": 1})  # one connection: a new one per example costs more

    @settings(max_examples=40, deadline=None, derandomize=True, database=None)
    @given(record_sets())
    def check(frame):
        accepted.append(_compare(con, frame))

    check()
    # power: both paths prepare more than half the sets (measured: 24 of 40, 60 %; 35 % of the sets perturbed, most
    # perturbations break a rule)
    assert len(accepted) >= 40 and np.mean(accepted) > 0.5, np.mean(accepted)
