"""raw.query_records ingested out of core (issue 45): read, validate, coerce, resolve and merge in DuckDB.

The same rules as `compass.ingest.ingest.ingest_table` (`compass.ingest.validate`), in SQL over the files: a
Parquet file is scanned where it lies (`read_parquet(..., file_row_number)`), a CSV file streams through
pyarrow's CSV reader in batches of text into a temporary table with its row numbers. One aggregate per file finds
every rule's first bad row, and the first rule broken, in the order `validate_table` checks them, is raised as the
same IngestError (file, row counted from 1 over data rows, column). Model names are resolved on the distinct
spellings only (`alias_key` in Python), then joined back. No per-row Python object is ever built, so memory stays
bounded by DuckDB's `memory_limit` (it spills to a temporary folder), whatever the number of rows.

`stage_query_records` leaves the validated union in the temporary table `staged_records`, in the row order the
pandas path gives (files in config order, rows in file order, a later file's row replacing an earlier one with
the same key); `check_query_records` validates only.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from compass.ingest.aliases import alias_key
from compass.ingest.errors import IngestError
from compass.ingest.load import SourceFile, read_file
from compass.ingest.schemas import RAW_TABLES, Column
from compass.ingest.validate import BINARY, IDENTIFIER, IDENTIFIER_COLUMNS, MAX_WHOLE, MAY_BE_MINUS_INFINITY, RANGES

TABLE = "query_records"
SCHEMA = RAW_TABLES[TABLE]
# DuckDB's memory for the staging (it spills beyond); the CSV reader's batch size.
MEMORY_LIMIT = "1GB"
CSV_BLOCK_BYTES = 16 << 20
# pandas.read_csv's default missing-value spellings (`keep_default_na=True`), so both paths read the same nulls.
CSV_NULLS = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
             "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]
_WHITESPACE = "' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)"
_SQL_TYPES = {"str": "VARCHAR", "float": "DOUBLE", "int": "BIGINT", "date": "DATE"}


def configure(con: duckdb.DuckDBPyConnection, spill: Path) -> None:
    """Bound DuckDB's memory for the staging; what does not fit spills under `spill`."""
    spill.mkdir(parents=True, exist_ok=True)
    con.execute(f"set memory_limit = '{MEMORY_LIMIT}'")
    con.execute(f"set temp_directory = '{spill}'")


def query_records_stager(sources: list[SourceFile],
                         lookup: Mapping[str, str] | None) -> Callable[[duckdb.DuckDBPyConnection], str]:
    """For `publish.publish_staged` (which bounds the connection's memory): stage the files, name the relation."""
    def stage(con: duckdb.DuckDBPyConnection) -> str:
        stage_query_records(con, sources, lookup)
        return "staged_records"
    return stage


