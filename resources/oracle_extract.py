"""One dataset's query records read out of DuckDB straight into the oracle's dense tensors
(`compass.oracle.dense.DenseRecords`), never as a frame of rows (issue 45).

The prompt keys (split + "/" + query_id when the dataset has a split, `compass.oracle.prepare.prompt_keys`), the
models and the categories are numbered in DuckDB (sorted as the strings sort); one scan then streams each record's
slot (prompt code, model code, generation) and its numbers in chunks of 2,048-row vectors, which are written into
preallocated (N, L, G) arrays: the peak is those arrays plus a chunk, not a copy of the rows.

Records that break a rule of `prepare` stay here too, so that a 10^8-record partition gives `prepare`'s error (or
its result, when the rule drops them) without a frame of its rows: a record with no model_id raises `prepare`'s error
at once; a record a slot cannot hold (a null generation or correctness, a negative or fractional generation) marks
its (prompt, model) cell in `DenseRecords.flags`, a null query id its model, two records of one slot their cell
(`DenseRecords.duplicates`), all counted in DuckDB; `prepare_dense` raises the error where such a cell survives the
coverage rule. A sparse table (slots outnumbering its records 4 to 1: models answering few prompts, a stray large
generation) has the coverage rule applied in DuckDB first (`_complete_cases`), so only the cells `prepare` keeps get
slots, and the generation rule counted there (`_generation_rule`): the slots stop at the G of the models keeping it, a
record past them marks its cell (BEYOND). Only a dataset with no records (or no such columns) gives None: the
caller reads its (zero) rows, which raise the error `prepare` always raised.
"""

from __future__ import annotations

import uuid

import duckdb
import numpy as np
import pandas as pd

from compass.oracle.dense import (BEYOND, HAS_COST, NEGATIVE_COST, NO_COST, NO_TOKENS, NOT_INTEGER, NULL_CORRECT,
                                  NULL_GENERATION, DenseRecords, complete_cells)
from compass.oracle.prepare import MIN_COVERAGE, low_coverage, missing_model, no_complete_prompt
from resources.query_frames import _restore_memory_limit, _spill_to

# DuckDB's own memory while it numbers the keys and joins them to the rows (it spills past it): at 10^8 records the
# prompt keys alone are ~0.5 GB, which a smaller limit would spill on every chunk
MEMORY_LIMIT = "1GB"
CHUNK_VECTORS = 128  # DuckDB vectors of 2,048 rows fetched at a time (~10 MB of numbers)
MAX_SLOTS_PER_RECORD = 4  # sparser records (a model answering few prompts, a stray large generation): coverage first
INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
FLOATS = ("FLOAT", "DOUBLE", "REAL")
NOT_BINARY_SHOWN = 5  # the values `records.not_binary_correct` names


