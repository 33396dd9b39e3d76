"""One dataset's cascade records read out of DuckDB as (query x model) matrices (`compass.cascades.wide`; issue 45).

The cascade preparation read every coded row of datasets.query_records into pandas (100 M rows: > 8 GB), then kept
generation 0, filled the split and validated (`compass.cascades.study.prepare_records`). Here DuckDB does that work:
it keeps the first generation, fills a missing split with "train", counts per model what `validate_records` checks
(`compass.cascades.data.validate_summary` raises its errors), numbers the (split, query_id) rows and the models in
sort order, and sends each record as (row, model, signals) numbers in chunks that are written straight into
preallocated (query x model) arrays. No string crosses per record: only the query ids, once per row. The checks
that need the rows (duplicates, train queries per model) are read off the matrices; only a dataset with a duplicate
runs the `group by` that names it.
"""

from __future__ import annotations

import uuid

import duckdb
import numpy as np
import pandas as pd

from compass.cascades.data import REQUIRED_COLUMNS, SUMMARY_COLUMNS, check_rows, check_values
from compass.cascades.wide import LABEL_COLUMN, WideRecords
from resources.query_frames import MEMORY_LIMIT, _restore_memory_limit, _spill_to

# The signals the cascade science reads (compass.cascades: calibration, economics, Fail Fast), besides the keys.
SIGNALS = ("correct", "confidence", "cost_usd", "latency_ms", "tokens_in", "tokens_out")
CHUNK_ROWS = 1 << 20


class NoRows(ValueError):
    """The table holds no row of the dataset."""


def cascade_matrix(con: duckdb.DuckDBPyConnection, dataset: str,
                   table: str = "datasets.query_records") -> WideRecords | None:
    """`dataset`'s generation-0 cascade records of `table` as matrices; None when no record carries a confidence;
    NoRows when it has no rows; ValueError (validate_records' message) when they cannot be a cascade dataset."""
    types = {c: t for (c, t, *_) in con.execute(f"describe {table}").fetchall()}
    where = {"dataset": dataset}
    has_conf = "confidence" in types
    rows, confident = con.execute(
        f"select count(*), {'count(*) filter (not isnan(confidence))' if has_conf else '0'} from {table} "
        "where dataset = $dataset", where).fetchone()
    if rows == 0:
        raise NoRows(f"no rows of {dataset!r} in {table}")
    if not confident:
        return None
    missing = [c for c in REQUIRED_COLUMNS if c not in types and c != "split"]  # no split: every row is train
    if missing:
        raise ValueError(f"records are missing required column(s) {missing}; have "
                         f"{[c for c in ('split', 'query_id', 'model_id', 'generation', *SIGNALS) if c in types]}")
    signals = [c for c in SIGNALS if c in types]
    tag = uuid.uuid4().hex[:12]
    view, queries, models = f"_cascade_{tag}", f"_cascade_q_{tag}", f"_cascade_m_{tag}"
    quoted = f"'{_quoted(dataset)}'"  # a view takes no parameters
    first = ("and coalesce(generation, 0) = (select min(coalesce(generation, 0)) from "
             f"{table} where dataset = {quoted})") if "generation" in types else ""
    limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
    _spill_to(con)
    con.execute(f"set memory_limit = '{MEMORY_LIMIT}'")  # the joins spill past it
    try:
        split = "coalesce(split, 'train')" if "split" in types else "'train'"
        con.execute(f"create temp view {view} as select {split} as split, "
                    f"coalesce(query_id::varchar, 'None') as query_id, model_id, "
                    f"{', '.join(f'{c}::double as {c}' for c in signals)} from {table} "
                    f"where dataset = {quoted} {first}")
        summary, narrow = _summary(con, view, signals)
        check_values(summary)
        con.execute(f"create temp table {queries} as select split, query_id, "
                    f"(row_number() over (order by split, query_id) - 1)::integer as r "
                    f"from (select distinct split, query_id from {view})")
        con.execute(f"create temp table {models} as select model_id, (row_number() over (order by model_id) - 1)"
                    f"::integer as m from (select distinct model_id from {view})")
        model_names = tuple(con.execute(f"select model_id from {models} order by m").fetchnumpy()["model_id"].tolist())
        split_names, split_codes, query_ids = _rows(con, queries)
        shape = (len(query_ids), len(model_names))
        present = np.zeros(shape, bool)
        values = {c: np.zeros(shape, np.int8) if c == LABEL_COLUMN else np.full(shape, np.nan, narrow[c])
                  for c in signals}
        result = con.execute(f"select q.r, m.m, {', '.join(f'v.{c}' for c in signals)} from {view} v "
                             f"join {queries} q using (split, query_id) join {models} m using (model_id)")
        records = 0
        while (batch := _chunk(result)) is not None:
            cell = batch["r"].astype(np.int64) * shape[1] + batch["m"]
            present.ravel()[cell] = True
            for c in signals:
                values[c].ravel()[cell] = batch[c]
            records += cell.size
        train = split_codes == split_names.index("train") if "train" in split_names else np.zeros(shape[0], bool)
        summary["train_queries"] = summary["model_id"].map(dict(zip(model_names, present[train].sum(axis=0))))
        check_rows(summary, _first_duplicate(con, view) if present.sum() < records else None)
    finally:
        for name in (queries, models):
            con.execute(f"drop table if exists {name}")
        con.execute(f"drop view if exists {view}")
        _restore_memory_limit(con, limit)
    return WideRecords(split_names, split_codes, query_ids, model_names, present, values)


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def _summary(con: duckdb.DuckDBPyConnection, view: str, signals: list[str]) -> tuple[pd.DataFrame, dict[str, type]]:
    """The view's per-model counts (`compass.cascades.data.SUMMARY_COLUMNS`) and each float signal's dtype: float32
    when every value of it is a float32 exactly (NULLs and NaN aside), else float64; in one scan."""
    floats = [c for c in signals if c != LABEL_COLUMN]
    # beyond ±FLT_MAX (a log-probability of -1e40) the cast fails: not a float32
    exact = "".join(f", coalesce(bool_and(coalesce(try_cast({c} as float)::double = {c}, {c} is null)), true) "
                    f"as exact_{c}" for c in floats)
    summary = con.execute(f"""
        select model_id,
               count(*) filter (confidence is null or isnan(confidence)) as nan_confidence,
               count(*) filter (confidence > 1e-12 and not isnan(confidence)) as positive_confidence,
               count(*) filter (correct is null or isnan(correct)) as nan_correct,
               count(*) filter (correct not in (0, 1) and not isnan(correct)) as bad_correct,
               count(*) filter (split = 'train') as train_rows,
               min(confidence) filter (split = 'train') as train_min_confidence,
               max(confidence) filter (split = 'train') as train_max_confidence{exact}
        from {view} group by model_id order by model_id""").df()
    if summary["model_id"].isna().any():
        split, query = con.execute(f"select split, query_id from {view} where model_id is null "
                                   "order by split, query_id limit 1").fetchone()
        raise ValueError(f"the record of split {split!r}, query_id {query!r} has no model_id")
    narrow = {c: np.float32 if summary[f"exact_{c}"].all() else np.float64 for c in floats}
    return summary[list(SUMMARY_COLUMNS)], narrow


