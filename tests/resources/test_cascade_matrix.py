"""resources.cascade_matrix (issue 45): the cascade preparation pivots datasets.query_records to (query x model)
matrices in DuckDB, yet gives the records, the errors and the calibration and marginal tables the long-frame path
(`coded_records` + `prepare_records`) gives: on a synthetic dataset with missing cells, two generations, query ids
reused across splits and NULL confidences in the later generation, and on two embedded datasets."""

import logging
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pytest

from compass.cascades import study as cs
from compass.cascades.data import mean_costs, pivot, validate_records, validate_wide
from compass.cascades.marginals import fit_marginals, marginal_gof_table
from compass.cascades.study import prepare_records
from resources import prepared_store, readers
from resources.cascade_matrix import cascade_matrix
from resources.query_extract import publish_records_view
from resources.query_frames import coded_records
from resources.warehouse import Warehouse
from tests.paths import ROOT

EMBEDDED = ("truthfulqa",)  # a train/test split reusing ids, nine models
LONG = ("split", "query_id", "model_id", "generation", "correct", "confidence", "cost_usd", "latency_ms",
        "tokens_in", "tokens_out", "category")  # what the long-frame path read


def _synthetic(name: str = "syn", seed: int = 3) -> pd.DataFrame:
    """3 models x 40 queries; ids q0..q19 in train AND test (reused), generation 1 repeating generation 0 with NULL
    confidences (dropped: generation 0 only), missing cells (test: a model skips every 7th query; train: each model
    skips a different query, so all answer 19 of 20), integer token counts (stored as float32 losslessly)."""
    rng = np.random.default_rng(seed)
    rows = []
    for split in ("train", "test"):
        for q in range(20):
            for j, model in enumerate(("m-c", "m-a", "m-é")):  # not in sort order
                if (split == "test" and q % 7 == j) or (split == "train" and q == 5 + j):
                    continue
                for generation in (0, 1):
                    ok = float(rng.random() < 0.3 + 0.2 * j)
                    rows.append({"dataset": name, "split": split, "query_id": f"q{q}", "model_id": model,
                                 "generation": generation, "correct": ok,
                                 "confidence": np.log(0.05 + 0.9 * rng.random()) if generation == 0 else None,
                                 "cost_usd": 1e-4 * (j + 1) * (1 + rng.random()), "latency_ms": 100 + 37 * rng.random(),
                                 "tokens_in": 50.0, "tokens_out": float(rng.integers(10, 400)), "category": "c",
                                 "source": "s"})
    return pd.DataFrame(rows).sample(frac=1.0, random_state=seed)  # stored in no order


