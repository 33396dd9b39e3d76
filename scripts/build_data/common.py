"""Shared constants of the default-data build: source ids, snapshot dates, helpers."""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd

# Snapshot date (`as_of`) of every upstream source, from shared/data/raw/PROVENANCE.md
# (commit dates). LiveBench uses the date of the table release we read. LiteLLM and
# models.dev came from PyPI wheels whose date is not recorded: models.dev uses the
# newest `last_updated` inside the file (set by its reader), LiteLLM the date the raw
# copy was assembled (an upper bound, see data/PROVENANCE.md).
AS_OF: dict[str, dt.date] = {
    "epoch_ai_hub": dt.date(2026, 5, 2),
    "lmarena_catalog": dt.date(2025, 12, 17),
    "llmstats": dt.date(2025, 5, 22),
    "litellm": dt.date(2026, 11, 22),
    "open_llm_leaderboard_v2": dt.date(2025, 3, 21),
    "livebench": dt.date(2026, 1, 8),
    "mmlu_pro": dt.date(2026, 3, 18),
    "livecodebench": dt.date(2024, 4, 17),
    "rational_llm_cascades": dt.date(2025, 2, 17),
    "wildbench": dt.date(2024, 8, 1),
}

# Order used to pick model metadata (first non-null wins) and the alias `source`.
SOURCE_PRIORITY: tuple[str, ...] = (
    "llmstats",
    "epoch_ai_hub",
    "models_dev",
    "open_llm_leaderboard_v2",
    "lmarena_catalog",
    "litellm",
    "livebench",
    "livecodebench",
    "mmlu_pro",
    "rational_llm_cascades",
    "wildbench",
)

SCORE_COLS = ["raw_name", "benchmark", "score", "score_scale", "stderr", "source", "as_of"]
COST_COLS = [
    "raw_name", "provider", "input_usd_per_mtok", "output_usd_per_mtok",
    "throughput_tps", "latency_s", "source", "as_of",
]
META_COLS = [
    "raw_name", "display_name", "organization", "release_date", "open_weights",
    "params_b", "context_window", "reasoning", "source", "as_of",
]


def slug(text: str) -> str:
    """Lowercase benchmark / category slug: non-alphanumerics become '_'."""
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def to_date(values: pd.Series) -> pd.Series:
    """Parse to python dates (Parquet date32); unparseable values become None."""
    parsed = pd.to_datetime(values, errors="coerce", format="mixed")
    return parsed.map(lambda t: None if pd.isna(t) else t.date())


def frame(rows: list[dict] | pd.DataFrame, columns: list[str], source: str, as_of: dt.date | None = None) -> pd.DataFrame:
    """Frame with exactly `columns` (missing ones null) stamped with source and as_of
    (default: AS_OF[source])."""
    df = pd.DataFrame(rows).copy()
    df["source"] = source
    df["as_of"] = as_of or AS_OF[source]
    for c in columns:
        if c not in df.columns:
            df[c] = None
    return df[columns]
