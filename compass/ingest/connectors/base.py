"""The connector contract: upstream bytes as a source publishes them -> canonical raw-table rows.

A connector is pure (no network, no dagster, no duckdb): it parses a `Payload` (the file a source
config's `url` or `path` names, plus the sibling files the connector asks for) into frames keyed by
the canonical raw-table names of `compass.ingest.schemas` (`models`, `benchmark_scores`,
`model_costs`, ...). Fetching, size caps and ZIP extraction are the caller's job (resources/).

How the output plugs into canonicalization. Connector rows carry the schema's columns with one
difference: the model is named by the upstream spelling in a `raw_name` column, in place of
`model_id` (and `models` rows are per-spelling metadata, not one row per canonical model). Both
callers then resolve the spelling the same way:

* `compass.ingest.canonical.canonical_id` turns a spelling into a canonical id by rules (dated
  snapshots, effort suffixes, family spellings, a short override table);
* `compass.ingest.aliases` looks a spelling up in the alias table (`alias_key`), which the pipeline
  extends with confirmed matches;
* `compass.ingest.organizations.canonical_organization` gives an organisation one spelling (already
  applied to the `organization` column of connector output).

`compass.ingest.resolve.canonical_rows(parsed, Resolver(explicit_pairs))` is that step: it adds
`model_id` and keeps one score per (model, benchmark, source) (the best variant) and one price per
(model, provider, source) (the undated spelling), the raw spelling in `variant`.

`scripts/build_default_data.py` (the embedded default) and the pipeline's source config
(`connector:` entries) both call `CONNECTORS[name].parse(payload)`, so one code path turns upstream
bytes into rows. An upstream format change (a renamed or missing field) raises `FormatChange`
naming the connector, the file and the field; nothing is guessed.

Bad rows (issue 43): a row a connector cannot read (a null, NaN or infinite number, a value of the wrong type, a
number outside its column's range: `compass.ingest.validate.RANGES` and `SCORE_SCALES`) is a bad row, not a dead
source. `screen` drops it and counts it (`Parsed.bad`, recorded as raw.fetches.rows_dropped), and the other rows go
on. Past `MAX_BAD_SHARE` of one table's rows the source counts as down: `TooManyBadRows` (the caller keeps its
previous rows).

Prices: rows whose input or output price is missing, zero or negative (free tiers, preview
endpoints) or above the ingest validator's bound `MAX_USD_PER_MTOK` are dropped by
`plausible_prices`; a connector records how many in `dropped` (a `Parsed` mapping attribute).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from compass.ingest.errors import IngestError
from compass.ingest.organizations import canonical_organizations
from compass.ingest.untrusted import UntrustedInput, gunzip
from compass.ingest.validate import MAX_USD_PER_MTOK, RANGES, SCORE_SCALES

# Past this share of unreadable rows (in any one table of a payload) a source counts as down, not as a source
# with some bad rows: its previous rows are kept.
MAX_BAD_SHARE = 0.5

# Connector output columns per table: the schema's columns with `raw_name` in place of `model_id`.
SCORE_COLS = ["raw_name", "benchmark", "score", "score_scale", "stderr", "source", "as_of"]
COST_COLS = [
    "raw_name", "provider", "input_usd_per_mtok", "output_usd_per_mtok", "cache_read_usd_per_mtok",
    "throughput_tps", "latency_s", "source", "as_of",
]
META_COLS = [
    "raw_name", "display_name", "organization", "release_date", "open_weights",
    "params_b", "context_window", "reasoning", "modality", "tool_use", "source", "as_of",
]


@dataclass(frozen=True)
class Payload:
    """Upstream bytes as the source publishes them."""

    name: str  # the file name the config's url/path names, e.g. "table_2026_06_25.csv"
    files: Mapping[str, bytes]  # file name -> bytes: the named file and any siblings (already safely extracted)
    as_of: dt.date | None = None  # the snapshot date when known (Last-Modified / commit date)

    def main(self) -> bytes:
        """The bytes of the named file."""
        return self.file(self.name)

    def file(self, name: str) -> bytes:
        if name not in self.files:
            raise IngestError(name, None, None, f"payload lacks the file {name!r} (has {sorted(self.files)[:5]})")
        return self.files[name]


class FormatChange(IngestError):
    """The upstream format changed: names the connector, the file and the missing or renamed field."""

    def __init__(self, connector: str, file: str, field: str, message: str = ""):
        self.connector, self.field = connector, field
        detail = message or f"the field {field!r} is missing"
        super().__init__(file, None, field, f"{connector}: upstream format changed: {detail}")


class Connector(Protocol):
    name: str  # e.g. "litellm_prices"
    source: str  # the canonical `source` id its rows carry, e.g. "epoch_ai_hub"

    def siblings(self, name: str) -> list[str]: ...

    def parse(self, payload: Payload) -> dict[str, pd.DataFrame]: ...


class SingleFile:
    """A connector whose upstream publishes one file (or one folder): no siblings to fetch."""

    def siblings(self, name: str) -> list[str]:
        return []


class TooManyBadRows(IngestError):
    """More than MAX_BAD_SHARE of a payload's rows could not be read: the source counts as down."""

    def __init__(self, connector: str, file: str, field: str, bad: int, total: int, table: str):
        self.connector, self.field, self.bad = connector, field, bad
        super().__init__(file, None, field, f"{connector}: {bad} of {total} {table} rows unreadable (first bad field "
                         f"{field!r}), more than {MAX_BAD_SHARE:.0%}: the source counts as down")


