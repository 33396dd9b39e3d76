"""resources.oracle_extract + compass.oracle.dense (issue 45): the oracle prepared from dense tensors DuckDB fills is
the `Prepared` today's row path gives (`coded_records` + `prepare`), bit for bit, on records with every rule at
work: prompt ids reused across the train and test splits, a model dropped by the 95 % coverage rule, a kept model
at exactly 95 % of the best coverage missing two prompts (dropped as incomplete), a prompt only the dropped model
answered, a single-generation model among 3-generation ones, an unpriced model,
costs priced from tokens (cost_usd null) or given per record, categories with nulls, and another dataset's rows in
the same table. Records that break a rule give the rows' error (or, where the rule drops them, their result) from
the dense path itself."""

import tracemalloc

import duckdb
import numpy as np
import pandas as pd
import pytest

from compass.ingest.extracts import PRICE_COLUMNS
from compass.oracle.dense import DenseRecords, prepare_dense
from compass.oracle.prepare import prepare
from resources.oracle_extract import dense_records
from resources.query_frames import coded_records
from resources.readers import ORACLE_COLUMNS
from tests.resources.test_query_frames import _assert_same_prepared

MODELS = {"a": 3, "b": 3, "c": 3, "d": 1, "e": 3, "f": 3}  # generations; d: short G
PRICED = ("a", "b", "c", "d", "e")  # f has no price: the `all` set gets placeholder costs, `priced` the rest


def _records(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for split in ("train", "test"):
        for q in range(21):  # the same ids in both splits
            for model, g in MODELS.items():
                if (q == 20 and (split, model) != ("train", "e")) or (model == "e" and 15 <= q < 20) or (
                        model == "f" and q == 7):
                    continue  # train/q20: e's alone; e answers 31 prompts (dropped), f 38 = 95 % of a's 40 (kept;
                    # its 2 missing prompts are dropped, train/q20 is not counted: only a dropped model answered it)
                for gen in range(g):
                    rows.append(("s", split, f"q{q}", model, gen, float(rng.integers(0, 2)),
                                 float(rng.integers(50, 500)), float(rng.integers(10, 300)),
                                 None if q % 4 == 0 else f"cat{(q + (model == 'b')) % 3}"))
    frame = pd.DataFrame(rows, columns=["dataset", "split", "query_id", "model_id", "generation", "correct",
                                        "tokens_in", "tokens_out", "category"])
    frame["cost_usd"] = np.nan
    return frame


def _prices() -> pd.DataFrame:
    rng = np.random.default_rng(9)
    return pd.DataFrame({"model_id": list(PRICED), "provider": "p", "input_usd_per_mtok": rng.random(len(PRICED)),
                         "output_usd_per_mtok": rng.random(len(PRICED)),
                         "blended_usd_per_mtok": rng.random(len(PRICED))})[PRICE_COLUMNS]


@pytest.fixture(scope="module")
def con():
    """Three datasets in one table, rows shuffled: s (cost from tokens), s_cost (cost_usd on every record), s_blend
    (neither: blended prices), and rows of another dataset that must not leak in."""
    s = _records()
    rng = np.random.default_rng(4)
    frames = [s, s.assign(dataset="s_cost", cost_usd=rng.random(len(s)) / 100),
              s.drop(columns=["tokens_out"]).assign(dataset="s_blend"),
              s.iloc[:200].assign(dataset="other", correct=1.0, split="train")]
    table = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=1)
    connection = duckdb.connect()
    connection.register("frame", table)
    connection.execute("create table t as select * from frame")
    yield connection
    connection.close()


def _rows_path(con, dataset: str, table: str = "t", prices: pd.DataFrame | None = None):
    """Today's reader: the coded frame (tokens when a cost is missing), then `prepare` (with `_prices` unless
    `prices`)."""
    records = coded_records(con, dataset, ORACLE_COLUMNS + ("tokens_in", "tokens_out"), table=table, prompt_key=True)
    return prepare(records, _prices() if prices is None else prices, dataset)


