"""Per-dataset extracts of the shared raw tables: the only inputs of the cascade and oracle partitions.

raw.query_records and raw.model_costs are single tables, so every change to
them would re-run every dataset's cascade and oracle partitions. This asset
splits them by dataset: partition d publishes d's records and the cheapest
price of each of d's models. It is cheap (read, hash, skip the write when
unchanged), and its data version changes only when d's own rows or its
models' prices changed, so a new dataset or a price of an unrelated model
re-runs no cascade or oracle work.

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

CODE_VERSION = "datasets-2"
DATASET_INPUTS = dg.AssetKey(["datasets", "inputs"])
PRICE_COLUMNS = ["model_id", "provider", "input_usd_per_mtok", "output_usd_per_mtok", "blended_usd_per_mtok"]


def cheapest_prices(model_costs: pd.DataFrame) -> pd.DataFrame:
    """Per model, the provider row with the lowest blended USD/Mtok: [model_id, provider, input, output, blended]."""
    if model_costs.empty:
        return pd.DataFrame(columns=PRICE_COLUMNS)
    priced = model_costs.dropna(subset=["blended_usd_per_mtok"]).sort_values(["model_id", "blended_usd_per_mtok"])
    return priced.drop_duplicates("model_id")[PRICE_COLUMNS].reset_index(drop=True)


def dataset_prices(records: pd.DataFrame, model_costs: pd.DataFrame) -> pd.DataFrame:
    """The cheapest price of every model that answers in `records` (models without a price are absent)."""
    prices = cheapest_prices(model_costs)
    return prices[prices["model_id"].isin(records["model_id"].unique())].reset_index(drop=True)


def own_columns(records: pd.DataFrame) -> pd.DataFrame:
    """Drop the optional columns that are empty for this dataset (key columns stay).

    raw.query_records holds the union of every file's columns, so a new dataset
    bringing e.g. latency_ms would otherwise add an all-null column here and
    change this dataset's data version without changing its data.
    """
    key = RAW_TABLES["query_records"].key
    return records.drop(columns=[c for c in records.columns if c not in key and records[c].isna().all()])


def read_dataset_inputs(wh: Warehouse, dataset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(records, prices) of one dataset as its extract published them; ValueError when it was never extracted."""
    where = {"dataset": dataset}
    records = wh.read("datasets.query_records", where).drop(columns=STAMP_COLUMNS, errors="ignore")
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in datasets.query_records; materialize datasets/inputs first")
    prices = wh.read("datasets.model_prices", where)
    return records, (prices[PRICE_COLUMNS] if not prices.empty else pd.DataFrame(columns=PRICE_COLUMNS))


@dg.asset(
    key=DATASET_INPUTS,
    deps=[dg.AssetKey(["raw", "query_records"]), dg.AssetKey(["raw", "model_costs"])],
    partitions_def=dataset_partitions,
    group_name="datasets",
    pool=WRITER_POOL,
    automation_condition=REFRESH_CONDITION,
    code_version=CODE_VERSION,
    kinds={"duckdb"},
)
def dataset_inputs(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One dataset's query records and its models' cheapest prices (see the module docstring)."""
    wh, dataset = warehouse.get(), context.partition_key
    # Without raw's stamps: a new dataset rewrites every raw row, which must not change this dataset's version.
    records = own_columns(wh.read("raw.query_records", {"dataset": dataset}).drop(columns=STAMP_COLUMNS, errors="ignore"))
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in raw.query_records")
    records = records.sort_values(["split", "query_id", "model_id", "generation"], na_position="first")
    prices = dataset_prices(records, wh.read("raw.model_costs")).assign(dataset=dataset)
    tables = {"datasets.query_records": records.reset_index(drop=True), "datasets.model_prices": prices}
    return publish_many(context, wh, tables, {"dataset": dataset},
                        metadata={"n_models": int(records["model_id"].nunique()), "n_priced_models": len(prices)})
