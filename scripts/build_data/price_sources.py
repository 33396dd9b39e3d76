"""LLM-Stats provider prices (no connector: a flattened copy of a repository of JSON files)
-> model_costs rows keyed by raw name. The LiteLLM, models.dev, LMArena and LiveBench prices
come from their connectors (compass/ingest/connectors/).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from compass.ingest.connectors.base import COST_COLS, plausible_prices

from .common import frame

# LLM-Stats provider names -> the ids the connectors use for the same providers.
LLMSTATS_PROVIDERS = {"together": "together_ai", "mistral_ai": "mistral", "fireworks": "fireworks_ai"}


def read_llmstats_prices(raw: Path) -> tuple[pd.DataFrame, int]:
    """LLM-Stats provider prices with throughput (tok/s) and latency (s)."""
    p = pd.read_csv(raw / "llmstats" / "derived_provider_prices.csv")
    provider = p["provider"].str.lower().str.replace(r"[^a-z0-9]+", "_", regex=True)
    costs = pd.DataFrame({
        "raw_name": p["model_id"], "provider": provider.replace(LLMSTATS_PROVIDERS),
        "input_usd_per_mtok": p["price_per_input_token_usd"] * 1e6,
        "output_usd_per_mtok": p["price_per_output_token_usd"] * 1e6,
        "throughput_tps": p["throughput_tokens_per_s"], "latency_s": p["latency_s"],
    })
    costs, dropped = plausible_prices(costs)
    return frame(costs, COST_COLS, "llmstats"), dropped
