"""Reading canonical input files (CSV or Parquet) and the user's source config (YAML)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from compass.ingest.errors import IngestError, not_utf8
from compass.ingest.schemas import RAW_TABLES
from compass.ingest.untrusted import load_yaml

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
# Ingest order: later tables resolve model names through the earlier ones.
TABLE_ORDER = ("models", "model_aliases", "benchmark_scores", "model_costs", "interactions", "query_records",
               "route_labels")


@dataclass(frozen=True)
class SourceFile:
    table: str
    path: Path
    as_of: dt.date | None = None


def default_sources(data_dir: Path = DATA_DIR) -> list[SourceFile]:
    """The embedded real data: one Parquet file per raw table."""
    return [SourceFile(t, data_dir / f"{t}.parquet") for t in TABLE_ORDER]


@dataclass(frozen=True)
class ConnectorSource:
    """A config entry naming a connector (compass.ingest.connectors) and what the source itself publishes: a `url`
    (fetched by resources/fetch.py) or a local `path` (a file, a folder of files or a ZIP). `max_bytes` caps each
    file, `timeout_s` each HTTP attempt, `retries` and `backoff_s` bound the retries; `position` is the entry's place in the config (its rows override earlier
    entries' same-key rows, as files do)."""

    connector: str
    url: str | None = None
    path: Path | None = None
    max_bytes: int | None = None
    timeout_s: float | None = None
    retries: int | None = None
    backoff_s: float | None = None
    position: int = 0

    @property
    def location(self) -> str:
        return self.url or str(self.path)

    @property
    def slug(self) -> str:
        """A folder name unique to this connector and location (where its staged tables live)."""
        return f"{self.connector}-{hashlib.sha256(self.location.encode()).hexdigest()[:10]}"


# Defaults of the live-source settings of a config (README / docs/refresh.md).
STALE_AFTER_HOURS = 48.0
# The review score at which an unknown name's candidate is offered and the name held back: the lowest level with
# precision >= 0.95 on the labelled upstream names (scripts/measure_review_queue.py, docs/your-data.md).
MATCH_THRESHOLD = 0.95


@dataclass(frozen=True)
class SourceConfig:
    """A parsed source config: its entries in order (canonical files and connector sources), the aliases file
    (a person's confirmed name matches, `alias,model_id` CSV, also read as a model_aliases file), after how many
    hours a failing source's kept data is stale, and the similarity at or above which an unknown name is held back
    as a probable match instead of entering as a new model."""

    entries: tuple[SourceFile | ConnectorSource, ...]
    aliases: Path | None = None
    stale_after_hours: float = STALE_AFTER_HOURS
    match_threshold: float = MATCH_THRESHOLD

    @property
    def files(self) -> list[SourceFile]:
        return [e for e in self.entries if isinstance(e, SourceFile)]

    @property
    def connectors(self) -> list[ConnectorSource]:
        return [e for e in self.entries if isinstance(e, ConnectorSource)]


def load_config(path: str | Path | None) -> list[SourceFile]:
    """The canonical files of a source config (`read_config`); None means the embedded default."""
    return read_config(path).files


