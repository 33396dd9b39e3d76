"""One dataset's extract of raw.query_records built in DuckDB (issue 45): the rows never cross into pandas.

`records_stager` stages the rows `compass.ingest.extracts.own_columns` and the sort of datasets/records select:
the schema columns that hold a value for the dataset (key columns always), then its extra columns sorted by name,
ordered by split, query_id, model_id, generation (nulls first, as pandas' `na_position="first"`); its content hash
is the extract's data version. `publish_records_view` publishes it without a second copy of the rows:
datasets.query_records is a view of raw.query_records' stored ranges, each dataset read at the version of
raw.query_records its extract last published (a pin in datasets.query_records_versions), so a refresh of
raw.query_records does not change a dataset's extract until datasets/records[d] runs. `cost_rows` is what
`extracts.dataset_prices` reads of the rows: one per model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import dagster as dg
import duckdb
import pandas as pd

from compass.ingest.schemas import RAW_TABLES
from resources.publish import published_result
from resources.query_ingest import configure
from resources.warehouse import RANGE_COLUMNS, RANGED_PINS, STAMP_COLUMNS, Warehouse, ranged_tables, relation_version

SCHEMA = RAW_TABLES["query_records"]
ORDER = ("split", "query_id", "model_id", "generation")
EXTRACT = "datasets.query_records"
RAW = "raw.query_records"
PINS, PINNED_SEQ, _ = RANGED_PINS[RAW]
# full-copy history tables of the layout before ranged history (dropped by `ensure_stored_once`)
OLD_HISTORY = ("history.raw_query_records", "history.datasets_query_records")


def own_columns(con: duckdb.DuckDBPyConnection, dataset: str, table: str = "raw.query_records") -> list[str]:
    """`extracts.own_columns` counted in one scan of the dataset's rows (ValueError when it has none)."""
    columns = [c for (c, *_) in con.execute(f"describe {table}").fetchall() if c not in STAMP_COLUMNS]
    counts = con.execute(f"select count(*), " + ", ".join(f'count("{c}")' for c in columns)
                         + f" from {table} where dataset = ?", [dataset]).fetchone()
    if counts[0] == 0:
        raise ValueError(f"dataset {dataset!r}: no rows in {table}")
    kept = [c for c, n in zip(columns, counts[1:]) if c in SCHEMA.key or n > 0]
    return [c for c in SCHEMA.column_names if c in kept] + sorted(c for c in kept if c not in SCHEMA.column_names)


def records_stager(dataset: str) -> Callable[[duckdb.DuckDBPyConnection], str]:
    """For `publish_records_view`: the dataset's own columns and rows in datasets/records' order, as a view."""
    def stage(con: duckdb.DuckDBPyConnection) -> str:
        cols = ", ".join(f'"{c}"' for c in own_columns(con, dataset))
        order = ", ".join(f'"{c}" nulls first' for c in ORDER)
        literal = "'" + dataset.replace("'", "''") + "'"
        con.execute(f"create or replace temp view dataset_extract as select {cols} from raw.query_records "
                    f"where dataset = {literal} order by {order}")
        return "dataset_extract"
    return stage