@pytest.mark.parametrize("dataset,basis", [("s", "tokens_x_price_usd"), ("s_cost", "per_query_usd"),
                                           ("s_blend", "blended_price_usd_per_mtok")])
def test_the_dense_path_prepares_what_the_rows_prepare(con, dataset, basis):
    before = _rows_path(con, dataset)
    after = prepare_dense(dense_records(con, dataset, table="t"), _prices(), dataset)
    _assert_same_prepared(after, before)
    # every rule was at work
    assert after.cost_basis == basis and after.meta["low_coverage_models_dropped"] == ["e"]
    assert after.meta["short_g_models_dropped"] == ["d"] and after.meta["prompts_dropped_incomplete"] == 2
    assert after.full.n_prompts == 38  # 20 ids x 2 splits, less f's missing two
    sets = {"s_cost": {"all": 4}}.get(dataset, {"all": 4, "priced": 3})
    assert after.meta["model_sets"] == sets and after.meta["unpriced_models"] == ([] if dataset == "s_cost" else ["f"])
    for a, b in zip([after.full] + [s.arrays for s in after.sets], [before.full] + [s.arrays for s in before.sets]):
        for field in ("successes", "trials", "outcomes", "gen_cost"):  # numpy's sums round by the memory layout
            assert getattr(a, field).strides == getattr(b, field).strides, field


def _small(seed: int = 1, queries: int = 6) -> pd.DataFrame:
    """`queries` ids in train and test x 3 priced models, one generation, a category varying by model and
    generation."""
    rng = np.random.default_rng(seed)
    rows = [("t", split, f"q{q}", model, 0, float(rng.integers(0, 2)), float(rng.integers(1, 99)),
             float(rng.integers(1, 99)), f"{rng.choice(['x', 'Y', 'é'])}-{model}", float(rng.random()))
            for q in range(queries) for split in ("train", "test") for model in ("a", "b", "c")]
    return pd.DataFrame(rows, columns=["dataset", "split", "query_id", "model_id", "generation", "correct",
                                       "tokens_in", "tokens_out", "category", "cost_usd"])


def _table(frame: pd.DataFrame, *updates: str) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.register("frame", frame.sample(frac=1.0, random_state=2))
    connection.execute("create table t as select * from frame")
    for update in updates:
        connection.execute(update)
    return connection


SMALL = {  # a case -> (the records, SQL run on them): the dense path must prepare what the rows prepare
    # a NULL split keys the prompt "/q1", as `prompt_keys` does
    "null_split": (_small(), "update t set split = null where query_id = 'q1' and split = 'train'"),
    # topics: the first model's generation-0 category, not a later model's or generation's
    "topics": (pd.concat([_small(), _small(2).assign(generation=1, category="later")]), "select 1"),
    # a NaN cost_usd (an Arrow/Parquet ingest keeps NaN; pandas gives NULL) is missing: priced from tokens
    "nan_cost": (_small(), "update t set cost_usd = 'nan'::double"),
    # a prompt of NULL- and empty-split records: the topic is its first NULL-split record's (b's), as the rows order
    "null_and_empty_split_topics": (_small(), "update t set split = null where query_id = 'q1' and split = 'train' "
                                    "and model_id = 'b'; update t set split = '' where query_id = 'q1' and split = "
                                    "'train'"),
}


@pytest.mark.parametrize("case", sorted(SMALL))
def test_small_cases_prepare_as_the_rows(case):
    frame, update = SMALL[case]
    con = _table(frame, update)
    dense = dense_records(con, "t", table="t")
    assert dense is not None and (dense.cost is None) == (case == "nan_cost")  # no tensor of NaN costs
    after = prepare_dense(dense, _prices(), "t")
    _assert_same_prepared(after, _rows_path(con, "t"))
    if case == "nan_cost":
        assert after.cost_basis == "tokens_x_price_usd"
    if case == "topics":
        assert set(after.full.topics) <= {"x-a", "Y-a", "é-a"}


def _outcome(prepare_path):
    """("error", its message) or ("prepared", the `Prepared`) of a preparation."""
    try:
        return "prepared", prepare_path()
    except ValueError as exc:
        return "error", str(exc)