def dense_records(con: duckdb.DuckDBPyConnection, dataset: str, table: str = "datasets.query_records",
                  min_coverage: float = MIN_COVERAGE) -> DenseRecords | None:
    """`dataset`'s records of `table` as dense slots, or None when it has none (module docstring); ValueError (the
    row path's) for a record without a model_id, or no prompt answered by every model the coverage rule keeps
    (`min_coverage`, `prepare.complete_cases`) where the rule runs here (a sparse table, values other than 0/1)."""
    types = {c: t for (c, t, *_) in con.execute(f"describe {table}").fetchall()}
    if not {"query_id", "model_id", "generation", "correct"} <= set(types):
        return None

    def missing(column: str) -> str:
        """NULL, or NaN: no NULL in DuckDB, but missing in the row path's frame."""
        return f"(t.{column} is null or isnan(t.{column}))" if types.get(column) in FLOATS else f"(t.{column} is null)"

    where = {"dataset": dataset}
    keyed = "split" in types and con.execute(
        f"select count(split) > 0 from {table} where dataset = $dataset", where).fetchone()[0]
    key = "coalesce(t.split, '') || '/' || t.query_id" if keyed else "t.query_id"
    not_integer = "t.generation < 0" if types["generation"] in INTEGERS else \
        "(t.generation < 0 or t.generation <> floor(t.generation) or isinf(t.generation))"
    slotted = f"not {missing('generation')} and not {missing('correct')} and not ({not_integer})"
    cost, category = "cost_usd" in types, "category" in types
    tokens_known = {"tokens_in", "tokens_out"} <= set(types)
    no_cost = missing("cost_usd") if cost else "true"  # NaN (Arrow/Parquet keep it): missing
    no_tokens = f"{missing('tokens_in')} or {missing('tokens_out')}" if tokens_known else "true"
    # what a record no slot holds tells the rules (bits of `DenseRecords.flags`); also a NULL query id's
    kinds = (f"({missing('generation')}::integer * {NULL_GENERATION} + {missing('correct')}::integer * "
             f"{NULL_CORRECT} + coalesce({not_integer}, false)::integer * {NOT_INTEGER} + {no_cost}::integer * "
             f"{NO_COST} + (not {no_cost})::integer * {HAS_COST} + coalesce("
             f"{'t.cost_usd < 0' if cost else 'false'}, false)::integer * {NEGATIVE_COST} + ({no_tokens})::integer "
             f"* {NO_TOKENS})")
    not_binary = f"not {missing('correct')} and t.correct <> 0 and t.correct <> 1"
    mixed = "count_if(t.split is null) > 0 and count_if(t.split = '') > 0" if "split" in types else "false"
    rows, null_model, null_query, unslotted, n_not_binary, max_generation, costed, mixed = con.execute(
        f"select count(*), count_if(t.model_id is null), count_if(t.query_id is null), count_if(not ({slotted})), "
        f"count_if({not_binary}), max(t.generation) filter ({slotted}), "
        f"count_if(not {no_cost}), {mixed} from {table} t where t.dataset = $dataset", where).fetchone()
    if rows == 0:
        return None
    if null_model:
        raise _missing_model(con, table, dataset, keyed, key)
    cost = cost and costed > 0  # no tensor of missing costs
    tokens = (not cost or costed < rows) and tokens_known
    tag = uuid.uuid4().hex[:12]
    names = {"prompt": f"_oracle_prompts_{tag}", "model": f"_oracle_models_{tag}", "category": f"_oracle_cats_{tag}"}
    limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
    _spill_to(con)
    con.execute(f"set memory_limit = '{MEMORY_LIMIT}'")  # the numbering and the scan's joins spill past it
    try:
        # one code per prompt key (a NULL and an empty split give one key, as in `prompt_keys`); its rank: the first
        # position of its records in the records' order (query_frames.ORDER)
        order = "split nulls first, query_id" if keyed else "query_id"
        con.execute(f"create temp table {names['prompt']} as select v, (row_number() over (order by v) - 1)::integer "
                    f"as code, (row_number() over (order by first, v) - 1)::integer as rank from (select v, "
                    f"min(r) as first from (select v, row_number() over (order by {order}) as r from (select "
                    f"distinct {key} as v, {'t.split, ' if keyed else ''}t.query_id from {table} t "
                    f"where t.dataset = $dataset and {key} is not null)) group by v)", where)
        for name, column in (("model", "model_id"), *((("category", "category"),) if category else ())):
            con.execute(f"create temp table {names[name]} as select v, (row_number() over (order by v) - 1)::integer "
                        f"as code from (select distinct {column} as v from {table} where dataset = $dataset "
                        f"and {column} is not null)", where)
        joins = [f"join {names['prompt']} p on p.v = {key}", f"join {names['model']} m on m.v = t.model_id"]
        source = f"from {table} t {' '.join(joins)} where t.dataset = $dataset"
        n = con.execute(f"select count(*) from {names['prompt']}").fetchone()[0]
        l = con.execute(f"select count(*) from {names['model']}").fetchone()[0]
        g = int(max_generation) + 1 if max_generation is not None else 1
        dropped_models, dropped_prompts, generations = [], 0, None
        if n * l * g > MAX_SLOTS_PER_RECORD * rows:
            dropped_models, dropped_prompts = _complete_cases(con, names, source, where, l, dataset, min_coverage)
            n = con.execute(f"select count(*) from {names['prompt']}").fetchone()[0]
            l = con.execute(f"select count(*) from {names['model']}").fetchone()[0]
            # a stray large generation in a kept cell: slots only up to the G of the models keeping the
            # generation rule; the rest (generation >= g) is counted by the rule in DuckDB (`_generation_rule`)
            generations = _generation_rule(con, source, where, slotted, l)
            top = con.execute(f"select max(t.generation) {source} and {slotted}", where).fetchone()[0]
            keeping = generations[0][(generations[1] == 0) & ~generations[2]]
            g = min(int(top) + 1 if top is not None else 1, int(keeping.max()) if len(keeping) else 1)
        prompts = con.execute(f"select v, rank from {names['prompt']} order by code").fetchnumpy()
        labels = {name: np.asarray(con.execute(f"select v from {names[name]} order by code").fetchnumpy()["v"],
                                   dtype=object)
                  for name in ("model", *(("category",) if category else ()))}
        null_query = [] if not null_query else con.execute(
            f"select m.code, bit_or({kinds}) from {table} t join {names['model']} m on m.v = t.model_id "
            f"where t.dataset = $dataset and {key} is null group by m.code order by m.code", where).fetchall()
        numbers = ["t.correct", *(["t.cost_usd"] if cost else []), *(["t.tokens_in", "t.tokens_out"] if tokens else [])]
        held = f"{slotted} and t.generation < {g}"
        beyond = generations is not None and con.execute(
            f"select count(*) > 0 {source} and {slotted} and t.generation >= {g}", where).fetchone()[0]
        flagged = bool(unslotted) or beyond
        kind = "0" if not flagged else f"case when {held} then 0 else {kinds} + ({slotted})::integer * {BEYOND} end"
        if category:
            joins.append(f"left join {names['category']} c on c.v = t.category")
        result = con.execute(
            f"select (p.code::bigint * {l} + m.code) as cell, case when {held} then t.generation::bigint else -1 "
            f"end as generation, {kind}::utinyint as kind, {', '.join(numbers)}"
            f"{', coalesce(c.code, -1) as category' if category else ''} from {table} t {' '.join(joins)} "
            f"where t.dataset = $dataset", where)
        filled = _fill(result, (n, l, g), [c.removeprefix("t.") for c in numbers], category, flagged)
        del result
        duplicates = np.empty(0, dtype=np.int64)
        if np.count_nonzero(~np.isnan(filled["correct"])) != filled["rows"] or beyond:  # a slot written twice
            duplicates = con.execute(f"select distinct cell from (select p.code::bigint * {l} + m.code as cell "
                                     f"{source} and {slotted} group by cell, t.generation having count(*) > 1)",
                                     where).fetchnumpy()["cell"]
        null_split_first = None if not (mixed and category) else con.execute(
            f"select p.code::bigint * {l} + m.code as cell, arg_min(coalesce(c.code, -1), t.generation) as code "
            f"from {table} t {' '.join(joins)} where t.dataset = $dataset and t.split is null and t.query_id in "
            f"(select query_id from {table} where dataset = $dataset and split = '') group by cell", where).fetchnumpy()
        records = DenseRecords(
            prompt_ids=np.asarray(prompts["v"], dtype=object), model_ids=labels["model"], correct=filled["correct"],
            cost=filled.get("cost_usd"), tokens=(filled["tokens_in"], filled["tokens_out"]) if tokens else None,
            categories=labels.get("category"), category=filled.get("category"),
            has_category=filled.get("has_category"), record_rank=np.asarray(prompts["rank"]), rows=filled["rows"],
            flags=filled.get("flags"), duplicates=np.asarray(duplicates, dtype=np.int64),
            null_query_models=np.array([m for m, _ in null_query], dtype=np.int64),
            null_query_kinds=np.array([k for _, k in null_query], dtype=np.uint8), dropped_models=dropped_models,
            dropped_prompts=dropped_prompts, not_binary=np.empty(0), generations=generations,
            min_coverage=min_coverage, null_split_first=None if null_split_first is None or not len(
                null_split_first["cell"]) else (np.asarray(null_split_first["cell"]),
                                                np.asarray(null_split_first["code"])))
        if n_not_binary:
            records.not_binary = _not_binary_values(con, records, source, where, not_binary)
    finally:
        _restore_memory_limit(con, limit)
        for name in names.values():
            con.execute(f"drop table if exists {name}")
    return records