def _first_duplicate(con: duckdb.DuckDBPyConnection, view: str) -> tuple[object, ...]:
    """The first (split, query_id, model_id) key that repeats, in sort order."""
    return con.execute(f"select split, query_id, model_id from {view} group by all having count(*) > 1 "
                       "order by all limit 1").fetchone()


def _rows(con: duckdb.DuckDBPyConnection, queries: str) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """(split names, per-row split codes int8, per-row query ids as str objects), fetched in chunks. Not a
    fixed-width str array: that sizes every id by the longest (one 4,000-character id: 16 kB per row)."""
    names = tuple(con.execute(f"select distinct split from {queries} order by split").fetchnumpy()["split"].tolist())
    if len(names) > 127:
        raise ValueError(f"{len(names)} splits; a cascade dataset has a few (train, test)")
    n = con.execute(f"select count(*) from {queries}").fetchone()[0]
    codes, ids = np.empty(n, np.int8), np.empty(n, object)
    code_of = ", ".join(f"'{_quoted(s)}'" for s in names)
    result = con.execute(f"select r, list_position([{code_of}], split) - 1 as s, query_id from {queries}")
    while (batch := _chunk(result)) is not None:
        codes[batch["r"]] = batch["s"]
        ids[batch["r"]] = batch["query_id"]
    return names, codes, ids


def _chunk(result: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray] | None:
    """The next CHUNK_ROWS rows as numpy columns (NULL doubles as NaN), or None at the end."""
    batch = result.fetch_df_chunk(CHUNK_ROWS // 2048)
    if batch.empty:
        return None
    return {c: batch[c].to_numpy() for c in batch.columns}
