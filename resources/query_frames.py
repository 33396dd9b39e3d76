"""One dataset's per-query records read out of DuckDB as the frame the oracle and cascade preparations take, without
a Python string per row (issue 45).

`Warehouse.read(...).df()` makes one Python string per row and string column (≈ 60 bytes each: at 10 M rows the
cascade's frame took 7.6 GB). Here each string column crosses as int32 codes into its distinct values, numbered in
DuckDB's own sort order, and becomes an object column whose cells point at those few (or, for query ids, N) label
strings: 8 bytes a row. The numbers cross as `.df()` gives them (same dtypes). Rows come in datasets/records' order
(split, query_id, model_id, generation, nulls first), sorted on the codes, which sort as the strings do. Only the
columns asked for are read (those the table lacks are left out, as the extract leaves out empty columns).

`prompt_key=True` gives the oracle's prompt key (`compass.oracle.prepare.prompt_keys`: split + "/" + query_id when
the dataset has a split) computed in DuckDB, as `query_id`, and leaves `split` out, so that `prompt_keys` is a no-op.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

ORDER = ("split", "query_id", "model_id", "generation")  # datasets/records' order (resources.query_extract.ORDER)
# DuckDB's own memory while it sorts the rows: the peak of a 10 M-row read is 1.7 GB with 400 MB, 2.5 GB with 1 GB
MEMORY_LIMIT = "400MB"
CHUNK_VECTORS = 64  # rows fetched at a time, in DuckDB vectors of 2,048


def coded_records(con: duckdb.DuckDBPyConnection, dataset: str, columns: Sequence[str],
                  table: str = "datasets.query_records", prompt_key: bool = False) -> pd.DataFrame:
    """`dataset`'s rows of `table`, the `columns` it has, strings as shared label objects (module docstring)."""
    types = {c: t for (c, t, *_) in con.execute(f"describe {table}").fetchall()}
    wanted = [c for c in columns if c in types]
    strings = [c for c in wanted if types[c] == "VARCHAR"]
    keyed = prompt_key and "split" in types and con.execute(
        f"select count(split) > 0 from {table} where dataset = $dataset", {"dataset": dataset}).fetchone()[0]
    tag = uuid.uuid4().hex[:12]
    labels = {c: f"_labels_{c}_{tag}" for c in {*strings, *(c for c in ORDER if types.get(c) == "VARCHAR")}}
    key = "coalesce(split, '') || '/' || query_id" if keyed else "query_id"
    if prompt_key:
        labels["_prompt"] = f"_labels_prompt_{tag}"
    try:
        for col, name in labels.items():
            value = key if col == "_prompt" else f'"{col}"'
            con.execute(f"create temp table {name} as select v, (row_number() over (order by v) - 1)::integer "
                        f"as code from (select distinct {value} as v from {table} where dataset = $dataset) "
                        "where v is not null", {"dataset": dataset})
        joins, select = [], []
        for col, name in labels.items():
            value = key if col == "_prompt" else f't."{col}"'
            joins.append(f"left join {name} on {name}.v = {value}")
        for col in wanted:
            if prompt_key and col == "split":
                continue
            source = "_prompt" if prompt_key and col == "query_id" else col
            select.append(f'coalesce({labels[source]}.code, -1) as "{col}"' if source in labels else f't."{col}"')
        order = [f"{labels[c]}.code nulls first" if c in labels else f't."{c}" nulls first'
                 for c in ORDER if c in types]
        limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
        _spill_to(con)
        con.execute(f"set memory_limit = '{MEMORY_LIMIT}'")  # the sort spills past it
        try:
            result = con.execute(f"select {', '.join(select)} from {table} t {' '.join(joins)} "
                                 f"where t.dataset = $dataset order by {', '.join(order)}", {"dataset": dataset})
            columns = _columns(result)
            del result
        finally:
            _restore_memory_limit(con, limit)
        for col in list(columns):
            source = "_prompt" if prompt_key and col == "query_id" else col
            if source in labels and col in strings:
                values = con.execute(f"select v from {labels[source]} order by code").fetchnumpy()["v"]
                columns[col] = _decode(columns[col].to_numpy(), np.asarray(values, dtype=object))
    finally:
        for name in labels.values():
            con.execute(f"drop table if exists {name}")
    return pd.DataFrame(columns, copy=False)


def _spill_to(con: duckdb.DuckDBPyConnection) -> None:
    """The connection spills to this process' own folder beside the warehouse file (not the system's temporary one,
    which may be memory: tmpfs), removed when the process exits; DuckDB cannot switch folders once it has spilled,
    so it is set once per connection."""
    path = con.execute("select path from duckdb_databases() where database_name = current_database()").fetchone()[0]
    base = Path(path).with_name(Path(path).name + ".spill") if path else Path(tempfile.gettempdir())
    spill = base / f"compass-sort-{os.getpid()}"
    if con.execute("select current_setting('temp_directory')").fetchone()[0] != str(spill):
        spill.mkdir(parents=True, exist_ok=True)
        atexit.register(shutil.rmtree, spill, ignore_errors=True)
        con.execute(f"set temp_directory = '{spill}'")


def _restore_memory_limit(con: duckdb.DuckDBPyConnection, limit: str) -> None:
    """Back to the limit printed as `limit`: DuckDB's default exactly (`reset`: setting the printed, truncated string
    back would lower it a step per read, 18.8 → 18.7 GiB), a limit the caller set to its printed precision."""
    con.execute("reset memory_limit")
    if con.execute("select current_setting('memory_limit')").fetchone()[0] != limit:
        con.execute(f"set memory_limit = '{limit}'")


def _columns(result: duckdb.DuckDBPyConnection) -> dict[str, pd.Series]:
    """The result's columns, fetched in chunks and joined column by column: the rows are never held twice (a whole
    `.df()` holds DuckDB's result and the frame at once: 3.1 GB at 10 M rows)."""
    chunks: dict[str, list[pd.Series]] = {}
    while not (chunk := result.fetch_df_chunk(CHUNK_VECTORS)).empty:
        for col in chunk.columns:
            chunks.setdefault(col, []).append(chunk[col])
    out = {}
    for col in list(chunks):
        parts = chunks.pop(col)
        out[col] = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
        del parts
    return out


def _decode(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Object array of `values[code]` (the same string objects, no copies), None where the code is -1 (null)."""
    return np.append(values, None)[codes]  # -1 picks the appended None