def validate_query_records(sources: list[SourceFile], lookup: Mapping[str, str] | None) -> None:
    """`check_query_records` in a DuckDB of its own (memory bounded, spilling to a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="compass-ingest-") as spill, duckdb.connect() as con:
        configure(con, Path(spill))
        check_query_records(con, sources, lookup)


def check_query_records(con: duckdb.DuckDBPyConnection, sources: list[SourceFile],
                        lookup: Mapping[str, str] | None) -> None:
    """Validate every query_records file of `sources` (IngestError on the first bad cell); writes nothing."""
    for i, source in enumerate(s for s in sources if s.table == TABLE):
        _typed_view(con, source, i, lookup)
        con.execute(f"drop view if exists typed_{i}")
        con.execute(f"drop table if exists staged_{i}")


def stage_query_records(con: duckdb.DuckDBPyConnection, sources: list[SourceFile],
                        lookup: Mapping[str, str] | None) -> list[str]:
    """The validated union of the query_records files as the temporary table `staged_records`; returns its columns."""
    files = [s for s in sources if s.table == TABLE]
    views = [_typed_view(con, s, i, lookup) for i, s in enumerate(files)]
    if not views:
        cols = ", ".join(f'null::{_SQL_TYPES[c.kind]} as "{c.name}"' for c in SCHEMA.columns)
        con.execute(f"create or replace temp table staged_records as select {cols} limit 0")
        return SCHEMA.column_names
    union = " union all by name ".join(f"select *, {i} as _fi from {v}" for i, v in enumerate(views))
    key = ", ".join(f'"{k}"' for k in SCHEMA.key)
    latest = f"qualify row_number() over (partition by {key} order by _fi desc, _row desc) = 1" if len(views) > 1 else ""
    columns = _union_columns(con, views)
    cols = ", ".join(f'"{c}"' for c in columns)
    con.execute(f"create or replace temp table staged_records as select {cols} from ({union}) {latest} order by _fi, _row")
    for i in range(len(views)):
        con.execute(f"drop view if exists typed_{i}")
        con.execute(f"drop table if exists staged_{i}")
    return columns


def _union_columns(con: duckdb.DuckDBPyConnection, views: list[str]) -> list[str]:
    """Schema columns, then every file's extra columns in file order (pandas' concat order)."""
    out = list(SCHEMA.column_names)
    for v in views:
        out += [c for c in _columns(con, v) if c not in out and c != "_row"]
    return out


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    return [r[0] for r in con.execute(f"describe {relation}").fetchall()]


# ---------------------------------------------------------------- one file


def _raw_relation(con: duckdb.DuckDBPyConnection, source: SourceFile, i: int) -> tuple[str, dict[str, str]]:
    """A relation over the file's rows with `_row` (1-based) and {column: DuckDB type} of what the file holds."""
    path = source.path
    if not path.exists():
        raise IngestError(str(path), None, None, "file not found")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            con.execute(f"create or replace temp view raw_{i} as select * exclude (file_row_number), "
                        f"file_row_number + 1 as _row from read_parquet({_quoted(path)}, file_row_number = true)")
        elif suffix in (".csv", ".gz"):
            _stage_csv(con, path, f"staged_{i}")
            con.execute(f"create or replace temp view raw_{i} as select * from staged_{i}")
        else:
            raise IngestError(str(path), None, None, "unsupported file type: use .csv or .parquet")
    except (pa.ArrowInvalid, duckdb.Error, UnicodeDecodeError, csv.Error, OSError, EOFError):
        read_file(source)  # the pandas reader names the row of a malformed file (raises its IngestError)
        raise IngestError(str(path), None, None, "cannot read file") from None
    types = {name: kind for name, kind, *_ in con.execute(f"describe raw_{i}").fetchall()
             if not name.startswith("__index_level_")}
    return f"raw_{i}", types


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _stage_csv(con: duckdb.DuckDBPyConnection, path: Path, table: str) -> None:
    """Stream a CSV file (every column as text, pandas' null spellings) into `table` with its row numbers."""
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
        names = next(csv.reader(io.StringIO(handle.readline())), [])
    if not names:
        read_file(SourceFile(TABLE, path))  # empty file: the pandas reader's message
        raise IngestError(str(path), None, None, "file is empty")
    convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=CSV_NULLS,
                                   strings_can_be_null=True, quoted_strings_can_be_null=True)
    reader = pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES, encoding="utf-8-sig"),
                            convert_options=convert)
    rows = 0
    con.execute(f"create or replace temp table {table} as select " +
                ", ".join(f'null::varchar as "{n}"' for n in names) + ", 0::bigint as _row limit 0")
    for batch in reader:
        arrow = pa.Table.from_batches([batch]).append_column("_row", pa.array(range(rows + 1, rows + 1 + batch.num_rows),
                                                                              pa.int64()))
        con.register("csv_batch", arrow)
        con.execute(f"insert into {table} select * from csv_batch")
        con.unregister("csv_batch")
        rows += batch.num_rows


