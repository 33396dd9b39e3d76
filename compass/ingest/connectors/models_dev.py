"""models.dev catalogue (`api.json`, MIT; plain or gzip-compressed): provider -> models.

First-party providers (plus togetherai for open models) give prices (`cost.input` / `cost.output`,
already USD per 1M tokens) and metadata: display name, release date, open weights, reasoning,
context window, and the organisation (the first-party provider's id; none for togetherai).
`as_of` defaults to the newest `last_updated` in the file.
"""

from __future__ import annotations

import pandas as pd

from compass.ingest.connectors.base import (
    COST_COLS, META_COLS, FormatChange, Parsed, Payload, SingleFile,
    expect, frame, plausible_prices, read_json, to_date,
)

# First-party models.dev providers (plus togetherai for open models) -> our provider id.
PROVIDERS = {
    "openai": "openai", "anthropic": "anthropic", "google": "google", "mistral": "mistral",
    "deepseek": "deepseek", "xai": "xai", "alibaba": "alibaba", "moonshotai": "moonshot", "zai": "zai",
    "cohere": "cohere", "togetherai": "together_ai",
}
RESELLERS = {"togetherai"}


class ModelsDev(SingleFile):
    name = "models_dev"
    source = "models_dev"

    def parse(self, payload: Payload) -> Parsed:
        catalog = expect(self.name, payload.name, read_json(self.name, payload.name, payload.main()), dict, "-")
        present = [p for p in sorted(PROVIDERS) if p in catalog]
        if not present:
            raise FormatChange(self.name, payload.name, "openai",
                               "no first-party provider (openai, anthropic, ...) at the top level")
        rows, meta, updated = [], [], []
        for pid in present:
            provider = expect(self.name, payload.name, catalog[pid], dict, pid)
            if "models" not in provider:
                raise FormatChange(self.name, payload.name, f"{pid}.models")
            for mid, m in sorted(expect(self.name, payload.name, provider["models"], dict, f"{pid}.models").items()):
                updated.append(m.get("last_updated"))
                cost = m.get("cost") or {}
                rows.append({"raw_name": mid, "provider": PROVIDERS[pid],
                             "input_usd_per_mtok": cost.get("input", 0), "output_usd_per_mtok": cost.get("output", 0)})
                meta.append({
                    "raw_name": mid, "display_name": m.get("name"), "release_date": m.get("release_date"),
                    "organization": None if pid in RESELLERS else pid,
                    "open_weights": m.get("open_weights"), "reasoning": m.get("reasoning"),
                    "context_window": (m.get("limit") or {}).get("context") or None,
                })
        if not any("cost" in m for p in present for m in catalog[p]["models"].values()):
            raise FormatChange(self.name, payload.name, "cost")
        as_of = payload.as_of or max(to_date(pd.Series([u for u in updated if u], dtype=object)).dropna())
        costs, dropped = plausible_prices(pd.DataFrame(rows))
        meta_df = pd.DataFrame(meta)
        meta_df["release_date"] = to_date(meta_df["release_date"])
        return Parsed({"model_costs": frame(costs, COST_COLS, self.source, as_of),
                       "models": frame(meta_df, META_COLS, self.source, as_of)}, dropped)