def _missing_model(con: duckdb.DuckDBPyConnection, table: str, dataset: str, keyed: bool, key: str) -> ValueError:
    """`prepare`'s error naming the first record (in the records' order) without a model_id."""
    order = "t.split nulls first, t.query_id nulls first" if keyed else "t.query_id nulls first"
    first = con.execute(f"select {key} from {table} t where t.dataset = $dataset and t.model_id is null "
                        f"order by {order}, t.generation nulls first limit 1", {"dataset": dataset}).fetchone()[0]
    return missing_model(dataset, {"query_id": first})


def _complete_cases(con: duckdb.DuckDBPyConnection, names: dict[str, str], source: str, where: dict[str, str],
                    l: int, dataset: str, min_coverage: float) -> tuple[list[str], int]:
    """`prepare.complete_cases` in DuckDB: the model and prompt tables cut to the models covering ≥ `min_coverage`
    of the best coverage and the prompts every one of them answered (renumbered); (dropped models, dropped
    prompts)."""
    covered = dict(con.execute(f"select m.code, count(distinct p.code) {source} group by m.code", where).fetchall())
    low = low_coverage(np.array([covered.get(code, 0) for code in range(l)]), min_coverage)
    models = np.asarray(con.execute(f"select v from {names['model']} order by code").fetchnumpy()["v"], dtype=object)
    kept = np.flatnonzero(~low).tolist()
    con.execute(f"create or replace temp table {names['model']} as select v, (row_number() over (order by v) - 1)"
                f"::integer as code from {names['model']} where code in ({', '.join(map(str, kept))})")
    answered, full = con.execute(
        f"select count(*), count_if(n = {len(kept)}) from (select p.code, count(distinct m.code) as n {source} "
        f"group by p.code)", where).fetchone()
    if full == 0:
        raise no_complete_prompt(dataset, models[kept])
    con.execute(f"create or replace temp table {names['prompt']} as select v, (row_number() over (order by v) - 1)"
                f"::integer as code, (row_number() over (order by rank) - 1)::integer as rank from {names['prompt']} "
                f"where code in (select p.code {source} group by p.code having count(distinct m.code) = {len(kept)})",
                where)
    return sorted(models[low].tolist()), int(answered - full)