def _typed_view(con: duckdb.DuckDBPyConnection, source: SourceFile, i: int,
                lookup: Mapping[str, str] | None) -> str:
    """The file's rows cast to the schema (view `typed_<i>`), after every rule of `validate_table` held."""
    file = str(source.path)
    raw, types = _raw_relation(con, source, i)
    missing = [c for c in SCHEMA.required_names if c not in types]
    n_rows = con.execute(f"select count(*) from {raw}").fetchone()[0]
    if missing or n_rows == 0:  # the pandas messages (misnamed column hint, empty file)
        from compass.ingest.validate import check_columns
        check_columns(pd.DataFrame(columns=[c for c in types if c != "_row"]), SCHEMA, file)
    defaults = _provenance_defaults(con, raw, types, source)
    exprs, checks = {}, []
    for col in SCHEMA.columns:
        exprs[col.name], col_checks = _coerce(col, types, defaults)
        checks += col_checks
    typed_cols = ", ".join(f'{e} as "{c}"' for c, e in exprs.items())
    extras = [c for c in types if c not in exprs and c != "_row"]
    extra_cols = "".join(f', "{c}"' for c in extras)
    con.execute(f"create or replace temp view coerced_{i} as select {typed_cols}{extra_cols}, _row, "
                + ", ".join(f"({bad}) as _bad_{k}" for k, (_, _, bad) in enumerate(checks)) + f" from {raw}")
    checks = [(c, m, f"_bad_{k}") for k, (c, m, _) in enumerate(checks)] + _row_rules()
    _raise_first(con, f"coerced_{i}", raw, checks, file)
    resolved = _resolve(con, f"coerced_{i}", raw, lookup, file, i)
    _check_duplicates(con, resolved, file)
    cols = ", ".join(f'"{c}"' for c in [*SCHEMA.column_names, *extras])
    con.execute(f"create or replace temp view typed_{i} as select {cols}, _row from {resolved}")
    return f"typed_{i}"


def _provenance_defaults(con: duckdb.DuckDBPyConnection, raw: str, types: Mapping[str, str],
                         source: SourceFile) -> dict[str, str]:
    """`read_file`'s defaults: source = the file's stem, as_of = the config's date or the file's modification day,
    when the column is absent or empty."""
    out = {}
    present = {c: con.execute(f'select count("{c}") from {raw}').fetchone()[0] > 0
               for c in ("source", "as_of") if c in types}
    if not present.get("source"):
        out["source"] = "'" + source.path.stem.replace("'", "''") + "'"
    if not present.get("as_of"):
        day = source.as_of or dt.date.fromtimestamp(source.path.stat().st_mtime)
        out["as_of"] = f"date '{day.isoformat()}'"
    return out


def _coerce(col: Column, types: Mapping[str, str], defaults: Mapping[str, str]) -> tuple[str, list]:
    """(typed expression, [(column, message, bad-row condition)]) of one schema column, in `coerce_types`' order."""
    name, q = col.name, f'"{col.name}"'
    if name in defaults:
        return defaults[name], []
    if name not in types:
        return f"null::{_SQL_TYPES[col.kind]}", []
    text = types[name] == "VARCHAR"
    checks = []
    if col.kind in ("float", "int"):
        parsed = f"try_cast({q} as double)"
        num = f"(case when isnan({parsed}) then null else {parsed} end)"
        unparsed = f"{parsed} is null or isnan({parsed})" if text else f"{parsed} is null"
        checks.append((name, f"'{name}' must be numeric", f"{q} is not null and ({unparsed})"))
        minus_inf = name in MAY_BE_MINUS_INFINITY.get(TABLE, ())
        checks.append((name, f"'{name}' must be a finite number",
                       f"isinf({num})" + (f" and {num} <> '-inf'::double" if minus_inf else "")))
        low, high = RANGES.get(TABLE, {}).get(name, (-MAX_WHOLE, MAX_WHOLE) if col.kind == "int" else (None, None))
        if low is not None:
            checks.append((name, f"'{name}' must be >= {low:g}", f"{num} < {float(low)!r}"))
            checks.append((name, f"'{name}' must be at most {high:g}", f"{num} > {float(high)!r}"))
        if col.kind == "int":
            checks.append((name, f"'{name}' must be a whole number", f"{num} <> round({num})"))
            typed = f"try_cast(round({num}) as bigint)"
        else:
            typed = num
    elif col.kind == "date":
        typed = (f"coalesce(try_cast({q} as date), try_cast({q} as timestamp)::date)" if text
                 else f"try_cast({q} as date)")
        checks.append((name, f"'{name}' must be a date (YYYY-MM-DD)", f"{q} is not null and {typed} is null"))
    elif col.kind == "str":
        typed = f"trim(cast({q} as varchar), {_WHITESPACE})"
    else:
        raise ValueError(f"{TABLE}.{name}: kind {col.kind!r} has no SQL coercion")
    if not col.nullable:
        checks.append((name, f"'{name}' must not be empty", f"{typed} is null"))
    return typed, checks


