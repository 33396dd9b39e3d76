"""resources.query_frames and the readers built on it (issue 45): the oracle and cascade preparations read
datasets.query_records as int32 codes into shared label strings, yet get the frame, the `Prepared` arrays and the
cascade records the pandas read (`Warehouse.read` + `.df()`) gives: the same values, dtypes, rows and row order, on
a frame with nulls, non-ASCII ids and ids reused across splits, and on embedded datasets."""

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pytest

from compass.cascades.data import check_rows
from compass.cascades.study import prepare_records
from compass.cascades.wide import WideRecords
from compass.ingest.extracts import cheapest_prices, no_prices
from compass.oracle.dense import prepare_dense
from compass.oracle.prepare import prepare
from compass.oracle.records import build_arrays
from resources import prepared_store, readers
from resources.cascade_matrix import cascade_matrix
from resources.oracle_extract import dense_records
from resources.query_extract import publish_records_view
from resources.query_frames import coded_records
from resources.warehouse import Warehouse
from tests.paths import ROOT

EMBEDDED = ("matharena_aime_2025_i", "truthfulqa")  # G = 4 without a split; a train/test split reusing ids


def _tricky() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 60
    return pd.DataFrame({
        "dataset": np.where(np.arange(n) < 48, "d", "other"),
        "split": pd.Series(np.where(np.arange(n) % 12 == 0, None, np.where(np.arange(n) % 2, "train", "test")),
                           dtype=object),
        "query_id": [f"q{i % 6}" if i % 5 else f"Ω{i % 3}" for i in range(n)],  # reused across splits, non-ASCII
        "model_id": np.where(np.arange(n) % 3 == 0, "b-model", np.where(np.arange(n) % 3 == 1, "a-model", "é-model")),
        "generation": np.arange(n) // 6,
        "correct": rng.integers(0, 2, n).astype(float),
        "confidence": np.where(np.arange(n) % 7 == 0, np.nan, -rng.random(n)),
        "category": np.where(np.arange(n) % 4 == 0, None, "cat"),
        "source": "s",
    })


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Warehouse:
    """Built the way a refresh builds it: raw.query_records written to its ranges, each dataset's extract published
    as the view datasets.query_records (`publish_records_view`), so the readers read the view."""
    wh = Warehouse(tmp_path_factory.mktemp("frames") / "w.duckdb")
    marks = ", ".join(f"'{d}'" for d in EMBEDDED)
    with wh.connect() as con:
        con.register("tricky", _tricky())
        con.execute(f"create temp table incoming as select *, "
                    f"'v1' as data_version, 'r' as run_id, timestamp '2026-01-01' as refreshed_at from ("
                    f"select * from '{ROOT / 'data' / 'query_records.parquet'}' where dataset in ({marks}) "
                    f"union all by name select * from tricky)")
        con.execute("begin transaction")
        wh.write_relation(con, "raw.query_records", "incoming", None, "v1")
        con.execute("commit")
    for dataset in (*EMBEDDED, "d", "other"):
        publish_records_view(SimpleNamespace(run=SimpleNamespace(run_id="r"), log=logging.getLogger("test")), wh,
                             dataset)
    with wh.connect() as con:
        con.register("shuffled", _tricky().sample(frac=1.0, random_state=2))
        con.execute("create table datasets.shuffled as select * from shuffled")
    for dataset in EMBEDDED:
        _publish_prices(wh, dataset, 1.0, "p1")
    return wh


def _publish_prices(wh: Warehouse, dataset: str, usd_per_mtok: float, version: str) -> None:
    """datasets.model_prices of the dataset's models as datasets/prices publishes them (with their data_version)."""
    with wh.connect() as con:
        con.execute("create temp table prices as select distinct dataset, model_id, 'p' as provider, "
                    "?::double as input_usd_per_mtok, 2 * ?::double as output_usd_per_mtok, "
                    "1.5 * ?::double as blended_usd_per_mtok, ? as data_version from datasets.query_records "
                    "where dataset = ?", [usd_per_mtok, usd_per_mtok, usd_per_mtok, version, dataset])
        con.execute("begin transaction")
        wh.write_relation(con, "datasets.model_prices", "prices", {"dataset": dataset}, version)
        con.execute("commit")


