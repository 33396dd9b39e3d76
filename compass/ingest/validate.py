"""Validation of canonical input tables: the first error names file, row and column.

Rows are numbered from 1 over data rows (a CSV header line is not counted), so
row r of a CSV file is on line r + 1.
"""

from __future__ import annotations

import difflib
import json

import numpy as np
import pandas as pd

from compass.ingest.aliases import resolve_model_ids
from compass.ingest.errors import IngestError
from compass.ingest.schemas import PANDAS_DTYPES, Column, TableSchema, model_columns

# Admissible ranges per score scale (benchmark_scores.score_scale).
SCORE_SCALES: dict[str, tuple[float, float]] = {
    "fraction": (0.0, 1.0),
    "percent": (0.0, 100.0),
    "elo": (0.0, 4000.0),
    "rating": (0.0, 10.0),
    "index": (-1e6, 1e6),
}
# Above this a per-million-token price is treated as a unit error, not a price.
MAX_USD_PER_MTOK = 1000.0
# Every number read must be finite; the one exception: a log-probability confidence may be -inf (probability 0:
# the shipped triviaqa and truthfulqa records hold such rows).
MAY_BE_MINUS_INFINITY = {"query_records": ("confidence",)}
# Whole numbers beyond this are not exact in a float64 (and overflow the Int64 a column is cast to).
MAX_WHOLE = 2**53
# Stated ranges [least, most] of numeric columns, per table; a value outside is a unit error, not data.
RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "models": {"params_b": (0, 1e5), "context_window": (0, 1e9)},  # billions of parameters; tokens
    "model_costs": {"input_usd_per_mtok": (0, MAX_USD_PER_MTOK), "output_usd_per_mtok": (0, MAX_USD_PER_MTOK),
                    "blended_usd_per_mtok": (0, MAX_USD_PER_MTOK), "cache_read_usd_per_mtok": (0, MAX_USD_PER_MTOK),
                    "throughput_tps": (0, 1e6), "latency_s": (0, 3600)},
    "query_records": {"generation": (0, 1e6), "cost_usd": (0, 1e4), "latency_ms": (0, 8.64e7),  # one day
                      "tokens_in": (0, 1e9), "tokens_out": (0, 1e9)},
    "interactions": {"outcome": (-1e6, 1e6)},
    "benchmark_scores": {"stderr": (0, 1e6)},
    "route_labels": {"tokens_out_p": (0, 1e9), "tokens_out_a": (0, 1e9)},
}
BINARY = {"query_records": ("correct",)}
# Values that become Dagster partition keys, file names and report paths.
IDENTIFIER_COLUMNS = ("dataset",)
IDENTIFIER = r"[A-Za-z0-9][A-Za-z0-9_.\-]*"


def _fail(file: str, frame: pd.DataFrame, mask: pd.Series, column: str, message: str) -> None:
    if bool(mask.any()):
        pos = int(np.flatnonzero(mask.to_numpy())[0])
        value = frame[column].iloc[pos] if column in frame.columns else None
        raise IngestError(file, pos + 1, column, f"{message} (value {str(value)!r}; {int(mask.sum())} bad row(s))")


def check_columns(frame: pd.DataFrame, schema: TableSchema, file: str) -> None:
    """Missing or misnamed required columns, and an empty file."""
    missing = [c for c in schema.required_names if c not in frame.columns]
    if missing:
        col = missing[0]
        extra = [c for c in frame.columns if c not in schema.column_names]
        guess = difflib.get_close_matches(col, extra, n=1)
        hint = f"; found '{guess[0]}', a misnamed '{col}'?" if guess else f"; columns present: {list(frame.columns)}"
        raise IngestError(file, None, col, f"required column '{col}' of table {schema.name} is missing{hint}")
    if frame.empty:
        raise IngestError(file, None, None, f"file is empty: table {schema.name} needs at least one row")