def _row_rules() -> list[tuple[str, str, str]]:
    """`check_ranges` of query_records: binary correctness, identifiers."""
    rules = [(c, f"'{c}' must be 0 or 1", f'"{c}" is not null and "{c}" not in (0, 1)') for c in BINARY[TABLE]]
    rules += [(c, f"'{c}' becomes a partition key and a file name: use letters, digits, '_', '-' and '.'",
               f"\"{c}\" is not null and not regexp_full_match(\"{c}\", '{IDENTIFIER}')") for c in IDENTIFIER_COLUMNS]
    return rules


def _raise_first(con: duckdb.DuckDBPyConnection, relation: str, raw: str, checks: list[tuple[str, str, str]],
                 file: str) -> None:
    """One scan: each rule's count and first bad row; the first broken rule (in order) is raised."""
    if not checks:
        return
    aggs = ", ".join(f"count_if({bad}), min(_row) filter (where {bad})" for _, _, bad in checks)
    found = con.execute(f"select {aggs} from {relation}").fetchone()
    for k, (column, message, _) in enumerate(checks):
        count, row = found[2 * k], found[2 * k + 1]
        if count:
            value = con.execute(f'select "{column}" from {raw} where _row = ?', [row]).fetchone()
            shown = None if value is None else value[0]
            raise IngestError(file, int(row), column, f"{message} (value {str(shown)!r}; {int(count)} bad row(s))")


def _resolve(con: duckdb.DuckDBPyConnection, relation: str, raw: str, lookup: Mapping[str, str] | None, file: str,
             i: int) -> str:
    """model_id resolved through the alias lookup on its distinct spellings; an unknown one is an error."""
    if lookup is None:
        return relation
    names = [n for (n,) in con.execute(f"select distinct model_id from {relation}").fetchall()]
    mapping = pd.DataFrame({"spelling": pd.Series(names, dtype="string"),
                            "resolved": pd.Series([lookup.get(alias_key(n)) for n in names], dtype="string")})
    con.register(f"names_{i}", mapping)
    con.execute(f"create or replace temp table names_table_{i} as select * from names_{i}")
    con.unregister(f"names_{i}")
    con.execute(f"create or replace temp view resolved_{i} as select * replace (m.resolved as model_id) "
                f"from {relation} r left join names_table_{i} m on r.model_id = m.spelling")
    message = "unknown model id: add it to a models file or map it in a model_aliases file"
    _raise_first(con, f"resolved_{i}", raw, [("model_id", message, "model_id is null")], file)
    return f"resolved_{i}"


def _key_hash(key: str) -> str:
    """A 64-bit hash of the key columns (DuckDB's `hash`, nulls hashed alike): the duplicate check groups on it."""
    return f"hash({key})"


def _check_duplicates(con: duckdb.DuckDBPyConnection, relation: str, file: str) -> None:
    """`check_duplicate_keys`: the first row repeating an earlier row's key (nulls equal), and that earlier row.

    Grouping 100 M rows on the 6-column key itself ran out of memory under MEMORY_LIMIT; the group by runs on a
    64-bit hash of the key (8 bytes a row, spilling), which finds every repeated key among the hash values seen
    twice; only the rows of those hashes are then compared on the full key, so a collision is no error."""
    key = ", ".join(f'"{k}"' for k in SCHEMA.key)
    hashed = _key_hash(key)
    con.execute("set preserve_insertion_order = false")  # the set of repeated hashes has no order
    try:
        con.execute(f"create or replace temp table repeated_hashes as select {hashed} as h from {relation} "
                    f"group by h having count(*) > 1")
        if not con.execute("select count(*) from repeated_hashes").fetchone()[0]:
            return
        found = con.execute(
            f"select _row, first_row, {key} from (select *, min(_row) over (partition by {key}) as first_row, "
            f"row_number() over (partition by {key} order by _row) as nth from {relation} "
            f"where {hashed} in (select h from repeated_hashes)) "
            f"where nth = 2 order by _row limit 1").fetchone()
    finally:
        con.execute("drop table if exists repeated_hashes")
        con.execute("reset preserve_insertion_order")
    if found is None:  # only hash collisions
        return
    row, first, *values = found
    raise IngestError(file, int(row), SCHEMA.key[0],
                      f"duplicate key {tuple(values)} over columns {list(SCHEMA.key)}; first seen at row {int(first)}")
