"""Reading canonical input files (CSV or Parquet) and the user's source config (YAML)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from compass.ingest.errors import IngestError
from compass.ingest.schemas import RAW_TABLES

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


def load_config(path: str | Path | None) -> list[SourceFile]:
    """Sources from a YAML config (see README 'Your own data'); None means the embedded default.

    ```yaml
    replace_defaults: false
    sources:
      - table: query_records
        path: my_records.parquet   # relative to this file
        as_of: 2026-11-01          # optional
    ```
    """
    if path is None:
        return default_sources()
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise IngestError(str(path), None, None, "config file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        row = mark.line + 1 if mark is not None else None
        col = f"character {mark.column + 1}" if mark is not None else None
        raise IngestError(str(path), row, col, f"malformed YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("sources", []), list):
        raise IngestError(str(path), None, "sources", "config must be a mapping with a 'sources' list")
    sources = [] if doc.get("replace_defaults", False) else default_sources()
    for i, entry in enumerate(doc.get("sources", []), start=1):
        sources.append(_source_entry(entry, i, path))
    return sources


def _source_entry(entry: object, i: int, config: Path) -> SourceFile:
    if not isinstance(entry, dict) or "table" not in entry or "path" not in entry:
        raise IngestError(str(config), i, "sources", "each source needs 'table' and 'path'")
    table = str(entry["table"])
    if table not in RAW_TABLES:
        raise IngestError(str(config), i, "table", f"unknown table '{table}'; use one of {list(RAW_TABLES)}")
    file = Path(entry["path"])
    file = file if file.is_absolute() else (config.parent / file)
    as_of = entry.get("as_of")
    return SourceFile(table, file.resolve(), pd.Timestamp(as_of).date() if as_of else None)


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
        raise IngestError(str(path), _data_row_at_byte(path, exc.start), None,
                          f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x}); save the file as UTF-8") from None
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


def _data_row_at_byte(path: Path, offset: int) -> int | None:
    """1-based data row (header not counted) holding byte `offset` of a CSV file (plain text only)."""
    if path.suffix.lower() != ".csv":
        return None
    return path.read_bytes()[:offset].count(b"\n")


def file_digest(paths: list[Path]) -> str:
    """Content hash of a list of files (order-sensitive): the data version of a source."""
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.name).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
