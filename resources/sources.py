"""Data-source configuration: which canonical files feed the raw tables."""

from __future__ import annotations

import os

import dagster as dg

from compass.ingest.load import SourceFile, load_config


class SourcesResource(dg.ConfigurableResource):
    """Source files from a YAML config (`--config` / COMPASS_CONFIG); unset means the embedded default data."""

    config_path: str | None = None

    def files(self, table: str | None = None) -> list[SourceFile]:
        files = load_config(self.config_path or os.environ.get("COMPASS_CONFIG") or None)
        return [f for f in files if table is None or f.table == table]
