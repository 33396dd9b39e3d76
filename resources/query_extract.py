"""One dataset's extract of raw.query_records built in DuckDB (issue 45): the rows never cross into pandas.

`records_stager` gives `publish.publish_staged` the rows `compass.ingest.extracts.own_columns` and the sort of
datasets/records select: the schema columns that hold a value for the dataset (key columns always), then its
extra columns sorted by name, ordered by split, query_id, model_id, generation (nulls first, as pandas'
`na_position="first"`). `cost_rows` is what `extracts.dataset_prices` reads of the rows: one per model.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import pandas as pd

from compass.ingest.schemas import RAW_TABLES
from resources.warehouse import STAMP_COLUMNS, Warehouse

SCHEMA = RAW_TABLES["query_records"]
ORDER = ("split", "query_id", "model_id", "generation")


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
    """For `publish.publish_staged`: the dataset's own columns and rows in datasets/records' order, as a view."""
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
