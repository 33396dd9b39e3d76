"""models.dev catalogue (`api.json`, MIT; plain or gzip-compressed): provider -> models.

Every provider is read (147 in the 2026-07-02 snapshot), so a model from any lab gets its price and
metadata. Which rows count, by a stated rule:

* a row's *developer* is the known developer (`compass.ingest.organizations.is_developer`: `anthropic`,
  `xai`, `stepfun`, ...) its id's prefix names (`moonshotai/kimi-k2` -> Moonshot AI), else, for an id
  without a prefix, the provider itself when it is a known developer, else unknown (`route/...`, `TEE/...`);
* a row is *first-party* when its provider is its developer (`anthropic/claude-opus-5`, `zai/glm-5.2`);
* prices (`cost.input` / `cost.output` and, where given, `cost.cache_read`, already USD per 1M tokens): every first-party row and every
  togetherai row (open models, as before the other providers were read), and, for a model (canonical id)
  that neither its developer nor togetherai serves (LMArena's `step-3`), every provider's row (provider =
  the models.dev provider id, `-` -> `_`);
* metadata (display name, release date, open weights, reasoning, context window, input modalities,
  tool calling, developer): one row per spelling (alias key), each field the first non-null value over the spelling's
  rows in the order first-party, then rows whose id names the developer, then the rest by provider id.
`as_of` defaults to the newest `last_updated` in the file.
"""

from __future__ import annotations

import pandas as pd

from compass.ingest.aliases import alias_key
from compass.ingest.canonical import canonical_id
from compass.ingest.connectors.base import (
    COST_COLS, META_COLS, FormatChange, Parsed, Payload, SingleFile,
    expect, frame, read_json, screen, to_date,
)
from compass.ingest.organizations import canonical_organization, is_developer

# models.dev provider ids whose price rows keep the provider ids the other connectors use.
PROVIDER_IDS = {"moonshotai": "moonshot", "togetherai": "together_ai"}
# Resellers whose rows are always priced (open models), first-party or not; read before every provider was.
ALWAYS_PRICED = {"togetherai"}


def developer(provider: str, model: str) -> str | None:
    """The organisation behind a provider's model row (module docstring), None when unknown."""
    owner = model.split("/")[0] if "/" in model else provider
    return canonical_organization(owner) if is_developer(owner) else None


def _rows(name: str, catalog: dict) -> pd.DataFrame:
    rows = []
    for pid in sorted(catalog):
        provider = expect(ModelsDev.name, name, catalog[pid], dict, pid)
        if "models" not in provider:
            raise FormatChange(ModelsDev.name, name, f"{pid}.models")
        for mid, m in sorted(expect(ModelsDev.name, name, provider["models"], dict, f"{pid}.models").items()):
            m = m if isinstance(m, dict) else {}  # not an object: a row without a price (screen drops it)
            cost, dev = m.get("cost") if isinstance(m.get("cost"), dict) else {}, developer(pid, mid)
            rows.append({
                "pid": pid, "raw_name": mid, "has_cost": "cost" in m, "updated": m.get("last_updated"),
                "input_usd_per_mtok": cost.get("input", 0), "output_usd_per_mtok": cost.get("output", 0),
                "cache_read_usd_per_mtok": cost.get("cache_read"),
                "first_party": dev is not None and dev == canonical_organization(pid), "names_developer": dev is not None and "/" in mid,
                "display_name": m.get("name"), "release_date": m.get("release_date"), "organization": dev,
                "open_weights": m.get("open_weights"), "reasoning": m.get("reasoning"),
                "context_window": (m.get("limit") or {}).get("context") or None,
                "modality": "+".join(sorted((m.get("modalities") or {}).get("input") or [])) or None,
                "tool_use": m.get("tool_call"),
            })
    return pd.DataFrame(rows)


class ModelsDev(SingleFile):
    name = "models_dev"
    source = "models_dev"

    def parse(self, payload: Payload) -> Parsed:
        catalog = expect(self.name, payload.name, read_json(self.name, payload.name, payload.main()), dict, "-")
        if not catalog:
            raise FormatChange(self.name, payload.name, "-", "no provider at the top level")
        rows = _rows(payload.name, catalog)
        if rows.empty or not rows["has_cost"].any():
            raise FormatChange(self.name, payload.name, "cost")
        rows["model_id"] = rows["raw_name"].map(canonical_id)
        always = rows["first_party"] | rows["pid"].isin(ALWAYS_PRICED)
        priced = always | ~rows["model_id"].isin(set(rows.loc[always, "model_id"]))
        costs = rows[priced].assign(provider=rows["pid"].map(lambda p: PROVIDER_IDS.get(p, p.replace("-", "_"))))
        ordered = rows.assign(key=rows["raw_name"].map(alias_key)).sort_values(
            ["key", "first_party", "names_developer", "pid"], ascending=[True, False, False, True], kind="stable")
        meta = ordered.groupby("key", sort=True).first()  # first non-null value per field
        meta["release_date"] = to_date(meta["release_date"])
        updated = to_date(rows["updated"].dropna())
        as_of = payload.as_of or max(updated.dropna())
        return screen(self.name, payload.name, {
            "model_costs": frame(costs, COST_COLS, self.source, as_of),
            "models": frame(meta.reset_index(drop=True), META_COLS, self.source, as_of)})