def _pandas_read(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """The dataset's rows of the view, every column of it, in the extract's order (the view has none)."""
    return wh.query("select * exclude (data_version, run_id, refreshed_at) from datasets.query_records where dataset "
                    "= ? order by split nulls first, query_id nulls first, model_id nulls first, generation nulls first",
                    [dataset])


def test_the_coded_frame_is_the_pandas_frame(warehouse):
    columns = ["split", "query_id", "model_id", "generation", "correct", "confidence", "category", "absent"]
    old = _pandas_read(warehouse, "d")
    with warehouse.connect(read_only=True) as con:
        new = coded_records(con, "d", columns)
        keyed = coded_records(con, "d", columns, prompt_key=True)
    pd.testing.assert_frame_equal(new, old[columns[:-1]], check_exact=True)
    assert new["query_id"].map(id).nunique() == new["query_id"].nunique()  # one string object per label
    expected = old["split"].fillna("").astype(str) + "/" + old["query_id"]
    assert "split" not in keyed and keyed["query_id"].tolist() == expected.tolist()
    with warehouse.connect(read_only=True) as con:  # stored in another order: read in the extract's
        unsorted = coded_records(con, "d", columns, table="datasets.shuffled")
    pd.testing.assert_frame_equal(unsorted, new, check_exact=True)


@pytest.mark.parametrize("dataset", EMBEDDED)
def test_the_readers_prepare_what_the_pandas_read_prepares(warehouse, dataset):
    old = _pandas_read(warehouse, dataset)
    cascade = prepare_records(old, dataset)
    new_cascade = readers.cascade_records(warehouse, dataset)
    if cascade is None:
        assert new_cascade is None
    else:  # the matrices' long frame (resources.cascade_matrix; its own tests: test_cascade_matrix.py)
        long = new_cascade.long()
        pd.testing.assert_frame_equal(long, cascade[list(long.columns)], check_exact=True)
    before = prepare(old, readers.dataset_prices(warehouse, dataset), dataset)
    _assert_same_prepared(readers.oracle_dataset(warehouse, dataset), before)


def _assert_same_prepared(after, before):
    assert (after.meta, after.cost_basis, [s.name for s in after.sets], [s.cost_known for s in after.sets]) == \
        (before.meta, before.cost_basis, [s.name for s in before.sets], [s.cost_known for s in before.sets])
    pd.testing.assert_series_equal(after.model_cost, before.model_cost, check_exact=True)
    for a, b in [(after.full, before.full)] + [(x.arrays, y.arrays) for x, y in zip(after.sets, before.sets)]:
        for field in ("prompt_ids", "model_ids", "successes", "trials", "outcomes", "gen_cost", "topics", "mean_cost"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None) == (y is None) and (x is None or np.array_equal(x, y, equal_nan=x.dtype.kind == "f"))
            assert x is None or x.dtype == y.dtype, field


def test_a_partition_prepares_once_and_its_assets_share_it(warehouse, monkeypatch):
    """Issue 45: 4 oracle and 9 cascade assets per partition each read and prepared the rows; now the first builds
    (one coded read each) and saves the arrays, the others load them: the same arrays, dtypes and frames."""
    shutil.rmtree(prepared_store.store_dir(warehouse), ignore_errors=True)
    reads = []
    coded, matrix = readers._coded_records, readers._cascade_matrix
    monkeypatch.setattr(readers, "_coded_records", lambda *a, **k: reads.append(a[1]) or coded(*a, **k))
    monkeypatch.setattr(readers, "_cascade_matrix", lambda *a, **k: reads.append(a[1]) or matrix(*a, **k))
    dense = readers.dense_records
    monkeypatch.setattr(readers, "dense_records", lambda *a, **k: reads.append(a[1]) or dense(*a, **k))
    for dataset in EMBEDDED:
        built = [readers.oracle_dataset(warehouse, dataset), readers.cascade_records(warehouse, dataset)]
        first = len(reads)
        for _ in range(2):
            _assert_same_prepared(readers.oracle_dataset(warehouse, dataset), built[0])
            cascade = readers.cascade_records(warehouse, dataset)
            assert (cascade is None) == (built[1] is None)
            if cascade is not None:
                pd.testing.assert_frame_equal(cascade.long(), built[1].long(), check_exact=True)
        assert len(reads) == first  # loaded, not read again (a dataset without confidences included)
    # the first oracle (dense: `oracle_extract`) and cascade reads only
    assert sorted(reads) == sorted([*EMBEDDED, *EMBEDDED])
    assert len(list(prepared_store.store_dir(warehouse).glob("*.npz"))) == 2 * len(EMBEDDED)
    for stored in prepared_store.store_dir(warehouse).glob("oracle-*.npz"):  # `all` stored as a mask of `full`
        with np.load(stored) as arrays:
            assert "set0.keep" in arrays.files and "set0.successes" not in arrays.files


def test_republished_prices_are_prepared_again(warehouse):
    """The oracle's preparation prices token-priced records (matharena has no cost_usd): a new price version must not
    be served the stored preparation of the old prices."""
    dataset = "matharena_aime_2025_i"
    before = readers.oracle_dataset(warehouse, dataset).model_cost
    try:
        _publish_prices(warehouse, dataset, 3.0, "p2")
        after = readers.oracle_dataset(warehouse, dataset).model_cost
        np.testing.assert_allclose(after.to_numpy(), 3.0 * before.to_numpy(), rtol=1e-12)
    finally:
        _publish_prices(warehouse, dataset, 1.0, "p3")
    pd.testing.assert_series_equal(readers.oracle_dataset(warehouse, dataset).model_cost, before, check_exact=True)


def test_an_unversioned_table_is_not_stored(tmp_path, monkeypatch):
    """A table without data_version tells no contents apart: keyed as a constant it would serve stale preparations."""
    wh = Warehouse(tmp_path / "w.duckdb")
    monkeypatch.setattr(wh, "table_exists", lambda t: True)
    monkeypatch.setattr(wh, "data_versions", lambda t, w: ["v1"] if t == prepared_store.PINS else None)
    assert prepared_store._versions(wh, "ds", ("t",)) is None
    assert prepared_store._versions(wh, "ds", ()) == [["v1"]]


def _shared(wh: Warehouse, builds: list, value, encode=lambda v: {"x": np.array([v])}):  # noqa: B008
    return prepared_store.shared(wh, "k", "ds", lambda: builds.append(1) or value, encode, lambda a: int(a["x"][0]))


def test_a_change_to_the_preparing_code_prepares_again(tmp_path, monkeypatch):
    # the hash is of the modules the readers build with, and follows their files
    builders = {prepare, prepare_dense, dense_records, cascade_matrix, WideRecords.long, coded_records, check_rows,
                build_arrays, cheapest_prices, readers.oracle_dataset, prepared_store.encode_frame}
    assert {f.__module__ for f in builders} <= set(prepared_store.PREPARATION_MODULES)
    (tmp_path / "prep_mod.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = prepared_store.code_hash(("prep_mod",))
    (tmp_path / "prep_mod.py").write_text("X = 2\n")
    prepared_store.code_hash.cache_clear()
    assert prepared_store.code_hash(("prep_mod",)) != first
    # and a new hash is a new preparation
    monkeypatch.setattr(prepared_store, "_versions", lambda *a: ["v1"])
    hashes, builds = iter(["a", "a", "b"]), []
    monkeypatch.setattr(prepared_store, "code_hash", lambda: next(hashes))
    assert [_shared(Warehouse(tmp_path / "w.duckdb"), builds, 7) for _ in range(3)] == [7, 7, 7]
    assert len(builds) == 2


def test_a_library_upgrade_prepares_again(tmp_path, monkeypatch):
    """rev45: the arrays are shaped by numpy, DuckDB, pandas and pyarrow (rounding, order, dtypes); a preparation
    stored under one version must not be served under another. The installed versions are read (the metadata
    lookup stubbed, not `library_versions`)."""
    assert {f"numpy=={np.__version__}", f"duckdb=={duckdb.__version__}", f"pandas=={pd.__version__}"} <= \
        set(prepared_store.library_versions())
    monkeypatch.setattr(prepared_store, "_versions", lambda *a: ["v1"])
    installed, builds = prepared_store.importlib.metadata.version, []
    for numpy_version in ("1.26.4", "1.26.4", "2.1.0"):
        monkeypatch.setattr(prepared_store.importlib.metadata, "version",
                            lambda name, v=numpy_version: v if name == "numpy" else installed(name))
        prepared_store.library_versions.cache_clear()
        assert _shared(Warehouse(tmp_path / "w.duckdb"), builds, 7) == 7
    assert len(builds) == 2
    monkeypatch.undo()
    prepared_store.library_versions.cache_clear()


def test_a_damaged_file_is_prepared_again_and_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    wh, builds = Warehouse(tmp_path / "w.duckdb"), []
    monkeypatch.setattr(prepared_store, "_versions", lambda *a: ["v1"])
    _shared(wh, builds, 5)
    (stored,) = prepared_store.store_dir(wh).glob("*.npz")
    stored.write_bytes(stored.read_bytes()[:40])  # truncated
    assert _shared(wh, builds, 5) == 5 and _shared(wh, builds, 5) == 5 and len(builds) == 2
    monkeypatch.setattr(prepared_store, "_versions", lambda *a: ["v2"])
    with pytest.raises(ValueError, match="pickle"):  # an object array is never pickled into the store
        _shared(wh, builds, 5, encode=lambda v: {"x": np.array([object()], dtype=object)})
    assert [f.name for f in prepared_store.store_dir(wh).glob("*.npz")] == [stored.name]


def test_a_frame_with_nulls_and_non_ascii_labels_round_trips(tmp_path, monkeypatch):
    """Through the file: DuckDB gives nullable Int32/Int64/boolean columns when they hold NULLs."""
    frame = _tricky().assign(generation=pd.array([None if i % 9 == 0 else i // 6 for i in range(60)], dtype="Int32"),
                             tokens_in=pd.array(np.arange(60), dtype="Int64"),
                             flag=pd.array([None, True, False] * 20, dtype="boolean"))
    monkeypatch.setattr(prepared_store, "_versions", lambda *a: ["v1"])
    wh = Warehouse(tmp_path / "w.duckdb")
    for _ in range(2):  # built, then loaded
        back = prepared_store.shared(wh, "frame", "d", lambda: frame, prepared_store.encode_frame,
                                     prepared_store.decode_frame)
    pd.testing.assert_frame_equal(back, frame, check_exact=True)
    for odd in (pd.to_datetime(["2026-01-01"]), pd.array(["a", None], dtype="string")):
        with pytest.raises(TypeError, match="cannot be stored"):
            prepared_store.encode_frame(pd.DataFrame({"odd": odd}))


def test_a_new_extract_version_is_prepared_again_and_the_old_file_goes(tmp_path, monkeypatch):
    wh = Warehouse(tmp_path / "w.duckdb")
    versions, builds = iter([["v1"], ["v1"], ["v2"]]), []
    monkeypatch.setattr(prepared_store, "_versions", lambda *a: next(versions))
    for _ in range(3):
        _shared(wh, builds, 1)
    assert len(builds) == 2
    assert [f.name.count("-") for f in prepared_store.store_dir(wh).glob("*.npz")] == [2]


def test_a_dataset_without_rows_names_the_asset(warehouse):
    with pytest.raises(ValueError, match="no rows in datasets.query_records; materialize datasets/records"):
        readers.cascade_records(warehouse, "nope")


def test_reads_leave_the_memory_limit_as_it_was(warehouse):
    """Restoring the printed limit lowered it a step per read (18.8 → 18.7 → 18.6 GiB)."""
    with warehouse.connect(read_only=True) as con:
        before = con.execute("select current_setting('memory_limit')").fetchone()[0]
        for _ in range(3):
            coded_records(con, "d", ["query_id", "correct"])
        assert con.execute("select current_setting('memory_limit')").fetchone()[0] == before


def test_the_sort_spills_beside_the_warehouse_and_the_folder_goes_at_exit(warehouse):
    """Not under /tmp (which may be memory), and not left behind by the process."""
    script = ("import sys; from resources.query_frames import coded_records; from resources.warehouse import Warehouse\n"
              "with Warehouse(sys.argv[1]).connect(read_only=True) as con:\n"
              "    coded_records(con, 'd', ['query_id'])\n"
              "    print(con.execute(\"select current_setting('temp_directory')\").fetchone()[0])")
    out = subprocess.run([sys.executable, "-c", script, str(warehouse.path)], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    spill = Path(out.stdout.strip())
    assert spill.parent == warehouse.path.with_name(warehouse.path.name + ".spill")
    assert not spill.exists()


def test_a_model_set_without_the_short_g_models_is_stored_as_a_mask_and_round_trips():
    rows = [(f"q{i}", m, g, float((i + g + j) % 2), 0.01 * (j + 1))
            for i in range(6) for j, (m, gs) in enumerate([("a", 2), ("b", 2), ("c", 1)]) for g in range(gs)]
    prep = prepare(pd.DataFrame(rows, columns=["query_id", "model_id", "generation", "correct", "cost_usd"]),
                   no_prices(), "mixed")
    assert list(prep.full.model_ids) == ["a", "b", "c"] and list(prep.sets[0].arrays.model_ids) == ["a", "b"]
    arrays = prepared_store.encode_prepared(prep)
    assert arrays["set0.keep"].tolist() == [True, True, False]
    _assert_same_prepared(prepared_store.decode_prepared(arrays), prep)
