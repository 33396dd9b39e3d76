"""The publish step of a step without the warehouse file (issue 44 item 2; resources.stage): a Celery task on the
warehouse host's `duckdb` queue commits the transactions the step staged, in one DuckDB transaction, and the step waits
for it before it returns, so the data version Dagster records for it is already in the warehouse, and its successors
(on any queue) read its rows there. A step whose publish fails fails (its entries are not published later: nothing
else publishes a stage; unless the host claimed them first, resources.stage.Stage.publish_pending, and commits them); the task is acknowledged late like the steps, so a publishing worker killed mid-commit (rolled
back) hands it to the next one, which commits it whole.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from celery.exceptions import TimeoutError as CeleryTimeout

from resources import settings, stage
from resources.warehouse import Warehouse

if TYPE_CHECKING:
    from celery import Celery
    from celery.result import AsyncResult

TASK = "compass.publish_stage"
LOG = logging.getLogger(__name__)
# for the host's duckdb queue (a publish waits behind the writer steps already queued there); below the stage's
# GC_GRACE_S, after which an entry still pending counts as abandoned
WAIT_S = 1800
# a request not answered within this is sent again (and again every REASK_S): a task lost after its worker took it
# (the whole worker or host killed) comes back from the broker only after its visibility timeout (7200 s in
# deploy/run_config.celery.yaml: above the longest step, so not lowered for the publish), a message the broker lost
# never; a duplicate commits nothing (Stage.publish_pending). The earlier requests stay queued, so a request is
# never sent to the back of a long queue: the first one any worker answers is the step's answer.
REASK_S = 300
POLL_S = 2.0  # how often the answers of several requests are looked at (one request: Celery's own wait)


def publish_on_host(url: str, entries: list[str], stage_id: str | None = None) -> int:
    """The task's body on the warehouse host: commit `entries` of the stage `url`; the number committed now (0: all
    committed before, e.g. the task delivered twice). The stage is the one COMPASS_PUBLISH_FROM names on this host,
    wherever the step mounted it: RuntimeError (one line) unless its marker's id is `stage_id`, the id of the stage
    the step staged to (None, a request from before ids were sent: the paths must be equal)."""
    here = settings.publish_from()
    # stage_id None: a step of a version before the id (two arguments; the host is upgraded first, deploy/README.md);
    # the path branch can go once no such step can still ask, WAIT_S after the last older remote worker stopped
    if here is not None and stage_id is not None:
        same, why = stage.Stage(here).identity() == stage_id, f"{here}, another STAGE marker"
    else:
        same, why = here is not None and here.rstrip("/") == url.rstrip("/"), here or "unset"
    if not same:
        raise RuntimeError(f"this worker does not publish the stage {url} (COMPASS_PUBLISH_FROM={why}): start the "
                           f"warehouse host's workers with the stage's folder as it is mounted there")
    return Warehouse().publish_stage(entries)


def task_args(url: str, entries: list[str]) -> list:
    """The task's arguments for a step that staged `entries` to the stage at `url` (its path on the step's host)."""
    return [url, entries, stage.Stage(url).identity()]


def _transient() -> tuple[type[BaseException], ...]:
    """The errors of a broker or result backend that is restarting or out of reach (kombu's for a send, the Redis
    client's and the socket's for a result's state): a re-ask or a look at the answers that hits one is skipped."""
    from kombu.exceptions import OperationalError

    errors: tuple[type[BaseException], ...] = (OSError, OperationalError)
    with contextlib.suppress(ImportError):
        import redis.exceptions

        errors += (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
    return errors


def wait_for_publish(send: Callable[[], AsyncResult], wait_s: float = WAIT_S, reask_s: float = REASK_S,
                     poll_s: float = POLL_S, what: str = "the step's entries") -> int:
    """The step's side: `send()` a request, wait for the first of its requests to be answered, sending another every
    `reask_s` (REASK_S) until `wait_s`; then raise Celery's TimeoutError naming `what`. A request's error is the
    step's, unless another request committed by then (a commit wins). Only the first send must succeed: a re-ask or
    a look at the answers that meets a broker or backend out of reach (a Redis restart) is one warning, and the wait
    goes on. However the wait ends (an answer, an error, the timeout, an interrupt), every request not answered is
    revoked (still queued, none runs after the step went on)."""
    started, transient = time.monotonic(), _transient()
    sent, answered = [send()], None
    try:
        # the usual case: answered in time, through Celery's own wait (a task's own OSError lands in the `except`
        # too: the poll below finds the request answered and raises it)
        with contextlib.suppress(CeleryTimeout, *transient):
            committed = sent[0].get(timeout=min(reask_s, wait_s), disable_sync_subtasks=False)  # another queue
            answered = sent[0]
            return committed
        asks = 1
        while time.monotonic() - started < wait_s:
            try:
                ready = [result for result in sent if result.ready()]
            except transient as exc:
                LOG.warning("the publish requests' answers cannot be read (%s): still waiting", _one_line(exc))
                ready = []
            if ready:  # a commit beats an error that came at the same time
                answered = next((result for result in ready if result.successful()), ready[0])
                return answered.get(disable_sync_subtasks=False)
            if time.monotonic() - started >= reask_s * asks:
                asks += 1
                try:
                    sent.append(send())
                    LOG.warning("no answer to the publish request within %.0f s: asked again",
                                time.monotonic() - started)
                except transient as exc:
                    LOG.warning("no answer to the publish request within %.0f s, and asking again failed (%s): "
                                "still waiting", time.monotonic() - started, _one_line(exc))
            time.sleep(poll_s)
        raise CeleryTimeout(f"no answer to {len(sent)} publish requests for {what} within {wait_s:.0f} s (the "
                            f"warehouse host's queue {_queue()} busy or without a worker)")
    finally:
        for result in sent:
            if result is not answered:
                with contextlib.suppress(Exception):  # the broker may be what is out of reach
                    result.revoke()


def _queue() -> str:
    from pipelines.executor import WRITER_QUEUE

    return WRITER_QUEUE


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def register(app: Celery) -> None:
    """The task on `app` (every worker), acknowledged when done and handed on when its pool process dies, and the
    stage's publisher on the workers that stage (queue `remote`)."""
    from pipelines.executor import WRITER_QUEUE

    task = app.task(name=TASK, acks_late=True, reject_on_worker_lost=True)(publish_on_host)

    def through_the_host(url: str, entries: list[str]) -> int:
        asked = time.monotonic()
        args = task_args(url, entries)
        committed = wait_for_publish(lambda: task.apply_async(args=args, queue=WRITER_QUEUE,
                                                              routing_key=f"{WRITER_QUEUE}.{TASK}"),
                                     WAIT_S, REASK_S, POLL_S, f"{', '.join(entries)} of the stage {url}")
        LOG.info("the warehouse host published %s of %s in %.2f s", committed, ", ".join(entries),
                 time.monotonic() - asked)
        return committed

    stage.set_publisher(through_the_host)
