"""Per-dataset extracts of the shared raw tables: the only inputs of the cascade and oracle partitions.

datasets/records[d] publishes d's rows of raw.query_records (datasets.query_records);
datasets/prices[d] the cheapest price of each of d's models, only when d's records
lack a complete per-call cost (datasets.model_prices). Why: `compass.ingest.extracts`.
Both price extracts of the per-query data (datasets/prices, router/prices) read
datasets/model_costs, the prices of the models that data names, so a price change
of any other model stops there instead of re-running every partition.
"""

import dagster as dg

from assets.partitions import dataset_partitions
from compass.ingest.extracts import dataset_prices, mentioned_prices
from resources import readers, settings
from resources.publish import publish_many
from resources.query_extract import cost_rows, publish_records_view
from resources.warehouse import WarehouseResource

CODE_VERSION = "datasets-4"
DATASET_RECORDS = dg.AssetKey(["datasets", "records"])
DATASET_PRICES = dg.AssetKey(["datasets", "prices"])
PER_QUERY_MODEL_COSTS = dg.AssetKey(["datasets", "model_costs"])
_common = dict(partitions_def=dataset_partitions, group_name="datasets", code_version=CODE_VERSION,
               pool=settings.writer_pool())


@dg.asset(key=DATASET_RECORDS, deps=[dg.AssetKey(["raw", "query_records"])], **_common)
def dataset_records(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One dataset's rows of raw.query_records, in a fixed column order (`compass.ingest.extracts.own_columns`),
    published as a view that reads them where raw.query_records stores them, pinned to the version it read
    (`resources.query_extract.publish_records_view`): one physical copy of each row (issue 45). No history of its
    own: each version is d's own columns of a version of raw.query_records, which keeps its history as row ranges."""
    wh, dataset = warehouse.get(), context.partition_key
    n_models = wh.query("select count(distinct model_id) as n from raw.query_records where dataset = ?", [dataset])
    return publish_records_view(context, wh, dataset, metadata={"n_models": int(n_models["n"].iloc[0])})


@dg.asset(key=PER_QUERY_MODEL_COSTS, group_name="datasets", code_version=CODE_VERSION, pool=settings.writer_pool(),
          deps=[dg.AssetKey(["raw", t]) for t in ("model_costs", "query_records", "route_labels")])
def per_query_model_costs(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The cheapest price of every model raw.query_records or raw.route_labels names (datasets.model_costs)."""
    wh = warehouse.get()
    table = mentioned_prices(wh.read("raw.model_costs"), readers.per_query_models(wh))
    return publish_many(context, wh, {"datasets.model_costs": table}, history=False,
                        metadata={"n_priced_models": len(table)})


@dg.asset(key=DATASET_PRICES, deps=[dg.AssetKey(["raw", "query_records"]), PER_QUERY_MODEL_COSTS], **_common)
def dataset_model_prices(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The cheapest price of each of the dataset's models, when its records carry no per-call cost."""
    wh, dataset = warehouse.get(), context.partition_key
    prices = dataset_prices(cost_rows(wh, dataset), wh.read("datasets.model_costs")).assign(dataset=dataset)
    return publish_many(context, wh, {"datasets.model_prices": prices}, {"dataset": dataset},
                        metadata={"n_priced_models": len(prices)})


dataset_assets = [per_query_model_costs, dataset_records, dataset_model_prices]
