"""Raw source assets: one per canonical table, written to the `raw` schema.

Each asset reads its configured files, validates them (errors name file, row
and column), resolves model names through the alias table, and replaces the
table in one transaction. Its data version is the content hash of what it
wrote, so an unchanged input leaves everything downstream fresh; the hash of
its inputs goes into its metadata, so `compass run` skips a source whose
inputs did not change.
"""

import warnings

import dagster as dg

from assets.live_sources import FETCH_KEY
from compass.ingest.errors import IngestWarning
from compass.ingest.ingest import ingest_table, price_moves
from compass.ingest.load import TABLE_ORDER
from compass.ingest.schemas import RAW_TABLES, model_columns
from resources import readers, settings
from resources.publish import publish, publish_staged
from resources.query_ingest import query_records_stager
from resources.sources import SourcesResource
from resources.warehouse import WarehouseResource

RAW_CODE_VERSION = "raw-1"
# Metadata key of the content hash of a raw table's inputs (SourcesResource.input_digest): a refresh re-reads a
# source only when it changed (pipelines.refresh.sources_to_read).
INPUT_DIGEST = "input_digest"
# Tables whose model names resolve through raw.models and raw.model_aliases.
_RESOLVED = [t for t in TABLE_ORDER if t != "models"]


RAW_KEYS = {table: dg.AssetKey(["raw", table]) for table in TABLE_ORDER}


def _raw_asset(table: str) -> dg.AssetsDefinition:
    # live/fetches stages the live sources' tables first (a schedule's run of every raw asset fetches, then reads).
    deps = [FETCH_KEY] + ([] if table == "models" else
                          [RAW_KEYS["models"]] + ([RAW_KEYS["model_aliases"]] if table != "model_aliases" else []))

    @dg.asset(
        key=RAW_KEYS[table],
        deps=deps,
        group_name="sources",
        code_version=RAW_CODE_VERSION,
        pool=settings.writer_pool(),
        description=RAW_TABLES[table].doc,
    )
    def _asset(context: dg.AssetExecutionContext, warehouse: WarehouseResource, sources: SourcesResource) -> dg.MaterializeResult:
        wh = warehouse.get()
        files = sources.files(table)
        lookup = readers.model_lookup(wh) if table in _RESOLVED else None
        meta = {"files": [str(f.path) for f in files], INPUT_DIGEST: sources.input_digest(table)}
        if table == "query_records":  # out of core: never a DataFrame (resources.query_ingest, issue 45)
            return publish_staged(context, wh, "raw.query_records", query_records_stager(files, lookup),
                                  metadata=meta)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", IngestWarning)
            frame = ingest_table(table, files, lookup)
            moved = price_moves(frame, wh.read("raw.model_costs")) if table == "model_costs" else frame.iloc[0:0]
        for w in caught:
            context.log.warning(str(w.message))
        meta["price_moves_over_10x"] = len(moved)
        return publish(context, wh, f"raw.{table}", frame, metadata=meta)

    return _asset


raw_assets = [_raw_asset(t) for t in TABLE_ORDER]


def _integrity_check(table: str) -> dg.AssetChecksDefinition:
    """Blocking check: every model name (model_id; model_p and model_a) in the table is a canonical model, and keys are unique."""

    @dg.asset_check(asset=RAW_KEYS[table], name="keys_and_models_valid", blocking=True,
                    description=f"Blocking: raw.{table} has unique keys and every model_id is a canonical model.")
    def _check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        wh = warehouse.get()
        rows, dup, unknown = readers.key_and_model_faults(wh, f"raw.{table}", list(RAW_TABLES[table].key),
                                                          [] if table == "models" else model_columns(RAW_TABLES[table]))
        return dg.AssetCheckResult(
            passed=dup == 0 and unknown == 0,
            metadata={"duplicate_keys": dup, "unknown_model_ids": unknown, "rows": rows},
        )

    return _check


raw_checks = [_integrity_check(t) for t in TABLE_ORDER]


@dg.asset_check(asset=RAW_KEYS["model_costs"], name="no_price_moved_over_10x", blocking=False)
def price_move_check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    """Warn (not block) when a blended price moved more than 10x against the previous snapshot."""
    event = context.instance.get_latest_materialization_event(RAW_KEYS["model_costs"])
    moved = 0
    if event is not None and event.asset_materialization is not None:
        moved = int(event.asset_materialization.metadata["price_moves_over_10x"].value)
    return dg.AssetCheckResult(passed=moved == 0, severity=dg.AssetCheckSeverity.WARN, metadata={"moved": moved})

