"""Refresh operations for `dagster dev` / the daemon: the inbox sensor, the daily schedule, declarative automation.

- `inbox_sensor` runs `pipelines.inbox.process_inbox` and requests a run of the
  raw source assets of the tables it accepted files for. Its cursor keeps the
  content digests of accepted deliveries and its run key is the digest of the
  accepted files, so a delivery is never applied twice.
- `daily_raw_refresh` fetches the config's live sources (`live/fetches`: conditional requests, so an unchanged
  upstream is a 304) and re-reads every raw source at 06:00 UTC; an unchanged source keeps its data version.
- `compass_automation` evaluates every asset's automation condition
  (assets.automation.REFRESH_CONDITION), so only assets whose parents got a new data
  version re-run: the same logic `pipelines.refresh.refresh` ticks in-process.
"""

from __future__ import annotations

import hashlib
import json
import warnings

import dagster as dg

from assets.live_sources import FETCH_KEY
from assets.sources import RAW_KEYS
from compass.ingest.load import TABLE_ORDER
from pipelines.inbox import content_digest, process_inbox
from resources.settings import accepted_dir, inbox_dir
from resources.warehouse import Warehouse, WarehouseResource

# The cursor remembers this many accepted deliveries (content digests).
CURSOR_LIMIT = 1000

raw_sources_job = dg.define_asset_job(
    "raw_sources",
    selection=dg.AssetSelection.key_prefixes("raw") | dg.AssetSelection.assets(FETCH_KEY),
    description="Fetch the live sources, re-read every raw source; declarative automation refreshes whatever got a "
                "new data version.",
)

daily_raw_refresh = dg.ScheduleDefinition(
    name="daily_raw_refresh",
    job=raw_sources_job,
    cron_schedule="0 6 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="06:00 UTC: fetch the live sources and materialize the raw source assets.",
)

# use_user_code_server is beta in Dagster 1.13; the warning would print on every import of the definitions.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)
    compass_automation = dg.AutomationConditionSensorDefinition(
        "compass_automation",
        target=dg.AssetSelection.all(),
        default_status=dg.DefaultSensorStatus.RUNNING,
        # REFRESH_CONDITION holds a Python operand (assets.automation.AncestorPending): evaluate in the code server.
        use_user_code_server=True,
        # One run per requested partition key (as BackfillPolicy.multi_run(1)), not a backfill per tick.
        emit_backfills=False,
        # Dagster's default, stated: the daemon ticks at most every 30 s, not when a run ends (pipelines.queue_refresh
        # ticks within 0.25 s of a run's end; its measured step shares are not the daemon's). `compass run` ignores it.
        minimum_interval_seconds=30,
        description="Declarative automation over every asset: refresh only what a new data version reached.",
    )


IN_FLIGHT = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
             dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def _refresh_in_flight(instance: dg.DagsterInstance, wh: Warehouse) -> str:
    """Why the inbox must wait ('' when it need not): a `compass run` holds the refresh lock, or Dagster runs are
    queued or running. Accepting a file then would let one raw asset of the refresh see it and another not."""
    status = wh.refresh_status()
    if status != "idle":
        return status
    running = instance.get_runs_count(dg.RunsFilter(statuses=IN_FLIGHT))
    return f"{running} run(s) in flight" if running else ""


def _applied(cursor: str | None) -> list[str]:
    return list(json.loads(cursor)["applied"]) if cursor else []


@dg.sensor(
    name="inbox_sensor",
    job=raw_sources_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Validate files dropped into the inbox (COMPASS_INBOX); accepted ones re-run their raw source assets.",
)
def inbox_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource) -> dg.SensorResult:
    busy = _refresh_in_flight(context.instance, warehouse.get())
    if busy:  # a delivery is applied between refreshes, never into the middle of one (issue 17)
        return dg.SensorResult(skip_reason=f"{busy}: delivered files wait in the inbox", cursor=context.cursor)
    applied = _applied(context.cursor)
    result = process_inbox(inbox_dir(), accepted_dir(), warehouse.get(), already_applied=set(applied))
    for path, error in result.rejected:
        context.log.warning(f"rejected {path.name}: {error}")
    if not result.accepted:
        reason = f"{len(result.rejected)} file(s) rejected" if result.rejected else "inbox empty"
        return dg.SensorResult(skip_reason=reason, cursor=context.cursor)
    digests = sorted(content_digest(path) for _, path in result.accepted)
    tables = sorted({table for table, _ in result.accepted}, key=TABLE_ORDER.index)
    run_key = "inbox-" + hashlib.sha256("|".join(digests).encode()).hexdigest()[:16]
    request = dg.RunRequest(
        run_key=run_key,
        asset_selection=[RAW_KEYS[t] for t in tables],
        tags={"compass/inbox_files": ",".join(path.name for _, path in result.accepted)[:200]},
    )
    cursor = json.dumps({"applied": (applied + digests)[-CURSOR_LIMIT:]})
    return dg.SensorResult(run_requests=[request], cursor=cursor)


SENSORS = [inbox_sensor, compass_automation]
SCHEDULES = [daily_raw_refresh]
JOBS = [raw_sources_job]
