"""Data-source configuration: which canonical files feed the raw tables."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg

from compass.ingest.ingest import validate_all
from compass.ingest.load import TABLE_ORDER, ConnectorSource, SourceConfig, SourceFile, read_config
from resources import settings
from resources.live_sources import staged_files
from resources.query_ingest import validate_query_records

# Files accepted from the inbox (pipelines.inbox) land in <accepted>/<table>/.
INPUT_SUFFIXES = (".csv", ".parquet", ".pq")


def accepted_files(table: str | None = None, folder: Path | None = None) -> list[SourceFile]:
    """Accepted inbox files, per table in TABLE_ORDER, oldest acceptance first (mtime, then name).

    The inbox stamps a file's mtime when it accepts it, so a later delivery
    comes later and overrides same-key rows of an earlier one.
    """
    root = folder or settings.accepted_dir()
    out: list[SourceFile] = []
    for t in TABLE_ORDER if table is None else (table,):
        sub = root / t
        paths = [p for p in sub.iterdir() if p.suffix.lower() in INPUT_SUFFIXES] if sub.is_dir() else []
        out += [SourceFile(t, p.resolve()) for p in sorted(paths, key=lambda p: (p.stat().st_mtime_ns, p.name))]
    return out


class SourcesResource(dg.ConfigurableResource):
    """Source files from a YAML config (`--config` / COMPASS_CONFIG); unset means the embedded default data.

    A `connector:` entry stands for the tables resources.live_sources staged for it (at its place in the config).
    Files accepted from the inbox are appended after the configured ones, so
    they override same-key rows (e.g. a new price).
    """

    config_path: str | None = None

    def config(self) -> SourceConfig:
        """The parsed source config (canonical files, connector entries, aliases file, live-source settings)."""
        return read_config(self.config_path or settings.config_path())

    def files(self, table: str | None = None) -> list[SourceFile]:
        files = [f for e in self.config().entries
                 for f in (staged_files(e) if isinstance(e, ConnectorSource) else [e])] + accepted_files()
        return [f for f in files if table is None or f.table == table]

    def validate(self, tables: list[str] | None = None) -> None:
        """Validate every configured file of `tables` (default: all) together, with raw.models and raw.model_aliases
        for name resolution, writing nothing (IngestError on the first bad one)."""
        validate_all(self.files(), tables, {"query_records": validate_query_records})

    def input_digest(self, table: str) -> str:
        """Content hash of what raw.<table> is built from: its files (path, as_of, modification time, bytes) and, for
        every table but models, those of raw.models and raw.model_aliases, through which its model names resolve.
        The same digest under the same code version rebuilds the same table."""
        tables = {table} if table == "models" else {table, "models", "model_aliases"}
        h = hashlib.sha256()
        for f in self.files():
            if f.table in tables:
                stamp = f.path.stat().st_mtime_ns if f.path.exists() else "missing"
                h.update(f"{f.table}|{f.path}|{f.as_of}|{stamp}|".encode())
                h.update(f.path.read_bytes() if f.path.exists() else b"")
        return h.hexdigest()[:16]
