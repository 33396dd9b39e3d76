"""The publish step of a step without the warehouse file (issue 44 item 2; resources.stage): a Celery task on the
warehouse host's `duckdb` queue commits the transactions the step staged, in one DuckDB transaction, and the step waits
for it before it returns, so the data version Dagster records for it is already in the warehouse, and its successors
(on any queue) read its rows there. A step whose publish fails fails (its entries are not published later: nothing
else publishes a stage; unless the host claimed them first, resources.stage.Stage.publish_pending, and commits them); the task is acknowledged late like the steps, so a publishing worker killed mid-commit (rolled
back) hands it to the next one, which commits it whole.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from celery.exceptions import TimeoutError as CeleryTimeout

from resources import settings, stage
from resources.warehouse import Warehouse

if TYPE_CHECKING:
    from celery import Celery

TASK = "compass.publish_stage"
LOG = logging.getLogger(__name__)
# for the host's duckdb queue (a publish waits behind the writer steps already queued there); below the stage's
# GC_GRACE_S, after which an entry still pending counts as abandoned
WAIT_S = 1800


def publish_on_host(url: str, entries: list[str]) -> int:
    """The task's body on the warehouse host: commit `entries` of the stage `url`; the number committed now (0: all
    committed before, e.g. the task delivered twice). RuntimeError when this host does not publish that stage."""
    if (settings.publish_from() or "").rstrip("/") != url.rstrip("/"):
        raise RuntimeError(f"this worker does not publish the stage {url} (COMPASS_PUBLISH_FROM="
                           f"{settings.publish_from() or 'unset'}): start the warehouse host's workers with it")
    return Warehouse().publish_stage(entries)


def register(app: Celery) -> None:
    """The task on `app` (every worker), and the stage's publisher on the workers that stage (queue `remote`)."""
    from pipelines.executor import WRITER_QUEUE

    task = app.task(name=TASK)(publish_on_host)

    def through_the_host(url: str, entries: list[str]) -> int:
        asked = time.monotonic()
        result = task.apply_async(args=[url, entries], queue=WRITER_QUEUE, routing_key=f"{WRITER_QUEUE}.{TASK}")
        try:
            committed = result.get(timeout=WAIT_S, disable_sync_subtasks=False)  # another queue's worker: no self-wait
        except CeleryTimeout:
            result.revoke()  # still queued: it never runs (a worker that already runs it commits or finds it set aside)
            raise
        LOG.info("the warehouse host published %s of %s in %.2f s", committed, ", ".join(entries),
                 time.monotonic() - asked)
        return committed

    stage.set_publisher(through_the_host)
