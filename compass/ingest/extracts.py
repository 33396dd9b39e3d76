"""Per-dataset extracts of the shared raw tables (what the `datasets/*` assets publish).

raw.query_records and raw.model_costs are single tables, so every change to
them would re-run every dataset's cascade and oracle partitions. The extracts
split them by dataset:

* records: d's rows of raw.query_records in a fixed column order (`own_columns`),
  so its data version changes only when d's own rows do;
* prices: the cheapest price of each of d's models, and only when d's records
  lack a complete per-call `cost_usd` (otherwise nothing reads a price, so the
  extract is empty and a price change leaves d alone). Cascades never read prices.
"""

from __future__ import annotations

import pandas as pd

from compass.ingest.schemas import RAW_TABLES

PRICE_COLUMNS = ["model_id", "provider", "input_usd_per_mtok", "output_usd_per_mtok", "blended_usd_per_mtok"]

__all__ = ["PRICE_COLUMNS", "no_prices", "cheapest_prices", "mentioned_prices", "dataset_prices", "own_columns"]


def no_prices() -> pd.DataFrame:
    """An empty price frame with the column types (so an empty extract never creates text price columns)."""
    return pd.DataFrame({c: pd.Series(dtype="string" if c in ("model_id", "provider") else float)
                         for c in PRICE_COLUMNS})


def cheapest_prices(model_costs: pd.DataFrame) -> pd.DataFrame:
    """Per model, the provider row with the lowest blended USD/Mtok: [model_id, provider, input, output, blended]."""
    if model_costs.empty:
        return no_prices()
    priced = model_costs.dropna(subset=["blended_usd_per_mtok"]).sort_values(["model_id", "blended_usd_per_mtok"])
    return priced.drop_duplicates("model_id")[PRICE_COLUMNS].reset_index(drop=True)


def mentioned_prices(model_costs: pd.DataFrame, model_ids: list[str]) -> pd.DataFrame:
    """The cheapest price (`cheapest_prices`) of each of `model_ids`, sorted by model. Its rows are their own
    cheapest prices, so `cheapest_prices` and `dataset_prices` give the same answer on it as on all of
    `model_costs` for these models."""
    prices = cheapest_prices(model_costs)
    return prices[prices["model_id"].isin(model_ids)].sort_values("model_id").reset_index(drop=True)


def dataset_prices(records: pd.DataFrame, model_costs: pd.DataFrame) -> pd.DataFrame:
    """The cheapest price of each model answering in `records`; none when every record has its own cost_usd."""
    if "cost_usd" in records.columns and records["cost_usd"].notna().all():
        return no_prices()
    prices = cheapest_prices(model_costs)
    return prices[prices["model_id"].isin(records["model_id"].unique())].reset_index(drop=True)


def own_columns(records: pd.DataFrame) -> pd.DataFrame:
    """The dataset's columns in a fixed order: schema columns, then extras sorted; empty optional ones dropped.

    raw.query_records holds the union of every file's columns, in file order, so
    a new dataset bringing e.g. latency_ms would otherwise add an all-null column
    here (or reorder them) and change this dataset's data version without
    changing its data. Key columns stay even when empty.
    """
    schema = RAW_TABLES["query_records"]
    kept = [c for c in records.columns if c in schema.key or records[c].notna().any()]
    ordered = [c for c in schema.column_names if c in kept] + sorted(c for c in kept if c not in schema.column_names)
    return records[ordered]
