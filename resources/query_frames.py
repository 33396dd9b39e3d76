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

import uuid
from collections.abc import Sequence

import duckdb
import numpy as np
import pandas as pd

ORDER = ("split", "query_id", "model_id", "generation")  # datasets/records' order (resources.query_extract.ORDER)


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
            con.execute(f"create temp table {name} as select v, (row_number() over (order by v) - 1)::integer as code "
                        f"from (select distinct {value} as v from {table} where dataset = $dataset) where v is not null",
                        {"dataset": dataset})
        joins, select = [], []
        for col, name in labels.items():
            value = key if col == "_prompt" else f't."{col}"'
            joins.append(f"left join {name} on {name}.v = {value}")
        for col in wanted:
            if prompt_key and col == "split":
                continue
            source = "_prompt" if prompt_key and col == "query_id" else col
            select.append(f'coalesce({labels[source]}.code, -1) as "{col}"' if source in labels else f't."{col}"')
        order = [f"{labels[c]}.code nulls first" if c in labels else f't."{c}" nulls first' for c in ORDER if c in types]
        frame = con.execute(f"select {', '.join(select)} from {table} t {' '.join(joins)} "
                            f"where t.dataset = $dataset order by {', '.join(order)}", {"dataset": dataset}).df()
        for col in frame.columns:
            source = "_prompt" if prompt_key and col == "query_id" else col
            if source in labels and col in strings:
                values = con.execute(f"select v from {labels[source]} order by code").fetchnumpy()["v"]
                frame[col] = _decode(frame[col].to_numpy(), np.asarray(values, dtype=object))
    finally:
        for name in labels.values():
            con.execute(f"drop table if exists {name}")
    return frame


def _decode(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Object array of `values[code]` (the same string objects, no copies), None where the code is -1 (null)."""
    return np.append(values, None)[codes]  # -1 picks the appended None