_A_Q1 = "model_id = 'a' and query_id = 'q1' and split = 'train'"
_INSERT = "insert into t select * replace ({}) from t where " + _A_Q1
RULES = {  # a rule `prepare` enforces -> SQL breaking it on `_small`'s records (or on records it drops)
    "no_model": ["update t set model_id = null where query_id = 'q2' and split = 'test' and model_id = 'b'"],
    "no_complete_prompt": ["delete from t where not ((model_id = 'a' and query_id in ('q0', 'q1')) or (model_id = 'b'"
                           " and query_id in ('q2', 'q3')) or (model_id = 'c' and query_id in ('q4', 'q5')))"],
    "no_complete_prompt_sparse": ["delete from t where not ((model_id = 'a' and query_id in ('q0', 'q1')) or "
                                  "(model_id = 'b' and query_id in ('q2', 'q3')) or (model_id = 'c' and query_id in "
                                  "('q4', 'q5')))", _INSERT.format("9 as generation")],
    "partial_cost": [f"update t set cost_usd = null where {_A_Q1}"],
    "negative_cost": ["update t set cost_usd = -1 where model_id = 'c' and query_id = 'q3'"],
    "null_generation": [f"update t set generation = null where {_A_Q1}"],
    "null_correct": [f"update t set correct = null where {_A_Q1}"],
    "null_query_id": [_INSERT.format("null as query_id, 1 as generation")],
    "not_binary": [f"update t set correct = 2 where {_A_Q1}"],
    "fractional_generation": ["alter table t alter generation type double", f"update t set generation = 0.5 where "
                              + _A_Q1],
    "negative_generation": [f"update t set generation = -1 where {_A_Q1}"],
    "duplicate": [_INSERT.format("0 as generation")],
    "uneven_generations": [_INSERT.format("1 as generation")],
    "not_numbered": ["update t set generation = 1 where model_id = 'b'"],
    "one_model_left": ["delete from t where model_id <> 'a' and query_id <> 'q0'"],
    "one_longest_g": ["insert into t select * replace (1 as generation) from t where model_id = 'a'"],
    # records a rule drops: the same `Prepared` as the rows
    "bad_records_of_a_dropped_model": ["insert into t select * replace ('z' as model_id, null as generation, 7 as "
                                       "correct) from t where model_id = 'a' and query_id in ('q1', 'q2')"],
    "sparse_dropped_model": ["insert into t select * replace ('z' as model_id, 40 as generation) from t where "
                             "model_id = 'a' and query_id = 'q1'"],
    "null_and_empty_split": [f"update t set split = null where {_A_Q1}",  # one prompt key "/q1" (`prompt_keys`)
                             "update t set split = '' where query_id = 'q1' and split = 'train'"],
    # prep45 review: NaN is no NULL in DuckDB, but the rows read it as missing
    "nan_correct": [f"update t set correct = 'nan'::double where {_A_Q1}"],
    "nan_generation": ["alter table t alter generation type double",
                       f"update t set generation = 'nan'::double where {_A_Q1}"],
    # a record of no query id is costed with its model's (`record_costs` runs before `build_arrays`' null rule)
    "null_query_id_without_cost": [_INSERT.format("null as query_id, 1 as generation, null as cost_usd")],
    "null_query_id_negative_cost": [_INSERT.format("null as query_id, 1 as generation, -1.0 as cost_usd")],
    # records no slot holds: their cost and 0/1 rules, a cost on one of two in a cell
    "unslotted_without_cost": [_INSERT.format("null as generation, null as cost_usd")],
    "unslotted_cost_beside_none": ["update t set cost_usd = null", f"update t set generation = null where {_A_Q1}",
                                   _INSERT.format("null as generation, 0.5 as cost_usd")],
    "unslotted_not_binary": ["alter table t alter generation type double",
                             f"update t set generation = 0.5, correct = 2 where {_A_Q1}"],
    # two records of one slot: the overwritten one's correctness is named too, in any scan order
    "duplicate_not_binary": [f"update t set correct = 2 where {_A_Q1}", _INSERT.format("0.0 as correct")],
    "duplicates_not_binary": [f"update t set correct = 2 where {_A_Q1}", _INSERT.format("3.0 as correct")],
    # a stray large generation in a kept cell (its slots: `test_a_stray_generation_makes_no_slots`)
    "stray_generation": [_INSERT.format("100000 as generation")],
}
WIDE = {  # rules on 20 ids in train and test: one missing record drops its prompt, not its model (39 of 40 > 95 %)
    "null_query_id_and_a_dropped_prompt": [_INSERT.format("null as query_id"),
                                           "delete from t where model_id = 'b' and query_id = 'q2' and split = 'test'"],
}
PREPARED = {"bad_records_of_a_dropped_model", "sparse_dropped_model", "null_and_empty_split",
            "null_query_id_and_a_dropped_prompt"}  # the rule drops the offending records