def coerce_types(frame: pd.DataFrame, schema: TableSchema, file: str) -> pd.DataFrame:
    """Cast every schema column to its kind; non-convertible cells are errors; absent optional columns become null."""
    out = frame.copy()
    for col in schema.columns:
        if col.name not in out.columns:
            out[col.name] = pd.Series([None] * len(out), dtype=PANDAS_DTYPES[col.kind], index=out.index)
            continue
        raw = out[col.name]
        if col.kind in ("float", "int"):
            num = pd.to_numeric(raw, errors="coerce").astype(float)
            _fail(file, out, raw.notna() & num.isna(), col.name, f"'{col.name}' must be numeric")
            allowed = num.eq(-np.inf) & (col.name in MAY_BE_MINUS_INFINITY.get(schema.name, ()))
            _fail(file, out, np.isinf(num) & ~allowed, col.name, f"'{col.name}' must be a finite number")
            check_range(num, out, schema.name, col, file)
            if col.kind == "int":
                _fail(file, out, num.notna() & (num != num.round()), col.name, f"'{col.name}' must be a whole number")
                out[col.name] = num.round().astype("Int64")
            else:
                out[col.name] = num.astype(float)
        elif col.kind == "bool":
            parsed = raw.map(_to_bool, na_action="ignore")
            _fail(file, out, raw.notna() & parsed.isna(), col.name, f"'{col.name}' must be true or false")
            out[col.name] = parsed.astype("boolean")
        elif col.kind == "date":
            parsed = pd.to_datetime(raw, errors="coerce")
            _fail(file, out, raw.notna() & parsed.isna(), col.name, f"'{col.name}' must be a date (YYYY-MM-DD)")
            out[col.name] = parsed.dt.date.astype(PANDAS_DTYPES["date"])
        elif col.kind == "vector":
            out[col.name] = _to_vectors(raw, out, col.name, file)
        else:
            out[col.name] = raw.astype("string").str.strip()
        if not col.nullable:
            _fail(file, out, out[col.name].isna(), col.name, f"'{col.name}' must not be empty")
    return out


def check_range(num: pd.Series, frame: pd.DataFrame, table: str, col: Column, file: str) -> None:
    """A number outside the column's stated range (`RANGES`; whole numbers: at most 2^53 in size)."""
    low, high = RANGES.get(table, {}).get(col.name, (-MAX_WHOLE, MAX_WHOLE) if col.kind == "int" else (-np.inf, np.inf))
    unit = " USD per million tokens (higher is not a plausible price)" if col.name.endswith("_usd_per_mtok") else ""
    _fail(file, frame, num < low, col.name, f"'{col.name}' must be >= {low:g}")
    _fail(file, frame, num > high, col.name, f"'{col.name}' must be at most {high:g}{unit}")


def _to_vectors(raw: pd.Series, frame: pd.DataFrame, column: str, file: str) -> pd.Series:
    """Lists of floats (Parquet list column, or JSON text in CSV) as float arrays; null stays None.
    Non-numeric, NaN or infinite entries and rows of unequal length are errors."""
    def parse(value: object) -> np.ndarray | None:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return None
        try:
            vec = np.asarray(json.loads(value) if isinstance(value, str) else value, dtype=float)
        except (ValueError, TypeError):
            return np.array([np.nan])
        return vec.ravel() if vec.ndim <= 1 else np.array([np.nan])

    vectors = raw.map(parse, na_action=None)
    present = vectors.map(lambda v: v is not None)
    _fail(file, frame, present & vectors.map(lambda v: v is not None and not np.all(np.isfinite(v))), column,
          f"'{column}' must be a list of finite numbers (NaN, text or nested lists are not embeddings)")
    lengths = vectors.map(lambda v: -1 if v is None else len(v))
    if present.any():
        first = int(lengths[present].iloc[0])
        _fail(file, frame, present & (lengths != first), column,
              f"'{column}' lists must all have the same length (the first has {first})")
    return vectors


