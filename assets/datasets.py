"""Per-dataset extracts of the shared raw tables: the only inputs of the cascade and oracle partitions.

raw.query_records and raw.model_costs are single tables, so every change to
them would re-run every dataset's cascade and oracle partitions. Two cheap
assets split them by dataset (read, hash, skip the write when unchanged):

* datasets/records[d]: d's rows of raw.query_records. Cascade and oracle
  partitions read it; its data version changes only when d's own rows do.
* datasets/prices[d]: the cheapest price of each of d's models, and only when
  d's records lack a complete per-call `cost_usd` (otherwise nothing reads a
  price, so the extract is empty and a price change leaves d alone). Only the
  oracle partitions read it; cascades never depend on prices.

Tables: datasets.query_records (raw.query_records columns, rows of the dataset)
and datasets.model_prices [dataset, model_id, provider, input_usd_per_mtok,
output_usd_per_mtok, blended_usd_per_mtok].
"""

import dagster as dg
import pandas as pd

from assets.automation import REFRESH_CONDITION
from assets.common import STAMP_COLUMNS, WRITER_POOL, publish_many
from compass.ingest.schemas import RAW_TABLES
from pipelines.partitions import dataset_partitions
from resources.warehouse import Warehouse, WarehouseResource

CODE_VERSION = "datasets-3"
DATASET_RECORDS = dg.AssetKey(["datasets", "records"])
DATASET_PRICES = dg.AssetKey(["datasets", "prices"])
PRICE_COLUMNS = ["model_id", "provider", "input_usd_per_mtok", "output_usd_per_mtok", "blended_usd_per_mtok"]
_common = dict(partitions_def=dataset_partitions, group_name="datasets", pool=WRITER_POOL,
               automation_condition=REFRESH_CONDITION, code_version=CODE_VERSION, kinds={"duckdb"})


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


def _raw_records(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """d's rows of raw.query_records without raw's stamps (a new dataset rewrites every raw row)."""
    records = wh.read("raw.query_records", {"dataset": dataset}).drop(columns=STAMP_COLUMNS, errors="ignore")
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in raw.query_records")
    return own_columns(records)


def read_dataset_records(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """One dataset's records as its extract published them; ValueError when it was never extracted."""
    records = wh.read("datasets.query_records", {"dataset": dataset}).drop(columns=STAMP_COLUMNS, errors="ignore")
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in datasets.query_records; materialize datasets/records first")
    return records


def read_dataset_prices(wh: Warehouse, dataset: str) -> pd.DataFrame:
    prices = wh.read("datasets.model_prices", {"dataset": dataset})
    return prices[PRICE_COLUMNS] if not prices.empty else no_prices()


@dg.asset(key=DATASET_RECORDS, deps=[dg.AssetKey(["raw", "query_records"])], **_common)
def dataset_records(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One dataset's rows of raw.query_records (see the module docstring)."""
    wh, dataset = warehouse.get(), context.partition_key
    records = _raw_records(wh, dataset).sort_values(["split", "query_id", "model_id", "generation"], na_position="first")
    return publish_many(context, wh, {"datasets.query_records": records.reset_index(drop=True)}, {"dataset": dataset},
                        metadata={"n_models": int(records["model_id"].nunique())})


@dg.asset(key=DATASET_PRICES, deps=[dg.AssetKey(["raw", "query_records"]), dg.AssetKey(["raw", "model_costs"])],
          **_common)
def dataset_model_prices(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The cheapest price of each of the dataset's models, when its records carry no per-call cost."""
    wh, dataset = warehouse.get(), context.partition_key
    prices = dataset_prices(_raw_records(wh, dataset), wh.read("raw.model_costs")).assign(dataset=dataset)
    return publish_many(context, wh, {"datasets.model_prices": prices}, {"dataset": dataset},
                        metadata={"n_priced_models": len(prices)})


dataset_assets = [dataset_records, dataset_model_prices]
