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

import pandas as pd

from compass.ingest.errors import IngestError
from compass.ingest.organizations import canonical_organizations
from compass.ingest.untrusted import UntrustedInput, gunzip
from compass.ingest.validate import MAX_USD_PER_MTOK

# Connector output columns per table: the schema's columns with `raw_name` in place of `model_id`.
SCORE_COLS = ["raw_name", "benchmark", "score", "score_scale", "stderr", "source", "as_of"]
COST_COLS = [
    "raw_name", "provider", "input_usd_per_mtok", "output_usd_per_mtok",
    "throughput_tps", "latency_s", "source", "as_of",
]
META_COLS = [
    "raw_name", "display_name", "organization", "release_date", "open_weights",
    "params_b", "context_window", "reasoning", "modality", "source", "as_of",
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


class Parsed(dict):
    """`parse`'s result: table name -> frame, plus `dropped` (implausible price rows left out)."""

    def __init__(self, tables: Mapping[str, pd.DataFrame], dropped: int = 0):
        super().__init__(tables)
        self.dropped = dropped


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
