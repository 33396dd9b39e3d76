"""The `compass_automation` sensor's evaluation for a long-lived refresh driver (pipelines.queue_refresh): the same
evaluator, conditions and cursor as `pipelines.refresh.tick`, without the work a tick spent on what only the daemon
keeps (issue 44, item 3).

Profiled on the check's graph (six ticks of a cold refresh against Postgres, cProfile, docs/results/operations.md,
"The tick's evaluation, cut"), a tick through the sensor also

1. turned its cursor into a compressed string and back (the sensor API's cursor is a string): 0.8 s a tick;
2. built every condition node's serializable evaluation, for the cursor's requested subsets (a tree per asset, used
   only for its root's true subset) and for the daemon's evaluation history, which nobody reads here: 0.7 s;
3. asked Postgres for each dynamic partitions definition's keys ~50 times (Dagster's partition status cache checks
   whether a partitions definition changed, one query each time), though nothing adds a partition during a tick
   (the driver syncs them between ticks, pipelines.partitions): 0.4 s; and inspected the event log's asset table
   ~50 times (whether its status-cache column exists, asked before each cache read and write): 0.7 s under load.

`AutomationTicks` keeps the cursor as an object between ticks (a string once, when the refresh saves it), takes each
condition cursor's requested subset from the root result itself (`_new_cursor`: Dagster's `get_new_cursor` without the
evaluation tree), records no evaluations and reads each definition's partition keys and the table's columns once
per tick. Same run requests
and same cursor as the sensor: tests/deploy/test_automation_ticks.py.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import dagster as dg
from dagster._core.definitions.asset_daemon_cursor import AssetDaemonCursor
from dagster._core.definitions.automation_tick_evaluation_context import AutomationTickEvaluationContext
from dagster._core.definitions.declarative_automation.automation_condition import AutomationResult
from dagster._core.definitions.declarative_automation.serialized_objects import (
    AutomationConditionCursor, get_serializable_true_subset)
from dagster._daemon.asset_daemon import (asset_daemon_cursor_from_instigator_serialized_cursor,
                                          asset_daemon_cursor_to_instigator_serialized_cursor)

LOG = logging.getLogger("compass.automation_ticks")  # the evaluator logs each requested asset at INFO: not shown
LOG.setLevel(logging.WARNING)


def _new_cursor(result: AutomationResult) -> AutomationConditionCursor:
    """Dagster's `AutomationResult.get_new_cursor` (dagster 1.13.27), whose requested subset is its serializable
    evaluation's true subset, i.e. the root's own: taken here without building the evaluation of every node."""
    return AutomationConditionCursor(
        previous_requested_subset=get_serializable_true_subset(result.true_subset),
        effective_timestamp=result._context.evaluation_time.timestamp(),  # noqa: SLF001 - as get_new_cursor reads it
        last_event_id=result._context.max_storage_id,  # noqa: SLF001
        node_cursors_by_unique_id=result.get_child_node_cursors(),
        result_value_hash=result.value_hash,
    )


@contextlib.contextmanager
def answered_once(owner: object, method: str) -> Iterator[None]:
    """Within the block, `owner.method(*args)` asks storage once per distinct arguments and repeats that answer
    (a copy of a list); afterwards `owner` answers as before. Only for what nothing changes during the block."""
    ask, own = getattr(owner, method), vars(owner).get(method)  # own: set on the object itself (a test's wrapper)
    answers: dict[tuple, object] = {}

    def once(*args):
        if args not in answers:
            answers[args] = ask(*args)
        answer = answers[args]
        return list(answer) if isinstance(answer, (list, tuple)) else answer

    setattr(owner, method, once)  # an attribute of this object, over its class's method
    try:
        yield
    finally:
        if own is None:
            delattr(owner, method)
        else:
            setattr(owner, method, own)


@contextlib.contextmanager
def stored_state_read_once(instance: dg.DagsterInstance) -> Iterator[None]:
    """For one tick: each dynamic partitions definition's keys (the driver adds partitions between ticks only,
    pipelines.partitions) and each column check of the event log's asset table (Dagster inspects the table's schema
    each time it asks whether the partition status cache is readable or writable) read from Postgres once."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(answered_once(instance, "get_dynamic_partitions"))
        if hasattr(instance.event_log_storage, "has_asset_key_col"):
            stack.enter_context(answered_once(instance.event_log_storage, "has_asset_key_col"))
        yield


class AutomationTicks:
    """Successive evaluations of `sensor` (an AutomationConditionSensorDefinition of `defs`) against `instance`,
    starting from a sensor cursor string (None: the first evaluation)."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None, sensor=None):
        from pipelines.sensors import compass_automation

        self.instance, self.sensor = instance, sensor or compass_automation
        self.graph = defs.get_repository_def().asset_graph
        self.cursor: AssetDaemonCursor = asset_daemon_cursor_from_instigator_serialized_cursor(cursor, self.graph)
        self.evaluations = 0

    def tick(self) -> list[dg.RunRequest]:
        """One evaluation of every asset's condition, as the sensor's: its run requests; the cursor advances."""
        sensor = self.sensor
        with stored_state_read_once(self.instance):
            context = AutomationTickEvaluationContext(
                evaluation_id=self.cursor.evaluation_id, instance=self.instance, asset_graph=self.graph,
                cursor=self.cursor, materialize_run_tags=sensor.run_tags, observe_run_tags={},
                auto_observe_asset_keys=set(), asset_selection=sensor.asset_selection,
                asset_job_keys=sensor.asset_job_keys, emit_backfills=sensor.emit_backfills,
                default_condition=sensor.default_condition, logger=LOG)
            evaluator = context._evaluator  # noqa: SLF001 - the sensor's own evaluator, without its string cursor
            with dg.partition_loading_context(new_ctx=context._partition_loading_context):  # noqa: SLF001
                results, subsets = evaluator.evaluate()
                requests = list(context._build_run_requests(subsets))  # noqa: SLF001
                self.cursor = self.cursor.with_updates(
                    evaluation_id=self.cursor.evaluation_id, condition_cursors=[_new_cursor(r) for r in results],
                    newly_observe_requested_asset_keys=[],
                    evaluation_timestamp=evaluator.evaluation_time.timestamp(), asset_graph=self.graph)
        self.evaluations += 1
        return requests

    def serialized_cursor(self) -> str:
        """The cursor as the sensor returns it (pipelines.refresh saves and loads this string)."""
        return asset_daemon_cursor_to_instigator_serialized_cursor(self.cursor)
