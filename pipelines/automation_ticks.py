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

Kept as an object, the cursor must hold what the sensor's would after its string round trip: a subset of "all
partitions" (Dagster's in-memory `AllPartitionsSubset`) becomes the key list that serialization writes
(`_as_stored`), or `InitialEvaluationCondition`, which compares the previous requested subset's type, would see every
tick as a first evaluation. What the sensor also does and a driver tick skips: the
DAGSTER_AUTOMATION_TICK_SETTLE_SECONDS sleep (the driver ticks when a run finished, not on a timer) and the
MAX_ENTITIES check of `use_user_code_server` sensors (the driver evaluates in its own process). `compass run`
(pipelines.refresh.tick) still ticks through the sensor; the test keeps the two paths equivalent.

Single-threaded: the read-once answers replace the instance's methods for the whole process during a tick, so
nothing else may use the instance meanwhile (the driver does nothing else while it ticks).
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import logging
from collections.abc import Iterator, Mapping
from unittest import mock

import dagster as dg
from dagster._core.asset_graph_view.serializable_entity_subset import SerializableEntitySubset
from dagster._core.definitions.asset_daemon_cursor import AssetDaemonCursor
from dagster._core.definitions.automation_tick_evaluation_context import AutomationTickEvaluationContext
from dagster._core.definitions.declarative_automation.automation_condition import AutomationResult
from dagster._core.definitions.declarative_automation.serialized_objects import (
    AssetSubsetWithMetadata, AutomationConditionCursor, AutomationConditionNodeCursor, get_serializable_true_subset)
from dagster._daemon.asset_daemon import (asset_daemon_cursor_from_instigator_serialized_cursor,
                                          asset_daemon_cursor_to_instigator_serialized_cursor)

LOG = logging.getLogger("compass.automation_ticks")  # the evaluator logs each requested asset at INFO: not shown
LOG.setLevel(logging.WARNING)


def _as_stored(value):
    """`value` (a condition cursor or any part of it) as serialization stores it: every partitioned subset in its
    serializable form, as Dagster's `EntitySubsetSerializer.before_pack` writes it (an all-partitions subset as its
    keys); other values as they are."""
    if isinstance(value, SerializableEntitySubset):
        return dataclasses.replace(value, value=value.subset_value.to_serializable_subset()) \
            if value.is_partitioned else value
    if isinstance(value, (AutomationConditionCursor, AutomationConditionNodeCursor)):
        return dataclasses.replace(value, **{field.name: _as_stored(getattr(value, field.name))
                                             for field in dataclasses.fields(value) if field.init})
    if isinstance(value, AssetSubsetWithMetadata):
        return value._replace(subset=_as_stored(value.subset))
    if isinstance(value, Mapping):
        return {key: _as_stored(item) for key, item in value.items()}
    if type(value) in (list, tuple):  # a node's subsets (extra state: a subset, a sequence of them or a string)
        return type(value)(_as_stored(item) for item in value)
    return value  # a string, a number, Dagster's HistoricalAllPartitionsSubsetSentinel


def _new_cursor(result: AutomationResult) -> AutomationConditionCursor:
    """Dagster's `AutomationResult.get_new_cursor` (dagster 1.13.27), whose requested subset is its serializable
    evaluation's true subset, i.e. the root's own: taken here without building the evaluation of every node; and as
    the sensor's cursor string stores it (`_as_stored`)."""
    return _as_stored(AutomationConditionCursor(
        previous_requested_subset=get_serializable_true_subset(result.true_subset),
        effective_timestamp=result._context.evaluation_time.timestamp(),  # noqa: SLF001 - as get_new_cursor reads it
        last_event_id=result._context.max_storage_id,  # noqa: SLF001
        node_cursors_by_unique_id=result.get_child_node_cursors(),
        result_value_hash=result.value_hash,
    ))


@contextlib.contextmanager
def answered_once(owner: object, method: str) -> Iterator[None]:
    """Within the block, `owner.method(...)` asks storage once per distinct arguments (positional or keyword: Dagster
    passes `partitions_def_name=` by keyword) and repeats that answer (a copy of a list); afterwards `owner` answers
    as before. Only for what nothing changes during the block."""
    ask = getattr(owner, method)
    signature = inspect.signature(ask)
    answers: dict[tuple, object] = {}

    def once(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = tuple(bound.arguments.items())
        if key not in answers:
            answers[key] = ask(*args, **kwargs)
        answer = answers[key]
        return list(answer) if isinstance(answer, (list, tuple)) else answer

    with mock.patch.object(owner, method, once):  # over its class's method; restored (or removed) on exit
        yield


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

    def tick(self) -> list[dg.RunRequest]:
        """One evaluation of every asset's condition, as the sensor's: its run requests; the cursor advances only when
        the evaluation succeeded (a failed tick, e.g. a dropped Postgres connection, can be retried as it was)."""
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
        return requests

    def serialized_cursor(self) -> str:
        """The cursor as the sensor returns it (pipelines.refresh saves and loads this string)."""
        return asset_daemon_cursor_to_instigator_serialized_cursor(self.cursor)