def read_config(path: str | Path | None) -> SourceConfig:
    """Sources from a YAML config (see docs/your-data.md); None means the embedded default.

    ```yaml
    replace_defaults: false
    aliases: my_aliases.csv        # optional: confirmed matches of unmatched names (alias,model_id)
    stale_after_hours: 48          # optional: a failing source's kept data turns stale after this
    sources:
      - table: query_records
        path: my_records.parquet   # relative to this file
        as_of: 2026-11-01          # optional
      - connector: litellm_prices
        url: https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json
    ```
    """
    if path is None:
        return SourceConfig(tuple(default_sources()))
    path = Path(path)
    try:
        doc = load_yaml(path.read_bytes(), str(path))
    except FileNotFoundError:
        raise IngestError(str(path), None, None, "config file not found") from None
    except OSError as exc:  # a folder, no permission
        raise IngestError(str(path), None, None, f"cannot read the config file: {exc.strerror or exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("sources", []), list):
        raise IngestError(str(path), None, "sources", "config must be a mapping with a 'sources' list")
    entries: list[SourceFile | ConnectorSource] = [] if doc.get("replace_defaults", False) else default_sources()
    for i, entry in enumerate(doc.get("sources", []), start=1):
        entries.append(_connector_entry(entry, i, path) if isinstance(entry, dict) and "connector" in entry
                       else _source_entry(entry, i, path))
    aliases = _relative(doc["aliases"], path) if doc.get("aliases") else None
    if aliases is not None and aliases.is_dir():
        raise IngestError(str(path), None, "aliases", f"'aliases' names the folder {aliases}; give a CSV file "
                          "with columns alias,model_id")
    if aliases is not None and aliases.exists() and len(aliases.read_bytes().strip().splitlines()) > 1:
        entries.append(SourceFile("model_aliases", aliases))  # not before its first line (a table has rows)
    return SourceConfig(tuple(entries), aliases, _number(doc, "stale_after_hours", STALE_AFTER_HOURS, path, 0, 1e6),
                        _number(doc, "match_threshold", MATCH_THRESHOLD, path, 0.01, 1.0))


def _relative(file: object, config: Path) -> Path:
    file = Path(str(file))
    return (file if file.is_absolute() else (config.parent / file)).resolve()


def _number(doc: dict, key: str, default: float, config: Path, low: float, high: float) -> float:
    try:
        value = float(doc.get(key, default))
    except (TypeError, ValueError):
        raise IngestError(str(config), None, key, f"'{key}' must be a number") from None
    if not low <= value <= high:
        raise IngestError(str(config), None, key, f"'{key}' must be between {low:g} and {high:g}")
    return value


# Per-source fetch settings a config may give: (key, type, least, most).
LIMITS = (("max_bytes", int, 1, 2**31), ("timeout_s", float, 0.01, 600.0), ("retries", int, 0, 10),
          ("backoff_s", float, 0.0, 300.0))


def _connector_entry(entry: dict, i: int, config: Path) -> ConnectorSource:
    from compass.ingest.connectors import CONNECTORS

    name = str(entry["connector"])
    if name not in CONNECTORS:
        raise IngestError(str(config), i, "connector", f"unknown connector '{name}'; use one of {sorted(CONNECTORS)}")
    if ("url" in entry) == ("path" in entry):
        raise IngestError(str(config), i, "sources", f"connector '{name}' needs exactly one of 'url' and 'path'")
    url = str(entry["url"]) if "url" in entry else None
    if url is not None and not url.lower().startswith(("http://", "https://")):
        raise IngestError(str(config), i, "url", f"only http(s) URLs are fetched, not {url!r}")
    limits = {}
    for key, kind, low, high in LIMITS:
        if key in entry:
            try:
                limits[key] = kind(entry[key])
            except (TypeError, ValueError, OverflowError):  # text, a list, an infinite whole number
                limits[key] = None
            if limits[key] is None or not low <= limits[key] <= high:  # no unbounded retries, no endless timeout
                raise IngestError(str(config), i, key, f"'{key}' must be a number between {low} and {high}, "
                                  f"got {entry[key]!r}")
    return ConnectorSource(name, url, _relative(entry["path"], config) if "path" in entry else None,
                           position=i, **limits)


def _source_entry(entry: object, i: int, config: Path) -> SourceFile:
    if not isinstance(entry, dict) or "table" not in entry or "path" not in entry:
        raise IngestError(str(config), i, "sources", "each source needs 'table' and 'path' (or 'connector' and "
                          "'url' or 'path')")
    table = str(entry["table"])
    if table not in RAW_TABLES:
        raise IngestError(str(config), i, "table", f"unknown table '{table}'; use one of {list(RAW_TABLES)}")
    as_of = entry.get("as_of")
    try:
        as_of = pd.Timestamp(as_of).date() if as_of else None
    except (TypeError, ValueError):  # 2026-13-45, a number, a list
        raise IngestError(str(config), i, "as_of", f"'as_of' must be a date YYYY-MM-DD, got {as_of!r}") from None
    return SourceFile(table, _relative(entry["path"], config), as_of)


def read_file(source: SourceFile) -> pd.DataFrame:
    """Read one CSV or Parquet file; unreadable or empty files raise IngestError naming the file."""
    path = source.path
    if not path.exists():
        raise IngestError(str(path), None, None, "file not found")
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        elif path.suffix.lower() in (".csv", ".gz"):
            # utf-8-sig: a byte-order mark (Excel's UTF-8 export) is not part of the first column's name
            frame = pd.read_csv(path, dtype=str, keep_default_na=True, encoding="utf-8-sig")
        else:
            raise IngestError(str(path), None, None, "unsupported file type: use .csv or .parquet")
    except pd.errors.EmptyDataError:
        raise IngestError(str(path), None, None, "file is empty") from None
    except UnicodeDecodeError as exc:
        csv = path.suffix.lower() == ".csv"
        raise not_utf8(str(path), path.read_bytes() if csv else b"", exc, 0 if csv else None) from None
    except pd.errors.ParserError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise IngestError(str(path), int(line.group(1)) - 1 if line else None, None,
                          f"malformed CSV: {str(exc).split('. ', 1)[-1]}") from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, IngestError):
            raise
        raise IngestError(str(path), None, None, f"cannot read file: {exc}") from None
    if "source" not in frame.columns or frame["source"].isna().all():
        frame["source"] = path.stem
    if "as_of" not in frame.columns or frame["as_of"].isna().all():
        frame["as_of"] = source.as_of or dt.date.fromtimestamp(path.stat().st_mtime)
    return frame


def file_digest(paths: list[Path]) -> str:
    """Content hash of a list of files (order-sensitive): the data version of a source."""
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.name).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
