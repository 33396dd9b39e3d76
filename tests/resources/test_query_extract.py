"""resources.query_extract: the dataset extract built in DuckDB holds the rows, columns and order the pandas
extract gives (`compass.ingest.extracts.own_columns` + datasets/records' sort), and the per-model cost rows give
the prices the full records give (issue 45)."""

import numpy as np
import pandas as pd

from compass.ingest.extracts import dataset_prices, own_columns
from resources.query_extract import cost_rows, records_stager
from resources.warehouse import Warehouse

N = 40
RNG = np.random.default_rng(7)
RAW = pd.DataFrame({
    "dataset": np.where(np.arange(N) % 4 == 0, "other", "d"),
    "split": pd.Series(RNG.choice(["test", "train", None], N), dtype="string"),
    "query_id": pd.Series([f"q{i % 7}" for i in range(N)], dtype="string"),
    "model_id": pd.Series(RNG.choice(["b-model", "a-model", "é-model"], N), dtype="string"),
    "generation": pd.Series(np.arange(N) // 7, dtype="Int64"),
    "correct": RNG.integers(0, 2, N).astype(float),
    "score": np.nan,  # empty for every dataset: dropped
    "cost_usd": np.where(np.arange(N) == 5, np.nan, 0.01),  # one record of d without a cost
    "latency_ms": np.where(np.arange(N) % 4 == 0, 3.0, np.nan),  # only the other dataset has latencies
    "zeta": "x", "alpha": 1.0,  # extras, sorted by name in the extract
    "data_version": "v", "run_id": "r", "refreshed_at": pd.Timestamp("2026-01-01"),
})


def _warehouse(tmp_path) -> Warehouse:
    wh = Warehouse(tmp_path / "w.duckdb")
    with wh.connect() as con:
        con.execute("create schema raw")
        con.register("raw_frame", RAW.sample(frac=1.0, random_state=1))
        con.execute("create table raw.query_records as select * from raw_frame")
    return wh


def test_the_extract_is_the_pandas_extract(tmp_path):
    wh = _warehouse(tmp_path)
    with wh.connect() as con:
        staged = con.execute(f"select * from {records_stager('d')(con)}").df()
        raw = con.execute("select * from raw.query_records where dataset = 'd'").df()
    expected = own_columns(raw.drop(columns=["data_version", "run_id", "refreshed_at"]))
    expected = expected.sort_values(["split", "query_id", "model_id", "generation"], na_position="first")
    pd.testing.assert_frame_equal(staged, expected.reset_index(drop=True))
    assert "score" not in staged and "latency_ms" not in staged and list(staged.columns[-2:]) == ["alpha", "zeta"]


def test_cost_rows_give_the_prices_the_records_give(tmp_path):
    wh = _warehouse(tmp_path)
    costs = pd.DataFrame({"model_id": ["a-model", "b-model", "é-model", "c-model"], "provider": "p",
                          "input_usd_per_mtok": 1.0, "output_usd_per_mtok": 2.0, "blended_usd_per_mtok": [1.0, 2, 3, 4]})
    for dataset in ("d", "other"):
        records = RAW[RAW["dataset"] == dataset]
        pd.testing.assert_frame_equal(dataset_prices(cost_rows(wh, dataset), costs), dataset_prices(records, costs))
    assert len(dataset_prices(cost_rows(wh, "d"), costs)) > 0  # d lacks one cost: it is priced
    assert dataset_prices(cost_rows(wh, "other"), costs).empty


def _context():
    import logging
    from types import SimpleNamespace
    return SimpleNamespace(run=SimpleNamespace(run_id="r"), log=logging.getLogger("test"))


def _stored_tables(wh: Warehouse) -> set[str]:
    return set(wh.query("select schema_name || '.' || table_name as t from duckdb_tables()")["t"])


def test_the_extract_is_stored_once_and_reads_the_version_it_pinned(tmp_path, monkeypatch):
    """datasets.query_records is a view of raw.query_records' ranges (issue 45): it reads back the staged extract,
    stores no row twice, keeps a dataset at the version its extract published until the extract runs again, and
    retention never drops a pinned version's rows."""
    from resources import warehouse as warehouse_module
    from resources.query_extract import publish_records_view, read_records

    monkeypatch.setattr(warehouse_module, "HISTORY_VERSIONS_KEPT", 1)
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("raw.query_records", RAW.sample(frac=1.0, random_state=1), None, history_version="v1")
    for dataset in ("d", "other"):
        publish_records_view(_context(), wh, dataset)
    with wh.connect() as con:
        expected = con.execute(f"select * from {records_stager('d')(con)}").df()
        published = read_records(con, "d")
    pd.testing.assert_frame_equal(published, expected)
    assert {"raw.query_records", "datasets.query_records"}.isdisjoint(_stored_tables(wh))  # views, not copies
    assert wh.query("select count(*) as n from history.raw_query_records_rows")["n"].iloc[0] == N

    grown = pd.concat([RAW, RAW.iloc[[1]].assign(query_id="q-new"), RAW.iloc[[0]].assign(query_id="q-new")])
    wh.replace("raw.query_records", grown, None, history_version="v2")  # one new row in each dataset
    with wh.connect() as con:
        assert read_records(con, "d").equals(published)  # still the version its extract published
    publish_records_view(_context(), wh, "d")  # only d's extract runs; `other` stays pinned at v1
    wh.replace("raw.query_records", grown.iloc[1:], None, history_version="v3")  # drops a row of `other`
    with wh.connect() as con:
        assert len(read_records(con, "d")) == len(published) + 1
        counts = con.execute("select dataset, count(*) from datasets.query_records group by 1 order by 1").fetchall()
    assert counts == [("d", len(published) + 1), ("other", N - len(published))]  # retention kept other's v1 rows
    assert wh.query("select count(*) as n from history.raw_query_records_rows")["n"].iloc[0] == N + 2
