"""The live-sources asset `live/fetches` (its tables are raw.fetches and raw.unmatched_names): fetch, parse, match and stage every `connector:` entry of the source config
(resources.live_sources), log each fetch in raw.fetches and the names held back or brought in in
raw.unmatched_names. The raw table assets read what it staged, so they depend on it (a schedule's run fetches
first). Its data version changes only when what a source delivers changes: a refresh whose fetches all got 304
leaves it, and so everything below, as it was. The `sources_fresh` check warns when a failing source's kept data
is older than the config's `stale_after_hours`.
"""

import json

import dagster as dg
import pandas as pd

from resources import settings
from resources.live_sources import FETCH_COLUMNS, UNMATCHED_COLUMNS, refresh_live_sources
from resources.sources import SourcesResource
from resources.warehouse import WarehouseResource

# Not under `raw/`: the raw/* keys are the file sources `compass run` reads when their inputs changed
# (pipelines.refresh.sources_to_read); this one runs first in every refresh of a config with live sources.
FETCH_KEY = dg.AssetKey(["live", "fetches"])
FAILED, STALE = "failed_sources", "stale_sources"


@dg.asset(key=FETCH_KEY, group_name="sources", code_version="fetches-1", pool=settings.writer_pool(),
          description="Fetch log of the live sources (connector, url, status, bytes, sha256, etag, last_modified, "
                      "fetched_at) and raw.unmatched_names: each `connector:` entry fetched, parsed and staged.")
def raw_fetches(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                sources: SourcesResource) -> dg.MaterializeResult:
    wh = warehouse.get()
    config = sources.config()
    outcome = refresh_live_sources(config)
    # Validation before any write (issue 43): the staged connector files and the canonical files are checked together
    # before raw.fetches and raw.unmatched_names change, so rejected input leaves every warehouse table as it was.
    sources.validate()
    for line in outcome.failures:
        context.log.warning(line)
    for location, rows in outcome.dropped.items():
        context.log.warning(f"source {location}: {rows} row(s) could not be read and were left out")
    stale = outcome.stale(config.stale_after_hours)
    stamp = {"data_version": outcome.version, "run_id": context.run.run_id,
             "refreshed_at": pd.Timestamp.now(tz="UTC").floor("s").tz_localize(None)}
    log = pd.concat([wh.read("raw.fetches"), outcome.fetches.assign(**stamp)], ignore_index=True)
    log = log.reindex(columns=FETCH_COLUMNS + list(stamp))  # a log from before a column was added: null there
    log["rows_dropped"] = log["rows_dropped"].astype("Int64")
    wh.replace_many([("raw.fetches", log[FETCH_COLUMNS + list(stamp)], None, None),
                     ("raw.unmatched_names", outcome.unmatched.assign(**stamp)[UNMATCHED_COLUMNS + list(stamp)],
                      None, None)])
    counts = outcome.unmatched["status"].value_counts()
    return dg.MaterializeResult(data_version=dg.DataVersion(outcome.version), metadata={
        FAILED: json.dumps(outcome.failures), STALE: json.dumps(stale), "sources": len(config.connectors),
        "failed": len(outcome.failed), "fetches": len(outcome.fetches), "rows_dropped": json.dumps(outcome.dropped),
        "new_models": int(counts.get("new", 0)), "names_pending": int(counts.get("pending", 0)),
        "names_unmatched": int(counts.get("unmatched", 0))})


@dg.asset_check(asset=FETCH_KEY, name="sources_fresh", blocking=False,
                description="Warn when a live source failed and the data kept for it is older than stale_after_hours.")
def sources_fresh(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    event = context.instance.get_latest_materialization_event(FETCH_KEY)
    meta = event.asset_materialization.metadata if event is not None and event.asset_materialization else {}
    stale = json.loads(meta[STALE].value) if STALE in meta else []
    failures = json.loads(meta[FAILED].value) if FAILED in meta else []
    return dg.AssetCheckResult(passed=not stale, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"stale": ", ".join(stale) or "none", "failures": "\n".join(failures) or "none"})