def cost_rows(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """One row per model of the dataset: model_id, and cost_usd null when one of its records lacks a cost (what
    `extracts.dataset_prices` reads of the records)."""
    with wh.connect(read_only=True) as con:
        columns = {c for (c, *_) in con.execute("describe raw.query_records").fetchall()}
        known = "count(cost_usd) = count(*)" if "cost_usd" in columns else "false"
        rows = con.execute(f"select model_id, case when {known} then 0.0 end as cost_usd from raw.query_records "
                           f"where dataset = ? group by model_id order by model_id", [dataset]).df()
    if rows.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in raw.query_records")
    return rows


def publish_records_view(context: dg.AssetExecutionContext, wh: Warehouse, dataset: str,
                         metadata: Mapping[str, object] | None = None) -> dg.MaterializeResult:
    """datasets/records[dataset] stored once (issue 45): the extract's data version is the content hash of its rows
    (`records_stager`), and publishing pins the dataset to raw.query_records' live version in PINS; the view
    datasets.query_records reads each pinned dataset's rows from raw.query_records' ranges. An unchanged version
    moves the pin to the live version (the same rows) and reports `unchanged`."""
    refreshed_at = pd.Timestamp.now(tz="UTC").floor("s").tz_localize(None)
    rows_table, versions = ranged_tables(RAW)
    with wh.connect() as con:
        configure(con, wh.path.with_name(wh.path.name + ".spill"))
        ensure_stored_once(wh, con)
        relation = records_stager(dataset)(con)
        version = relation_version(con, relation)
        rows = con.execute(f"select count(*) from {relation}").fetchone()[0]
        preview = con.execute(f"select * from {relation} limit 10").df()
        live_seq = con.execute(f"select max(seq) from {versions} where scope = '[]'").fetchone()[0]
        con.execute("begin transaction")
        try:
            _create_pins(con)
            con.execute(f"delete from {PINS} where dataset not in (select distinct dataset from {RAW})")  # gone
            pinned = con.execute(f"select data_version from {PINS} where dataset = ?", [dataset]).fetchall()
            unchanged = bool(pinned) and pinned[0][0] == version
            if unchanged:
                con.execute(f"update {PINS} set {PINNED_SEQ} = ? where dataset = ?", [live_seq, dataset])
            else:
                con.execute(f"delete from {PINS} where dataset = ?", [dataset])
                con.execute(f"insert into {PINS} values (?, ?, ?, ?, ?)",
                            [dataset, live_seq, version, context.run.run_id, refreshed_at])
            _records_view(con, rows_table)
            wh.changed(con, EXTRACT, PINS)  # exported to a stage (resources.stage) when the warehouse publishes to one
            con.execute("commit")
        except Exception:
            con.execute("rollback")
            raise
        con.execute("checkpoint")
        if not unchanged:
            context.log.info(f"wrote {EXTRACT} ({rows} rows of {RAW} version {live_seq}, read in place)")
    return published_result(EXTRACT, rows, unchanged, preview, version, metadata)


def _create_pins(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("create schema if not exists datasets")
    con.execute(f"create table if not exists {PINS} (dataset varchar, {PINNED_SEQ} bigint, data_version varchar, "
                f"run_id varchar, refreshed_at timestamp)")


def _table_type(con: duckdb.DuckDBPyConnection, table: str) -> str | None:
    schema, name = table.split(".")
    kind = con.execute("select table_type from information_schema.tables where table_catalog = current_database() "
                       "and table_schema = ? and table_name = ?", [schema, name]).fetchall()
    return kind[0][0] if kind else None


def ensure_stored_once(wh: Warehouse, con: duckdb.DuckDBPyConnection) -> None:
    """Convert a warehouse written before issue 45's single copy, in one transaction (idempotent; the caller holds
    the write lock): a base table raw.query_records becomes a new version of the ranges (the layout of 692a596
    also loses its stored row_hash) and a view; every dataset of a base table datasets.query_records is pinned to
    that version with its stored data_version before the table is dropped (so no dataset leaves the view before
    its own extract runs again); the full-copy history tables go."""
    con.execute("begin transaction")
    try:
        if _table_type(con, RAW) == "BASE TABLE":
            stamped = "data_version" in {c for (c, *_) in con.execute(f"describe {RAW}").fetchall()}
            version = con.execute(f"select any_value(data_version) from {RAW}").fetchone()[0] if stamped else None
            wh.write_relation(con, RAW, RAW, None, version or relation_version(con, RAW))
        if _table_type(con, EXTRACT) == "BASE TABLE":
            _create_pins(con)
            live_seq = con.execute(f"select max(seq) from {ranged_tables(RAW)[1]} where scope = '[]'").fetchone()[0]
            con.execute(f"insert into {PINS} select dataset, ?, any_value(data_version), any_value(run_id), "
                        f"any_value(refreshed_at) from {EXTRACT} where dataset in (select distinct dataset from {RAW}) "
                        f"and dataset not in (select dataset from {PINS}) group by dataset", [live_seq])
            con.execute(f"drop table {EXTRACT}")
            _records_view(con, ranged_tables(RAW)[0])
        for table in OLD_HISTORY:
            con.execute(f"drop table if exists {table}")
        con.execute("commit")
    except Exception:
        con.execute("rollback")
        raise


def _records_view(con: duckdb.DuckDBPyConnection, rows_table: str) -> None:
    """datasets.query_records: each pinned dataset's rows of raw.query_records at its pinned seq, stamped with its
    extract's version (in no order: `read_records` sorts one dataset's rows, not every read the whole view)."""
    con.execute(f"create or replace view {EXTRACT} as select r.* exclude ({', '.join(RANGE_COLUMNS)}), "
                f"p.data_version, p.run_id, p.refreshed_at from {rows_table} r join {PINS} p on r.dataset = p.dataset "
                f"where r.scope = '[]' and r.valid_from <= p.{PINNED_SEQ} "
                f"and coalesce(r.valid_to, p.{PINNED_SEQ} + 1) > p.{PINNED_SEQ}")


def read_records(con: duckdb.DuckDBPyConnection, dataset: str, exclude: tuple[str, ...] = ()) -> pd.DataFrame:
    """One dataset's extract as datasets/records published it: its own columns (`own_columns` of its rows in
    datasets.query_records, the view's other datasets' columns left out), in the extract's order; empty when it
    has none."""
    try:
        cols = [c for c in own_columns(con, dataset, EXTRACT) if c not in exclude]
    except (ValueError, duckdb.CatalogException):
        return pd.DataFrame()
    order = ", ".join(f'"{c}" nulls first' for c in ORDER)
    return con.execute(f"select {', '.join(chr(34) + c + chr(34) for c in cols)} from {EXTRACT} where dataset = ? "
                       f"order by {order}", [dataset]).df()
