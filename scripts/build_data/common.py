"""Shared constants of the default-data build for the sources without a connector: snapshot dates, priority."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from compass.ingest.connectors.base import frame as connector_frame

# Snapshot date (`as_of`) of the sources read without a connector, from shared/data/raw/PROVENANCE.md
# (commit dates). The connector sources' dates are in scripts/build_default_data.py (INPUTS).
AS_OF: dict[str, dt.date] = {
    "llmstats": dt.date(2025, 5, 22),
    "open_llm_leaderboard_v2": dt.date(2025, 3, 21),
    "mmlu_pro": dt.date(2026, 3, 18),
    "livecodebench": dt.date(2024, 4, 17),
    "rational_llm_cascades": dt.date(2025, 2, 17),
    "wildbench": dt.date(2024, 8, 1),
    "lmarena_csv": dt.date(2025, 8, 6),
}

# Order used to pick model metadata (first non-null wins) and the alias `source`.
SOURCE_PRIORITY: tuple[str, ...] = (
    "llmstats",
    "epoch_ai_hub",
    "models_dev",
    "open_llm_leaderboard_v2",
    "lmarena_catalog",
    "lmarena_csv",
    "litellm",
    "livebench",
    "livecodebench",
    "mmlu_pro",
    "rational_llm_cascades",
    "wildbench",
)

def frame(rows: list[dict] | pd.DataFrame, columns: list[str], source: str, as_of: dt.date | None = None) -> pd.DataFrame:
    """`compass.ingest.connectors.base.frame` with as_of defaulting to AS_OF[source]."""
    return connector_frame(rows, columns, source, as_of or AS_OF[source])
