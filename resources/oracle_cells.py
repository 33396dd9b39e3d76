"""Per-(prompt, model) aggregates of query records, computed in DuckDB for `compass.oracle.records.from_cells`.

The oracle estimators that need only k_nl, G_l and each cell's mean cost (naive curve,
bias-corrected oracle, shrinkage, extrapolation) do not need the (N, L, G) tensors
`build_arrays` fills from every record: one `group by query_id, model_id` returns the
numbers, and only N x L rows cross from DuckDB (500,000 instead of 5,000,000 at 10,000
prompts x 50 models x 10 generations), as numbers: the ids cross as integer codes into
the distinct labels (10,000 + 50 strings), which pandas takes as Categoricals. The
validation columns `from_cells` checks (duplicates, numbering, nulls, 0/1, costs) come
from the same scan.
"""

from __future__ import annotations

import uuid

import duckdb
import numpy as np
import pandas as pd

# Distinct generations per cell as the popcount of a bit mask (a 64-bit OR per cell, where count(distinct) builds a
# hash set per cell, 4x the whole query's time at 5M rows); exact for generations 0..62, so a dataset with a larger
# generation falls back on count(distinct generation).
_MASKABLE = 62
_MASK = f"bit_count(bit_or(case when generation between 0 and {_MASKABLE} then 1::bigint << generation::bigint end))"


_INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                  "UBIGINT", "UHUGEINT"}


def _aggregates(table: str, distinct: str, integer: bool) -> str:
    fractional = "0" if integer else "count_if(generation <> floor(generation))"
    return f"""
        select query_id, model_id, count(*) as rows, {distinct} as generations,
               min(generation) as gen_min, max(generation) as gen_max, {fractional} as fractional,
               count_if(generation is null or correct is null) as null_rows,
               count_if(correct <> 0 and correct <> 1) as non_binary,
               sum(correct)::double as successes, avg(cost_usd) as cost, count(cost_usd) as cost_rows,
               min(cost_usd) as cost_min
        from {table} where dataset = $dataset group by query_id, model_id"""


def oracle_cells(con: duckdb.DuckDBPyConnection, dataset: str, table: str = "raw.query_records") -> pd.DataFrame:
    """The `from_cells` aggregates of `dataset`'s rows in `table` (columns `compass.oracle.records.CELL_COLUMNS`),
    query_id and model_id as Categoricals (a null id: a missing value). Works on a read-only connection (the
    intermediate tables are temporary, dropped on return)."""
    tag = uuid.uuid4().hex[:12]
    cells, ids = f"_oracle_cells_{tag}", {col: f"_oracle_{col}_{tag}" for col in ("query_id", "model_id")}
    integer = con.execute(f"select typeof(generation) from {table} limit 1").fetchone()
    integer = integer is None or integer[0] in _INTEGER_TYPES  # a float column is checked for fractions
    try:
        con.execute(f"create temp table {cells} as {_aggregates(table, _MASK, integer)}", {"dataset": dataset})
        if con.execute(f"select max(gen_max) > {_MASKABLE} from {cells}").fetchone()[0]:
            con.execute(f"create or replace temp table {cells} as "
                        f"{_aggregates(table, 'count(distinct generation)', integer)}", {"dataset": dataset})
        for col, name in ids.items():  # dense codes 0.. in arbitrary order; nulls get no code
            con.execute(f"create temp table {name} as select {col}, (row_number() over () - 1)::integer as code "
                        f"from (select distinct {col} from {cells} where {col} is not null)")
        out = con.execute(
            f"select coalesce(q.code, -1) as query_id, coalesce(m.code, -1) as model_id, "
            f"c.* exclude (query_id, model_id) from {cells} c "
            f"left join {ids['query_id']} q using (query_id) left join {ids['model_id']} m using (model_id)"
        ).fetchnumpy()
        for col, name in ids.items():
            labels = con.execute(f"select {col} from {name} order by code").fetchnumpy()[col]
            out[col] = pd.Categorical.from_codes(out[col], categories=pd.Index(labels, dtype=object))
    finally:
        for name in (cells, *ids.values()):
            con.execute(f"drop table if exists {name}")
    return pd.DataFrame(out)


def cell_floor(con: duckdb.DuckDBPyConnection, dataset: str, table: str = "raw.query_records") -> dict[str, np.ndarray]:
    """The least a per-cell read costs (the benchmark's floor): count, correct sum and mean cost per cell, the ids as
    their hashes (numbers, as ours returns codes; strings into pandas object columns cost ~35 % more), numpy arrays,
    no validation."""
    return con.execute(f"select hash(query_id) as query_id, hash(model_id) as model_id, count(*) as rows, "
                       f"sum(correct) as successes, avg(cost_usd) as cost from {table} where dataset = $dataset "
                       f"group by all", {"dataset": dataset}).fetchnumpy()