class Parsed(dict):
    """`parse`'s result: table name -> frame, plus `dropped` (implausible price rows left out) and `bad` (rows that
    could not be read, `screen`)."""

    def __init__(self, tables: Mapping[str, pd.DataFrame], dropped: int = 0, bad: int = 0):
        super().__init__(tables)
        self.dropped = dropped
        self.bad = bad


# ---- helpers shared by the connectors --------------------------------------------------------

def slug(text: str) -> str:
    """Lowercase benchmark / category slug: non-alphanumerics become '_'."""
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def to_date(values: pd.Series) -> pd.Series:
    """Parse to python dates (Parquet date32); unparseable values become None."""
    parsed = pd.to_datetime(values, errors="coerce", format="mixed")
    return parsed.map(lambda t: None if pd.isna(t) else t.date())


def frame(rows: list[dict] | pd.DataFrame, columns: list[str], source: str, as_of: dt.date | None) -> pd.DataFrame:
    """Frame with exactly `columns` (missing ones null) stamped with source and as_of; an
    `organization` column gets its canonical spelling."""
    df = pd.DataFrame(rows).copy()
    df["source"] = source
    df["as_of"] = as_of
    for c in columns:
        if c not in df.columns:
            df[c] = None
    if "organization" in columns:
        df["organization"] = canonical_organizations(df["organization"])
    return df[columns].reset_index(drop=True)


def number(value: Any) -> float:
    """`value` as a float; NaN for anything that is not one number (None, lists, booleans, text that is not a
    number), so that `screen` drops its row instead of the connector raising."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return float("nan")
    if isinstance(value, (int, float, np.integer, np.floating, str)):
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            return float("nan")
    return float("nan")


def scaled(value: Any, factor: float) -> Any:
    """A number times `factor`; None and anything that is not a number as they are (`screen` drops a row whose
    ranged column holds something that is not a number)."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return value * factor
    return value


def _numbers(values: pd.Series) -> pd.Series:
    return values.map(number, na_action=None).astype(float)


def keep_unreadable(raw: pd.Series, numeric: pd.Series) -> pd.Series:
    """`numeric` (a column parsed with errors="coerce"), with the upstream text back where a non-blank cell is not a
    number ("n/a", "12%"): `screen` then drops and counts that row as bad, where a coerced NaN would pass for a score
    the source never measured."""
    text = raw.notna() & numeric.isna() & raw.astype(str).str.strip().ne("")
    return numeric.astype(object).where(~text, raw) if text.any() else numeric


