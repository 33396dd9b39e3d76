"""LiteLLM's price table (`model_prices_and_context_window.json`, MIT) -> model_costs and models.

The JSON is data: it is parsed with the standard decoder; the litellm package is never installed.
Chat rows (`mode == chat`) of first-party providers (plus together_ai for open models) become
prices per 1M tokens (per-token price x 1e6; `cache_read_input_token_cost` as the cache-read price where given); `max_input_tokens` and `supports_reasoning` become
metadata, with the organisation of first-party providers' models.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from compass.ingest.connectors.base import (
    COST_COLS, META_COLS, FormatChange, Parsed, Payload, SingleFile, frame, read_json, scaled, screen,
)

# First-party LiteLLM providers (plus together_ai for open models) -> our provider id.
PROVIDERS = {
    "openai": "openai", "anthropic": "anthropic", "gemini": "google", "vertex_ai-language-models": "vertex_ai",
    "mistral": "mistral", "deepseek": "deepseek", "xai": "xai", "together_ai": "together_ai",
    "dashscope": "alibaba", "moonshot": "moonshot", "zai": "zai", "cohere_chat": "cohere",
}
# The developer behind a first-party provider's models (together_ai serves others' models).
ORGANIZATIONS = {
    "vertex_ai-language-models": "google", "gemini": "google", "dashscope": "alibaba", "cohere_chat": "cohere",
}
RESELLERS = {"together_ai"}
PRICE_FIELDS = ("input_cost_per_token", "output_cost_per_token")


class LiteLLMPrices(SingleFile):
    name = "litellm_prices"
    source = "litellm"

    def parse(self, payload: Payload) -> Parsed:
        table = read_json(self.name, payload.name, payload.main())
        if not isinstance(table, dict):
            raise FormatChange(self.name, payload.name, "-", "the top level is not an object of model entries")
        entries = {k: v for k, v in table.items() if isinstance(v, dict)}
        if not any("litellm_provider" in v for v in entries.values()):
            raise FormatChange(self.name, payload.name, "litellm_provider")
        chat = {k: v for k, v in sorted(entries.items())
                if v.get("mode") == "chat" and v.get("litellm_provider") in PROVIDERS}
        if not chat:
            raise FormatChange(self.name, payload.name, "mode", "no entry has mode 'chat' from a known provider")
        for field in PRICE_FIELDS:
            if not any(field in v for v in chat.values()):
                raise FormatChange(self.name, payload.name, field)
        rows = [{
            "raw_name": key, "provider": PROVIDERS[v["litellm_provider"]],
            "input_usd_per_mtok": scaled(v.get("input_cost_per_token") or 0, 1e6),
            "output_usd_per_mtok": scaled(v.get("output_cost_per_token") or 0, 1e6),
            "cache_read_usd_per_mtok": scaled(v.get("cache_read_input_token_cost"), 1e6),
        } for key, v in chat.items()]
        meta = [{"raw_name": key, "context_window": v.get("max_input_tokens"), "reasoning": v.get("supports_reasoning"),
                 "tool_use": v.get("supports_function_calling"),
                 "organization": None if v["litellm_provider"] in RESELLERS
                 else ORGANIZATIONS.get(v["litellm_provider"], v["litellm_provider"])}
                for key, v in chat.items()]
        as_of = payload.as_of or dt.date.today()
        return screen(self.name, payload.name, {"model_costs": frame(pd.DataFrame(rows), COST_COLS, self.source, as_of),
                                                "models": frame(meta, META_COLS, self.source, as_of)})
