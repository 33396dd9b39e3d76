"""Upgrading a warehouse to issue 45's single copy (`ensure_stored_once`), and retention per dataset.

The old layouts are built with SQL mirroring what the old code wrote (checked against a warehouse built with
`git archive 692a596`'s resources/warehouse.py: the same tables, columns and types): in 692a596 raw.query_records and
datasets.query_records are base tables and history.raw_query_records_rows stores a row_hash; before cee2a97
history.raw_query_records and history.datasets_query_records are full copies of every version."""

import logging
from types import SimpleNamespace

import pandas as pd
import pytest

from resources import warehouse as warehouse_module
from resources.query_extract import publish_records_view, read_records, records_stager
from resources.warehouse import Warehouse
from tests.resources.test_query_extract import RAW

CONTEXT = SimpleNamespace(run=SimpleNamespace(run_id="r2"), log=logging.getLogger("test"))


def _old_warehouse(path, layout: str) -> tuple[Warehouse, dict[str, pd.DataFrame]]:
    """A warehouse as the old code left it after a refresh: raw.query_records and each dataset's extract stored as
    base tables; returns each dataset's extract as it was."""
    wh = Warehouse(path)
    extracts = {}
    with wh.connect() as con:
        con.execute("create schema raw; create schema datasets; create schema history")
        con.register("raw_frame", RAW.assign(data_version="raw-v1"))
        con.execute("create table raw.query_records as select * exclude (refreshed_at), "
                    "refreshed_at::timestamp_s as refreshed_at from raw_frame")
        for k, dataset in enumerate(("d", "other")):
            extracts[dataset] = con.execute(f"select * from {records_stager(dataset)(con)}").df()
            con.register(f"extract_{k}", extracts[dataset].assign(data_version=f"x{k}", run_id="r1",
                                                                  refreshed_at=pd.Timestamp("2026-01-02")))
        # publish_staged added the second extract's missing columns at the end
        con.execute("create table datasets.query_records as select * from extract_0 union all by name "
                    "select * from extract_1")
        own = ", ".join(f'"{c}"' for c in RAW.columns if c not in ("data_version", "run_id", "refreshed_at"))
        if layout == "692a596":  # ranged history with a stored hash; the tables still copies
            con.execute(f"create table history.raw_query_records_rows as select {own}, hash({own})::ubigint as "
                        f"row_hash, 1::bigint as valid_from, null::bigint as valid_to, '[]' as scope "
                        f"from raw.query_records")
            con.execute("create table history.raw_query_records_versions as select 1::bigint as seq, "
                        "'raw-v1' as data_version, 'r1' as run_id, timestamp '2026-01-01' as refreshed_at, "
                        "'[]' as scope")
        else:  # before ranged history: full copies of every version
            con.execute("create table history.raw_query_records as select * from raw.query_records")
            con.execute("create table history.datasets_query_records as select * from datasets.query_records")
    return wh, extracts


@pytest.mark.parametrize("layout", ["692a596", "pre-ranged"])
def test_an_old_warehouse_is_converted_when_the_first_extract_publishes(tmp_path, layout):
    """Unchanged inputs: raw.query_records is not written again, only datasets/records[d] runs. No error, every
    dataset still visible with its rows, no row_hash, both tables views, the full-copy history gone."""
    wh, extracts = _old_warehouse(tmp_path / "w.duckdb", layout)
    publish_records_view(CONTEXT, wh, "d")
    publish_records_view(CONTEXT, wh, "d")  # idempotent
    tables = set(wh.query("select schema_name || '.' || table_name as t from duckdb_tables()")["t"])
    assert tables == {"history.raw_query_records_rows", "history.raw_query_records_versions",
                      "datasets.query_records_versions"}
    assert "row_hash" not in wh.query("select * from datasets.query_records limit 0").columns
    assert "row_hash" not in wh.query("select * from history.raw_query_records_rows limit 0").columns
    with wh.connect(read_only=True) as con:
        for dataset, extract in extracts.items():  # `other`'s extract has not run: still there, pinned
            pd.testing.assert_frame_equal(read_records(con, dataset), extract, check_dtype=False)
    pins = wh.query("select dataset, data_version from datasets.query_records_versions order by 1")
    assert pins["dataset"].tolist() == ["d", "other"] and pins["data_version"].iloc[1] == "x1"


def _daily(day: int) -> pd.DataFrame:
    """A version of raw.query_records: dataset `a` changes every row every day, `stale` never changes."""
    return pd.DataFrame({"dataset": ["a"] * 10 + ["stale"] * 10, "split": "test", "query_id": [f"q{i}" for i in range(20)],
                         "model_id": "m", "generation": 0, "correct": [float(day)] * 10 + [1.0] * 10,
                         "data_version": f"v{day}", "run_id": "r", "refreshed_at": pd.Timestamp("2026-01-01")})


def test_retention_is_per_dataset_and_pins_of_gone_datasets_go(tmp_path, monkeypatch):
    """A dataset pinned at the first version (its extract never runs again) holds back only its own rows: `a`'s
    closed rows beyond the retention go (8 versions kept 90 rows when the oldest pin held every dataset's); a dataset
    gone from raw loses its pin, so its rows go too."""
    monkeypatch.setattr(warehouse_module, "HISTORY_VERSIONS_KEPT", 2)
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("raw.query_records", _daily(0), None, history_version="v0")
    publish_records_view(CONTEXT, wh, "stale")
    for day in range(1, 8):
        wh.replace("raw.query_records", _daily(day), None, history_version=f"v{day}")
        publish_records_view(CONTEXT, wh, "a")
    stored = wh.query("select dataset, count(*) as n from history.raw_query_records_rows group by 1 order by 1")
    assert stored["n"].tolist() == [10 * 2, 10]  # `a`: the 2 kept versions; `stale`: its pinned rows once

    wh.replace("raw.query_records", _daily(8).query("dataset == 'a'"), None, history_version="v8")  # stale gone
    publish_records_view(CONTEXT, wh, "a")
    assert wh.query("select dataset from datasets.query_records_versions")["dataset"].tolist() == ["a"]
    wh.replace("raw.query_records", _daily(9).query("dataset == 'a'"), None, history_version="v9")
    wh.replace("raw.query_records", _daily(10).query("dataset == 'a'"), None, history_version="v10")
    assert set(wh.query("select distinct dataset from history.raw_query_records_rows")["dataset"]) == {"a"}