def bad_rows(table: str, frame: pd.DataFrame) -> tuple[pd.Series, str | None]:
    """(mask of the rows of `table` that cannot be read, the first bad field): a score that is not a finite number in
    its scale's range (`SCORE_SCALES`), a present value of a ranged column (`RANGES`) that is not a finite number
    in that range."""
    bad = pd.Series(False, index=frame.index)
    first: str | None = None

    def add(mask: pd.Series, column: str) -> None:
        nonlocal bad, first
        mask = mask.fillna(True).astype(bool)
        if first is None and bool((mask & ~bad).any()):
            first = column
        bad = bad | mask

    if table == "benchmark_scores" and "score" in frame.columns:
        score = _numbers(frame["score"])
        scale = frame["score_scale"].fillna("fraction") if "score_scale" in frame.columns else pd.Series(
            "fraction", index=frame.index)
        lo = scale.map(lambda s: SCORE_SCALES.get(s, (np.nan, np.nan))[0]).astype(float)
        hi = scale.map(lambda s: SCORE_SCALES.get(s, (np.nan, np.nan))[1]).astype(float)
        add(~np.isfinite(score) | ~(score >= lo) | ~(score <= hi), "score")
    for column, (low, high) in RANGES.get(table, {}).items():
        if column in frame.columns:
            present = frame[column].map(lambda v: v is not None and not (isinstance(v, float) and np.isnan(v)))
            num = _numbers(frame[column])
            add(present & (~np.isfinite(num) | (num < low) | (num > high)), column)
    return bad, first


def screen(connector: str, file: str, tables: Mapping[str, pd.DataFrame], dropped: int = 0) -> Parsed:
    """Drop and count the rows of every table that cannot be read (`bad_rows`; numbers made floats; then the
    implausible prices of model_costs, `plausible_prices`, added to `dropped`); past MAX_BAD_SHARE of one table's
    rows, TooManyBadRows naming the connector, the file and the first bad field."""
    kept, bad = {}, 0
    for table, df in tables.items():
        mask, first = bad_rows(table, df)
        good = df[~mask].reset_index(drop=True)
        for column in ("score", "stderr", *RANGES.get(table, {})):
            if column in good.columns and len(good):
                good[column] = _numbers(good[column])
        if table == "model_costs":  # readable prices that are free or absent: left out, not bad
            good, implausible = plausible_prices(good)
            good, dropped = good.reset_index(drop=True), dropped + implausible
        kept[table] = good
        if len(df) and mask.sum() > MAX_BAD_SHARE * len(df):
            raise TooManyBadRows(connector, file, first or "-", int(mask.sum()), len(df), table)
        bad += int(mask.sum())
    return Parsed(kept, dropped, bad)


def plausible_prices(costs: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Keep prices in (0, MAX_USD_PER_MTOK]; returns (kept rows, number dropped)."""
    if costs.empty:
        return costs, 0
    prices = costs[["input_usd_per_mtok", "output_usd_per_mtok"]].apply(pd.to_numeric, errors="coerce")
    ok = ((prices > 0) & (prices <= MAX_USD_PER_MTOK)).all(axis=1)
    return costs[ok], int((~ok).sum())


def read_csv(connector: str, name: str, data: bytes, required: Iterable[str]) -> pd.DataFrame:
    """A CSV whose `required` columns must all be present (else FormatChange naming the first missing)."""
    try:
        df = pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise FormatChange(connector, name, "-", f"not a readable CSV ({exc})") from None
    require(connector, name, df.columns, required)
    return df


def read_json(connector: str, name: str, data: bytes) -> Any:
    """JSON (plain or gzip-compressed) parsed with the standard, non-executing decoder."""
    if data[:2] == b"\x1f\x8b":  # decompressed with a cap (a gzip bomb is refused, not expanded)
        try:
            data = gunzip(data, name)
        except UntrustedInput:
            raise
        except IngestError as exc:
            raise FormatChange(connector, name, "-", exc.reason) from None
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatChange(connector, name, "-", f"not valid JSON ({exc})") from None


def require(connector: str, name: str, present: Iterable[str], required: Iterable[str]) -> None:
    """FormatChange naming the first `required` field absent from `present`."""
    have = set(present)
    missing = [f for f in required if f not in have]
    if missing:
        raise FormatChange(connector, name, missing[0])


def expect(connector: str, name: str, value: Any, kind: type, field: str) -> Any:
    """`value` if it is a `kind`, else FormatChange naming `field`."""
    if not isinstance(value, kind):
        raise FormatChange(connector, name, field, f"{field!r} is not a {kind.__name__}")
    return value