def _to_bool(value: object) -> bool | None:
    """True/False for the usual spellings; None (an error for the caller) for anything else."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "y", "t"):
        return True
    if text in ("false", "0", "no", "n", "f"):
        return False
    return None


def check_ranges(frame: pd.DataFrame, schema: TableSchema, file: str) -> None:
    """Scores outside their scale, non-binary correctness, identifiers, route-label rules (the other ranges are
    checked as numbers are read: `check_range`)."""
    for col in BINARY.get(schema.name, ()):
        _fail(file, frame, frame[col].notna() & ~frame[col].isin([0.0, 1.0]), col, f"'{col}' must be 0 or 1")
    for col in (c for c in IDENTIFIER_COLUMNS if c in frame.columns):
        _fail(file, frame, frame[col].notna() & ~frame[col].astype(str).str.fullmatch(IDENTIFIER), col,
              f"'{col}' becomes a partition key and a file name: use letters, digits, '_', '-' and '.'")
    if schema.name == "route_labels":
        check_route_rows(frame, file)
    if schema.name == "benchmark_scores":
        scale = frame["score_scale"].fillna("fraction")
        _fail(file, frame, ~scale.isin(list(SCORE_SCALES)), "score_scale",
              f"unknown score_scale; use one of {sorted(SCORE_SCALES)}")
        lo = scale.map(lambda s: SCORE_SCALES[s][0])
        hi = scale.map(lambda s: SCORE_SCALES[s][1])
        _fail(file, frame, (frame["score"] < lo) | (frame["score"] > hi), "score", "score outside the range of its score_scale")


LABEL_KINDS = ("gold", "preference")


def check_route_rows(frame: pd.DataFrame, file: str) -> None:
    """Row rules of raw.route_labels (seed 003 §2): a known label kind, preferences in [-1, 1] (every outcome is
    finite: `coerce_types`), and text or an embedding for every query (the router has nothing to learn from
    otherwise)."""
    _fail(file, frame, ~frame["label_kind"].isin(LABEL_KINDS), "label_kind", f"label_kind must be one of {LABEL_KINDS}")
    pref = frame["label_kind"] == "preference"
    _fail(file, frame, pref & (frame["outcome"].abs() > 1), "outcome",
          "a preference outcome must lie in [-1, 1] (+1: model_p preferred)")
    no_text = frame["query_text"].isna() | (frame["query_text"].astype("string").str.len() == 0)
    _fail(file, frame, no_text & frame["embedding"].isna(), "query_text",
          "each query needs query_text or an embedding")


def check_route_datasets(frame: pd.DataFrame, files: pd.Series, rows: pd.Series) -> None:
    """Dataset rules of raw.route_labels over all of its files: one (model_p, model_a) pair per dataset, both gold
    and preference rows, one embedding length. `files` / `rows` give each row's origin for the error."""
    def fail_at(mask: pd.Series, column: str, message: str) -> None:
        if bool(mask.any()):
            pos = int(np.flatnonzero(mask.to_numpy())[0])
            raise IngestError(str(files.iloc[pos]), int(rows.iloc[pos]), column, message)

    for dataset, part in frame.groupby("dataset", sort=True):
        in_set = frame["dataset"] == dataset
        p, a = part["model_p"].iloc[0], part["model_a"].iloc[0]
        fail_at(in_set & ((frame["model_p"] != p) | (frame["model_a"] != a)), "model_p",
                f"dataset {dataset!r} mixes model pairs: its first row routes {p} vs {a}; one pair per dataset")
        for kind in set(LABEL_KINDS) - set(part["label_kind"]):
            fail_at(in_set, "label_kind",
                    f"dataset {dataset!r} has no {kind} rows: the meta-router needs both gold and preference labels")
        lengths = frame["embedding"].map(lambda v: -1 if v is None else len(v)).where(in_set, -1)
        if (lengths >= 0).any():
            first = int(lengths[lengths >= 0].iloc[0])
            fail_at((lengths >= 0) & (lengths != first), "embedding",
                    f"dataset {dataset!r}: embeddings of unequal length (the first has {first})")


def check_duplicate_keys(frame: pd.DataFrame, schema: TableSchema, file: str) -> None:
    key = [k for k in schema.key if k in frame.columns]
    dup = frame.duplicated(subset=key, keep="first")
    if dup.any():
        pos = int(np.flatnonzero(dup.to_numpy())[0])
        group = frame.groupby(key, dropna=False, sort=False).ngroup()  # null-safe: optional key columns may be null
        first = int(np.flatnonzero((group == group.iloc[pos]).to_numpy())[0])
        raise IngestError(file, pos + 1, key[0],
                          f"duplicate key {tuple(frame[key].iloc[pos])} over columns {key}; first seen at row {first + 1}")


def resolve_models(frame: pd.DataFrame, lookup: dict[str, str], file: str, column: str = "model_id") -> pd.DataFrame:
    """Map every spelling in `column` to its canonical id; an unknown model is an error."""
    resolved, unmatched = resolve_model_ids(frame[column], lookup)
    _fail(file, frame, unmatched, column,
          "unknown model id: add it to a models file or map it in a model_aliases file")
    out = frame.copy()
    out[column] = resolved
    return out


def validate_table(frame: pd.DataFrame, schema: TableSchema, file: str, lookup: dict[str, str] | None) -> pd.DataFrame:
    """Full validation of one input file; returns the canonical frame (schema columns first)."""
    check_columns(frame, schema, file)
    frame = frame.reset_index(drop=True)
    typed = coerce_types(frame, schema, file)
    check_ranges(typed, schema, file)
    if lookup is not None and schema.name != "models":
        for column in model_columns(schema):
            typed = resolve_models(typed, lookup, file, column)
    if schema.name == "model_costs":
        blend = (3.0 * typed["input_usd_per_mtok"] + typed["output_usd_per_mtok"]) / 4.0
        typed["blended_usd_per_mtok"] = typed["blended_usd_per_mtok"].fillna(blend)
    check_duplicate_keys(typed, schema, file)
    extra = [c for c in typed.columns if c not in schema.column_names]
    return typed[schema.column_names + extra]
