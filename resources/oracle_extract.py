"""One dataset's query records read out of DuckDB straight into the oracle's dense tensors
(`compass.oracle.dense.DenseRecords`), never as a frame of rows (issue 45).

The prompt keys (split + "/" + query_id when the dataset has a split, `compass.oracle.prepare.prompt_keys`), the
models and the categories are numbered in DuckDB (sorted as the strings sort); one scan then streams each record's
slot (prompt code, model code, generation) and its numbers in chunks of 2,048-row vectors, which are written into
preallocated (N, L, G) arrays: the peak is those arrays plus a chunk, not a copy of the rows. Records a dense form
would misread (a null id, generation or correctness, a correctness other than 0/1, a negative or fractional
generation, two keys for one prompt, a sparse table whose slots outnumber its records 4 to 1) give None: the caller
prepares them as rows, which raises the error `prepare` always raised.
"""

from __future__ import annotations

import uuid

import duckdb
import numpy as np

from compass.oracle.dense import DenseRecords
from resources.query_frames import _restore_memory_limit, _spill_to

# DuckDB's own memory while it numbers the keys and joins them to the rows (it spills past it): at 10^8 records the
# prompt keys alone are ~0.5 GB, which a smaller limit would spill on every chunk
MEMORY_LIMIT = "1GB"
CHUNK_VECTORS = 128  # DuckDB vectors of 2,048 rows fetched at a time (~10 MB of numbers)
MAX_SLOTS_PER_RECORD = 4  # sparser records (a model answering few prompts, a stray large generation) go as rows


def dense_records(con: duckdb.DuckDBPyConnection, dataset: str,
                  table: str = "datasets.query_records") -> DenseRecords | None:
    """`dataset`'s records of `table` as dense slots, or None when they need the row path (module docstring)."""
    types = {c: t for (c, t, *_) in con.execute(f"describe {table}").fetchall()}
    if not {"query_id", "model_id", "generation", "correct"} <= set(types):
        return None
    where = {"dataset": dataset}
    keyed = "split" in types and con.execute(
        f"select count(split) > 0 from {table} where dataset = $dataset", where).fetchone()[0]
    key = "coalesce(t.split, '') || '/' || t.query_id" if keyed else "t.query_id"
    fractional = "0" if types["generation"] in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT") else \
        "count_if(t.generation <> floor(t.generation))"
    cost, category = "cost_usd" in types, "category" in types
    rows, bad, max_generation, costed = con.execute(
        f"select count(*), count_if({key} is null or t.model_id is null or t.generation is null or t.correct is null "
        f"or t.generation < 0 or (t.correct <> 0 and t.correct <> 1)) + {fractional}, max(t.generation), "
        f"{'count(*) filter (not isnan(t.cost_usd))' if cost else '0'} from {table} t where t.dataset = $dataset",
        where).fetchone()  # a NaN cost (Arrow/Parquet keep NaN) is a missing one, as in pandas
    if rows == 0 or bad:
        return None
    cost = cost and costed > 0  # no tensor of missing costs
    tokens = (not cost or costed < rows) and {"tokens_in", "tokens_out"} <= set(types)
    tag = uuid.uuid4().hex[:12]
    names = {"prompt": f"_oracle_prompts_{tag}", "model": f"_oracle_models_{tag}", "category": f"_oracle_cats_{tag}"}
    limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
    _spill_to(con)
    con.execute(f"set memory_limit = '{MEMORY_LIMIT}'")  # the numbering and the scan's joins spill past it
    try:
        order = "split nulls first, query_id" if keyed else "query_id"  # the records' order (query_frames.ORDER)
        con.execute(f"create temp table {names['prompt']} as select v, (row_number() over (order by v) - 1)::integer "
                    f"as code, (row_number() over (order by {order}) - 1)::integer as rank "
                    f"from (select distinct {key} as v, {'t.split, ' if keyed else ''}t.query_id "
                    f"from {table} t where t.dataset = $dataset)", where)
        for name, column in (("model", "model_id"), *((("category", "category"),) if category else ())):
            con.execute(f"create temp table {names[name]} as select v, (row_number() over (order by v) - 1)::integer "
                        f"as code from (select distinct {column} as v from {table} where dataset = $dataset "
                        f"and {column} is not null)", where)
        n, distinct = con.execute(f"select count(*), count(distinct v) from {names['prompt']}").fetchone()
        l = con.execute(f"select count(*) from {names['model']}").fetchone()[0]
        g = int(max_generation) + 1
        if n != distinct or n * l * g > MAX_SLOTS_PER_RECORD * rows:  # one prompt, two keys (null and '' split)
            return None
        prompts = con.execute(f"select v, rank from {names['prompt']} order by code").fetchnumpy()
        labels = {name: np.asarray(con.execute(f"select v from {names[name]} order by code").fetchnumpy()["v"],
                                   dtype=object)
                  for name in ("model", *(("category",) if category else ()))}
        numbers = ["t.correct", *(["t.cost_usd"] if cost else []), *(["t.tokens_in", "t.tokens_out"] if tokens else [])]
        joins = [f"join {names['prompt']} p on p.v = {key}", f"join {names['model']} m on m.v = t.model_id"]
        if category:
            joins.append(f"left join {names['category']} c on c.v = t.category")
        result = con.execute(
            f"select (p.code::bigint * {l} + m.code) as cell, t.generation::bigint as generation, {', '.join(numbers)}"
            f"{', coalesce(c.code, -1) as category' if category else ''} from {table} t {' '.join(joins)} "
            f"where t.dataset = $dataset", where)
        filled = _fill(result, (n, l, g), [c.removeprefix("t.") for c in numbers], category)
        del result
    finally:
        _restore_memory_limit(con, limit)
        for name in names.values():
            con.execute(f"drop table if exists {name}")
    return DenseRecords(
        prompt_ids=np.asarray(prompts["v"], dtype=object), model_ids=labels["model"], correct=filled["correct"],
        cost=filled.get("cost_usd"), tokens=(filled["tokens_in"], filled["tokens_out"]) if tokens else None,
        categories=labels.get("category"), category=filled.get("category"), has_category=filled.get("has_category"),
        record_rank=np.asarray(prompts["rank"]), rows=int(rows))


def _fill(result: duckdb.DuckDBPyConnection, shape: tuple[int, int, int], numbers: list[str],
          category: bool) -> dict[str, np.ndarray]:
    """The scan's chunks written into (N, L, G) arrays of NaN (`numbers`) and, with a category, the (N, L) code of
    each cell's generation-0 record (−1: none) and whether any record of the cell has one."""
    n, l, g = shape
    out = {name: np.full(n * l * g, np.nan) for name in numbers}
    if category:
        out["category"], out["has_category"] = np.full(n * l, -1, dtype=np.int32), np.zeros(n * l, dtype=bool)
    while not (chunk := result.fetch_df_chunk(CHUNK_VECTORS)).empty:
        cell, generation = chunk["cell"].to_numpy(), chunk["generation"].to_numpy()
        slot = cell * g + generation
        for name in numbers:
            out[name][slot] = chunk[name].to_numpy(dtype=float, na_value=np.nan)
        if category:
            codes = chunk["category"].to_numpy()
            first = generation == 0
            out["category"][cell[first]] = codes[first]
            out["has_category"][cell[codes >= 0]] = True
    for name in numbers:
        out[name] = out[name].reshape(n, l, g)
    if category:
        out["category"], out["has_category"] = out["category"].reshape(n, l), out["has_category"].reshape(n, l)
    return out