@pytest.mark.parametrize("rule", sorted(RULES) + sorted(WIDE))
def test_a_broken_rule_gives_the_rows_error_or_result_from_the_dense_path(rule):
    """Issue 45, rule 1: at 10^8 records the row path runs out of memory, so the dense path itself gives its error
    or result (no fallback: `dense_records` returns `DenseRecords`)."""
    con = _table(_small(), *RULES[rule]) if rule in RULES else _table(_small(queries=20), *WIDE[rule])
    dense = _outcome(lambda: prepare_dense(dense_records(con, "t", table="t"), _prices(), "t"))
    rows = _outcome(lambda: _rows_path(con, "t"))
    assert dense[0] == rows[0] == ("prepared" if rule in PREPARED else "error"), (dense, rows)
    if rows[0] == "error":
        assert dense[1] == rows[1]
    else:
        _assert_same_prepared(dense[1], rows[1])


def test_a_stray_generation_makes_no_slots():
    """prep45 review 1: one record of generation 10^5 in a kept cell made 36 x 10^5 slots (65 MB for 37 records;
    10^7 prompts x 10 models: ~800 GB); the slots stop at the G of the models keeping the generation rule."""
    con = _table(_small(), RULES["stray_generation"][0])
    dense = dense_records(con, "t", table="t")
    assert dense.correct.size <= 36 and dense.generations is not None


def _peak_bytes_per_slot(tokens: bool, missing_cell: bool, n: int = 20_000) -> float:
    """tracemalloc's peak while `prepare_dense` runs, inputs included, per (prompt, model) slot (5 models, G = 1)."""
    rng = np.random.default_rng(0)
    tracemalloc.start()
    try:
        correct = rng.integers(0, 2, (n, 5, 1)).astype(float)
        correct[7, 3, 0] = np.nan if missing_cell else correct[7, 3, 0]  # prompt 7 dropped: every tensor cut
        cost = None if tokens else rng.random((n, 5, 1))
        counts = (rng.integers(1, 500, (n, 5, 1)).astype(float), rng.integers(1, 500, (n, 5, 1)).astype(float))
        records = DenseRecords(np.array([f"p{i}" for i in range(n)], dtype=object),
                               np.array(list("abcde"), dtype=object), correct, cost, counts if tokens else None,
                               None, None, None, np.arange(n), n * 5 - missing_cell)
        del correct, cost, counts
        tracemalloc.reset_peak()
        prepare_dense(records, _prices(), "m")
        return tracemalloc.get_traced_memory()[1] / (n * 5)
    finally:
        tracemalloc.stop()


def test_a_missing_cell_or_token_prices_cost_no_memory_over_the_benchmark_case():
    """rev45 finding 4: the uncut tensors stayed alive beside their cut copies, token prices made 3 full temporaries
    (main: 65, 81, 81, 89 B per slot; now 65 in each case)."""
    bench = _peak_bytes_per_slot(tokens=False, missing_cell=False)
    for tokens, missing_cell in ((False, True), (True, False), (True, True)):
        assert _peak_bytes_per_slot(tokens, missing_cell) < 1.05 * bench, (tokens, missing_cell)