BROKEN = {  # a fault -> the synthetic frame with it
    "duplicate": lambda f: pd.concat([f, f[f["generation"] == 0].head(1)]),
    "positive": lambda f: f.assign(confidence=np.where(f["query_id"].eq("q3") & f["generation"].eq(0), 0.5,
                                                       f["confidence"])),
    "nan_confidence": lambda f: f.assign(confidence=np.where(f["query_id"].eq("q4") & f["model_id"].eq("m-a"),
                                                             np.nan, f["confidence"])),
    "label": lambda f: f.assign(correct=np.where(f["query_id"].eq("q2"), 2.0, f["correct"])),
    "no_train": lambda f: f[~(f["model_id"].eq("m-c") & f["split"].eq("train"))],
    "counts": lambda f: f[~(f["model_id"].eq("m-a") & f["query_id"].eq("q9") & f["split"].eq("train"))],
    "constant": lambda f: f.assign(confidence=np.where(f["model_id"].eq("m-é") & f["generation"].eq(0), -0.25,
                                                       f["confidence"])),
    "one_model": lambda f: f[f["model_id"].eq("m-a")],
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Warehouse:
    """raw.query_records with the synthetic datasets and two embedded ones, each extract published as a refresh
    publishes it (the view datasets.query_records)."""
    wh = Warehouse(tmp_path_factory.mktemp("cascade_matrix") / "w.duckdb")
    frames = [_synthetic()] + [fault(_synthetic(f"broken_{name}")) for name, fault in BROKEN.items()]
    marks = ", ".join(f"'{d}'" for d in EMBEDDED)
    with wh.connect() as con:
        con.register("synthetic", pd.concat(frames, ignore_index=True))
        con.execute(f"create temp table incoming as select *, "
                    f"'v1' as data_version, 'r' as run_id, timestamp '2026-01-01' as refreshed_at from ("
                    f"select * from '{ROOT / 'data' / 'query_records.parquet'}' where dataset in ({marks}) "
                    f"union all by name select * from synthetic)")
        con.execute("begin transaction")
        wh.write_relation(con, "raw.query_records", "incoming", None, "v1")
        con.execute("commit")
    for dataset in ("syn", *EMBEDDED, *(f"broken_{n}" for n in BROKEN)):
        publish_records_view(SimpleNamespace(run=SimpleNamespace(run_id="r"), log=logging.getLogger("test")), wh,
                             dataset)
    return wh


def _long_path(wh: Warehouse, dataset: str) -> pd.DataFrame | None:
    """The preparation before issue 45's matrices: every coded row into pandas, then `prepare_records`."""
    with wh.connect(read_only=True) as con:
        return prepare_records(coded_records(con, dataset, LONG), dataset)


def _wide(wh: Warehouse, dataset: str):
    with wh.connect(read_only=True) as con:
        return cascade_matrix(con, dataset)


@pytest.mark.parametrize("dataset", ("syn", *EMBEDDED))
def test_the_matrices_are_the_long_records_and_give_the_same_tables(warehouse, dataset):
    old, wide = _long_path(warehouse, dataset), _wide(warehouse, dataset)
    new = wide.long()
    pd.testing.assert_frame_equal(new, old[list(new.columns)], check_exact=True)  # rows, order, values, dtypes
    assert set(old.columns) - set(new.columns) == {"generation", "category"}  # read by no cascade table
    if dataset == "syn":
        assert wide.present.sum() == len(old) < wide.present.size  # missing cells stay missing
        assert wide.values["tokens_out"].dtype == np.float32 and wide.values["confidence"].dtype == np.float64
    pd.testing.assert_frame_equal(cs.calibration_table(wide, dataset), cs.calibration_table(old, dataset),
                                  check_exact=True)
    cal_wide, cal_old = cs.calibrated_records(wide, dataset)[0], cs.calibrated_records(old, dataset)[0]
    np.testing.assert_array_equal(cal_wide.long(["p_correct"])["p_correct"], cal_old["p_correct"])
    marginals = fit_marginals(cal_wide)
    assert marginals == fit_marginals(cal_old)
    split = "test" if cs.has_test(wide) else "train"
    pd.testing.assert_frame_equal(marginal_gof_table(cal_wide, marginals, n_boot=3, split=split),
                                  marginal_gof_table(cal_old, marginals, n_boot=3, split=split), check_exact=True)


@pytest.mark.parametrize("fault", sorted(BROKEN))
def test_a_broken_dataset_fails_with_the_long_paths_message(warehouse, fault):
    dataset = f"broken_{fault}"
    with pytest.raises(ValueError) as old:
        _long_path(warehouse, dataset)
    with pytest.raises(ValueError) as new:
        readers.cascade_records(warehouse, dataset)
    assert str(new.value) == str(old.value)


def test_no_confidence_is_none_and_the_store_gives_the_matrices_back(warehouse, tmp_path, monkeypatch):
    with warehouse.connect() as con:
        con.execute("create table datasets.silent as select * replace (null::double as confidence) "
                    "from datasets.query_records where dataset = 'syn'")
        assert cascade_matrix(con, "syn", table="datasets.silent") is None
    wide = _wide(warehouse, "syn")
    monkeypatch.setattr(prepared_store, "_versions", lambda *a: ["v1"])
    builds = []
    for _ in range(2):  # built, then loaded
        back = prepared_store.shared(Warehouse(tmp_path / "w.duckdb"), "cascade", "syn",
                                     lambda: builds.append(1) or wide, prepared_store.encode_wide,
                                     prepared_store.decode_wide)
    assert len(builds) == 1
    pd.testing.assert_frame_equal(back.long(), wide.long(), check_exact=True)
    assert {c: v.dtype for c, v in back.values.items()} == {c: v.dtype for c, v in wide.values.items()}


@pytest.fixture(scope="module")
def syn_both(warehouse):
    """The synthetic dataset's records and calibrated records, long and as matrices."""
    old, wide = _long_path(warehouse, "syn"), _wide(warehouse, "syn")
    return old, wide, cs.calibrated_records(old, "syn")[0], cs.calibrated_records(wide, "syn")[0]


def test_the_study_reads_the_matrices_as_the_long_frame(syn_both):
    """What copulas, curves and protocols read (pivots per split and model order, mean costs, chains, training
    samples, training-set sizes) and the copula tables, the same off the matrices as off the long frame."""
    old, wide, cal_old, cal_wide = syn_both
    with pytest.raises(ValueError, match="duplicate"):  # the ids are reused across splits
        pivot(wide, "correct")
    for split in ("train", "test"):
        for models in (None, ["m-é", "m-a", "m-c"], ["m-c", "m-é"]):
            for column, o, w in (("p_correct", cal_old, cal_wide), ("correct", old, wide), ("cost_usd", old, wide)):
                pd.testing.assert_frame_equal(pivot(w, column, split=split, models=models),
                                              pivot(o, column, split=split, models=models), check_exact=True)
        assert mean_costs(wide, split=split) == mean_costs(old, split=split)
    assert cs.chains_for(wide) == cs.chains_for(old) == {"by_cost": ["m-c", "m-a", "m-é"]}
    marginals = fit_marginals(cal_old)
    for name, table in cs.copula_tables(old, cal_old, marginals, cs.LIGHT).items():
        pd.testing.assert_frame_equal(cs.copula_tables(wide, cal_wide, marginals, cs.LIGHT)[name], table,
                                      check_exact=True)
    samples_w, _ = cs.training_samples(wide, cal_wide, "syn", ["m-a", "m-c", "m-é"], (0, 1))
    samples_o, _ = cs.training_samples(old, cal_old, "syn", ["m-a", "m-c", "m-é"], (0, 1))
    assert [s[0] for s in samples_w] == [s[0] for s in samples_o] == ["full", "low_seed0", "low_seed1"]
    for (_, w, _), (_, o, _) in zip(samples_w, samples_o):
        long = w.long(["correct", "p_correct"])
        pd.testing.assert_frame_equal(long, o[list(long.columns)].reset_index(drop=True), check_exact=True)
        assert cs.train_queries(w, ["m-a", "m-c"]) == cs.train_queries(o, ["m-a", "m-c"])


@pytest.mark.parametrize("train_ids", (["q5"], ["q6", "q7"], ["q0", "q1", "q5"], ["q0", "q1"], []))
def test_a_training_subsample_is_checked_as_the_long_frame_is(syn_both, train_ids):
    """`validate_wide` of a subsample (test rows and the train rows of `train_ids`) raises `validate_records`'
    error (a model without train rows, unequal train counts, constant train confidences) or none."""
    old, wide, _, _ = syn_both
    sub_old = old[(old["split"] != "train") | old["query_id"].isin(train_ids)]
    sub_wide = wide.keep_rows(~wide.split_rows("train") | np.isin(wide.query_ids, train_ids))
    try:
        validate_records(sub_old)
    except ValueError as exc:
        with pytest.raises(ValueError) as new:
            validate_wide(sub_wide, "syn")
        assert str(new.value) == f"dataset 'syn': {exc}"
    else:
        validate_wide(sub_wide, "syn")


def test_economics_two_model_cascades_and_fail_fast_read_the_matrices_as_the_long_frame(syn_both):
    """Chs. 3-4's tables, the checks their assets skip on and the per-model frames of the two-model cascades, the
    same off the matrices as off the long frame."""
    old, wide, cal_old, cal_wide = syn_both
    assert not cs.lacks(wide, ["cost_usd", "latency_ms", "tokens_out"])
    assert cs.lacks(wide.with_values(latency_ms=np.where(wide.present, wide.values["latency_ms"], 0.0)
                                     + np.where(wide.split_rows("test")[:, None], np.nan, 0.0)), ["latency_ms"])
    for name, table in cs.economics_tables(old).items():
        pd.testing.assert_frame_equal(cs.economics_tables(wide)[name], table, check_exact=True)
    assert cs.failfast_pair(cal_wide) == cs.failfast_pair(cal_old)
    for model in wide.models:
        assert cs.distinct_values(cal_wide, model, "tokens_out") == cs.distinct_values(cal_old, model, "tokens_out")
    pd.testing.assert_frame_equal(cs.real_failfast(cal_wide), cs.real_failfast(cal_old), check_exact=True)
    for model in wide.models:  # what the two-model cascades read of each model (the tables: the parity script)
        for split in ("train", "test"):
            pd.testing.assert_frame_equal(cs._pair_frame(cal_wide, model, split), cs._pair_frame(cal_old, model, split),
                                          check_exact=True)


def _small_cascade(fault: str) -> pd.DataFrame:
    """Two splits x 6 queries (q10..q15) x 3 models, generation 0, with one fault `_long_path`'s preparation accepts."""
    frame = _synthetic("d")
    frame = frame[frame["generation"].eq(0) & frame["query_id"].isin([f"q{q}" for q in range(10, 16)])].copy()
    if fault == "null_split":  # a missing split is train
        frame.loc[frame["split"].eq("train") & frame["query_id"].isin(["q11", "q14"]), "split"] = None
    elif fault == "null_generation":  # a missing generation is 0
        frame["generation"] = frame["generation"].astype(object).where(frame["model_id"].ne("m-a"), None)
    elif fault == "long_id":  # one 4,000-character (8,000-byte) id
        frame["query_id"] = frame["query_id"].replace("q12", "é" * 4000)
    elif fault == "huge_confidence":  # a log-probability below -FLT_MAX stays float64
        frame.loc[frame.index[3], "confidence"] = -1e40
    return frame


@pytest.mark.parametrize("fault", ["null_split", "null_generation", "huge_confidence", "long_id"])
def test_small_faults_give_the_long_records(fault):
    con = duckdb.connect()
    con.register("frame", _small_cascade(fault))
    con.execute("create table t as select * from frame")
    keys = ["split", "query_id", "model_id"]  # a NULL split's rows come first in the long path (wide.py)
    old = prepare_records(coded_records(con, "d", LONG, table="t"), "d").sort_values(keys, ignore_index=True)
    new = cascade_matrix(con, "d", table="t").long().sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(new, old[list(new.columns)], check_exact=True)
    assert len(new) == len(_small_cascade(fault))
    wide = cascade_matrix(con, "d", table="t")
    assert wide.query_ids.nbytes <= 8 * len(wide.query_ids)  # a reference per row, not the longest id's width
    back = prepared_store.decode_wide(prepared_store.encode_wide(wide))
    assert back.query_ids.tolist() == wide.query_ids.tolist() and back.query_ids.nbytes <= 8 * len(back.query_ids)


def test_a_record_without_a_model_names_its_query():
    con = duckdb.connect()
    con.register("frame", _small_cascade("none").assign(model_id=lambda f: f["model_id"].where(
        ~(f["query_id"].eq("q13") & f["split"].eq("test") & f["model_id"].eq("m-a")), None)))
    con.execute("create table t as select * from frame")
    with pytest.raises(ValueError, match="^the record of split 'test', query_id 'q13' has no model_id$"):
        cascade_matrix(con, "d", table="t")