def _generation_rule(con: duckdb.DuckDBPyConnection, source: str, where: dict[str, str], slotted: str,
                     l: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`records.generation_rule`'s counts in DuckDB, per model code: (G_l: its cells' most records, the cells with
    another count, whether a generation reaches G_l); what the rule sees of the records when no other rule breaks."""
    out = (np.zeros(l, dtype=np.int64), np.zeros(l, dtype=np.int64), np.zeros(l, dtype=bool))
    for code, g_model, uneven, beyond in con.execute(
            f"select m, g, count_if(c <> g), bool_or(top >= g) from (select m, c, top, max(c) over (partition by m) "
            f"as g from (select m.code as m, count(*) as c, max(t.generation) filter ({slotted}) as top {source} "
            f"group by p.code, m.code)) group by m, g", where).fetchall():
        out[0][code], out[1][code], out[2][code] = g_model, uneven, bool(beyond)
    return out


def _not_binary_values(con: duckdb.DuckDBPyConnection, records: DenseRecords, source: str, where: dict[str, str],
                       not_binary: str) -> np.ndarray:
    """The smallest correctness values other than 0/1 of the records in the cells the coverage rule keeps (slotted
    or not, a duplicate's too), as `build_arrays` names them; its no_complete_prompt error where no prompt stays."""
    flags = records.flags
    answered = ~np.isnan(records.correct[:, :, 0]) if records.correct.shape[2] == 1 else \
        (~np.isnan(records.correct)).any(axis=2)
    prompts, models, _, _ = complete_cells(answered if flags is None else answered | (flags != 0),
                                           records.model_ids, records.min_coverage, str(where["dataset"]))
    kept = f"_oracle_kept_{uuid.uuid4().hex[:12]}"
    con.register(kept, pd.DataFrame({"code": prompts.astype(np.int32)}))
    try:
        values = con.execute(f"select distinct t.correct::double as v {source} and {not_binary} and m.code in "
                             f"({', '.join(map(str, models))}) and p.code in (select code from {kept}) order by v "
                             f"limit {NOT_BINARY_SHOWN}", where).fetchnumpy()["v"]
    finally:
        con.unregister(kept)
    return np.asarray(values, dtype=float)


def _fill(result: duckdb.DuckDBPyConnection, shape: tuple[int, int, int], numbers: list[str],
          category: bool, flagged: bool) -> dict[str, np.ndarray]:
    """The scan's chunks written into (N, L, G) arrays of NaN (`numbers`), "rows" the records written; with a
    category, the (N, L) code of each cell's generation-0 record (−1: none) and whether any record of the cell has
    one; when some record has no slot (`flagged`), "flags" (N, L): the kinds (NULL_GENERATION, ...) of its cell's."""
    n, l, g = shape
    out = {name: np.full(n * l * g, np.nan) for name in numbers}
    if category:
        out["category"], out["has_category"] = np.full(n * l, -1, dtype=np.int32), np.zeros(n * l, dtype=bool)
    if flagged:
        out["flags"] = np.zeros(n * l, dtype=np.uint8)
    written = 0
    while not (chunk := result.fetch_df_chunk(CHUNK_VECTORS)).empty:
        cell, generation = chunk["cell"].to_numpy(), chunk["generation"].to_numpy()
        slotted = generation >= 0
        if flagged:
            kind = chunk["kind"].to_numpy()
            np.bitwise_or.at(out["flags"], cell[~slotted], kind[~slotted])
            cell, generation, chunk = cell[slotted], generation[slotted], chunk[slotted]
        written += len(cell)
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
    for name in ("category", "has_category", "flags"):
        if name in out:
            out[name] = out[name].reshape(n, l)
    out["rows"] = written
    return out
