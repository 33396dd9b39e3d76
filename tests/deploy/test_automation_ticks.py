"""pipelines.automation_ticks: the refresh driver's automation ticks answer as the `compass_automation` sensor does
(the same run requests, the same cursor, tick after tick, across a new data version and a new partition), without
the sensor's per-tick work that only the daemon needs (issue 44, item 3). On an ephemeral instance whose
materializations carry data-version provenance (tests/deploy/test_run_growth.py)."""

import datetime
import warnings

import dagster as dg
import dagster._core.definitions.declarative_automation.automation_condition_evaluator as evaluator
import pytest
from dagster._core.definitions.declarative_automation.automation_condition import AutomationResult

import pipelines.automation_ticks as ticks_module
from pipelines.automation_ticks import AutomationTicks, stored_state_read_once
from pipelines.definitions import defs
from tests.deploy.test_run_growth import (BOOTSTRAP, CASE, CATALOG, COST, GRAPH, TARGETS, _checked, _instance,
                                          _materialize, _partition, _with_ancestors_of)

NOW = datetime.datetime(2026, 11, 29, 12, tzinfo=datetime.timezone.utc)
# The sensor over a slice of the graph (the cost side and the decisions it feeds), for a test that ticks four times
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)  # use_user_code_server, as pipelines.sensors
    SLICE = dg.AutomationConditionSensorDefinition("slice", target=dg.AssetSelection.assets(
        COST, *GRAPH.get(TARGETS).assets_def.keys), emit_backfills=False, use_user_code_server=True)


def tick(instance: dg.DagsterInstance, cursor: str | None) -> tuple[list[dg.RunRequest], str | None]:
    """The sensor's evaluation, as pipelines.refresh.tick runs `compass_automation`."""
    result = SLICE(dg.build_sensor_context(instance=instance, cursor=cursor, repository_def=defs.get_repository_def()))
    return list(result.run_requests or []), result.cursor


def _requested(requests: list[dg.RunRequest]) -> set[tuple[str | None, dg.AssetKey]]:
    return {(request.partition_key, key) for request in requests for key in request.asset_selection or []}


@pytest.fixture(scope="module")
def both_ways():
    """Two ticks of the sensor (pipelines.refresh.tick, from its cursor string) and of the driver's AutomationTicks
    on the same instance, the evaluation time fixed; between them a new data version of the case catalogue and a
    new scenario. The driver's ticks run with Dagster's serializable evaluation unavailable and the cursor's
    serialization and the storage's partition reads counted. Returns the requests and cursors of each tick."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluator, "get_current_datetime", lambda: NOW)
        instance = _with_ancestors_of(_instance(), TARGETS, BOOTSTRAP)
        for key in GRAPH.get_ancestor_asset_keys(TARGETS) | GRAPH.get_ancestor_asset_keys(BOOTSTRAP):
            _checked(instance, key, _partition(key), {check.name: True for check in GRAPH.get(key).check_keys
                                                      if GRAPH.get(check).blocking})
        counted = {"serialized": 0, "partition reads": 0, "schema checks": 0}
        read, serialize = instance._event_storage.get_dynamic_partitions, ticks_module.asset_daemon_cursor_to_instigator_serialized_cursor
        has_column = instance.event_log_storage.has_asset_key_col

        def counting_read(name):
            counted["partition reads"] += 1
            return read(name)

        def counting_check(column):
            counted["schema checks"] += 1
            return has_column(column)

        def counting_serialize(cursor):
            counted["serialized"] += 1
            return serialize(cursor)

        def driver_tick(driver):
            with patch.context() as driver_only:
                driver_only.setattr(AutomationResult, "serializable_evaluation",
                                    property(lambda self: pytest.fail("an evaluation tree was built")))
                driver_only.setattr(ticks_module, "asset_daemon_cursor_to_instigator_serialized_cursor",
                                    counting_serialize)
                driver_only.setattr(instance._event_storage, "get_dynamic_partitions", counting_read)
                driver_only.setattr(instance.event_log_storage, "has_asset_key_col", counting_check)
                requests = driver.tick()
            return requests

        sensor_1, cursor_1 = tick(instance, None)
        driver = AutomationTicks(defs, instance, None, sensor=SLICE)
        driver_1 = driver_tick(driver)
        after_1 = driver.serialized_cursor()
        _materialize(instance, CATALOG, data_version="v2")
        instance.add_dynamic_partitions("scenario", ["new_scenario"])
        sensor_2, cursor_2 = tick(instance, cursor_1)
        driver_2 = driver_tick(driver)
        yield {"sensor": [(sensor_1, cursor_1), (sensor_2, cursor_2)],
               "driver": [(driver_1, after_1), (driver_2, driver.serialized_cursor())], "counted": counted}


def test_the_driver_s_ticks_request_what_the_sensor_requests_and_keep_its_cursor(both_ways):
    """Tick for tick, the same run requests and a byte-identical cursor (the one `compass run` and the next refresh
    load). The first requests the decisions (missing, their parents there); the
    second must see what changed since: the cost side (its parent, the case catalogue, has a new data version; the
    decisions, the new scenario's too, then wait for it). Red when the driver's cursor does not advance (the
    second tick is a first evaluation again: a new data version seen as nothing; checked by replacing `self.cursor =
    ...with_updates(...)` with the old cursor), when its condition cursors take another requested subset than the
    root's (checked: `previous_requested_subset` left empty) and when partitions read once outlive a tick (the new
    scenario unseen)."""
    for (sensor_requests, sensor_cursor), (driver_requests, driver_cursor) in zip(both_ways["sensor"],
                                                                                 both_ways["driver"]):
        assert _requested(driver_requests) == _requested(sensor_requests)
        assert driver_cursor == sensor_cursor
    first, second = (_requested(requests) for requests, _ in both_ways["driver"])
    assert (f"{CASE}|cost_aware_low", TARGETS) in first and (CASE, COST) not in first
    assert (CASE, COST) in second


def test_a_driver_tick_builds_no_evaluation_and_reads_each_partitions_definition_once(both_ways):
    """The cost claim, counted rather than timed: the driver's ticks never build Dagster's serializable evaluation
    (the fixture fails the tick if they do), never serialize the cursor (that happens once, when the refresh saves
    it) and read each dynamic partitions definition (case, scenario) from storage at most once a tick, and ask
    about the asset table's columns once per column. The sensor's
    tick built an evaluation for every condition node and read the partitions ~50 times a tick (cProfile of the
    check's graph). Red with the sensor's `get_new_cursor` (an evaluation tree per asset) and without
    `stored_state_read_once` (seen: 40 reads in two ticks)."""
    assert both_ways["counted"]["serialized"] == 0
    assert both_ways["counted"]["partition reads"] <= 2 * 2
    assert both_ways["counted"]["schema checks"] <= 2 * 2  # columns asked about: the status cache's, and one more


def test_partitions_read_once_are_a_snapshot_for_the_tick_only():
    """Within a tick the keys are read once (a partition added meanwhile is not seen: only for a block in which
    nothing adds one); after it, the instance answers from storage again (red when the answers outlive the block)."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("case", ["a"])
    with stored_state_read_once(instance):
        assert instance.get_dynamic_partitions("case") == ["a"]
        instance.add_dynamic_partitions("case", ["b"])
        assert instance.get_dynamic_partitions("case") == ["a"]
    assert instance.get_dynamic_partitions("case") == ["a", "b"]


def test_keyword_calls_are_answered_once_too():
    """Dagster asks for a definition's keys by keyword (`get_partition_keys` passes `partitions_def_name=`): the
    read-once answer takes it as the positional call, one read for both (red with positional arguments only: a
    TypeError inside every tick that reads a dynamic definition's keys)."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("case", ["a"])
    reads = []
    read = instance._event_storage.get_dynamic_partitions
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(instance._event_storage, "get_dynamic_partitions", lambda name: reads.append(name) or read(name))
        with stored_state_read_once(instance):
            assert dg.DynamicPartitionsDefinition(name="case").get_partition_keys(
                dynamic_partitions_store=instance) == ["a"]
            assert instance.get_dynamic_partitions("case") == ["a"]
    assert reads == ["case"]


def test_an_all_partitions_request_is_remembered_as_the_sensor_remembers_it(monkeypatch):
    """A multi-partitioned asset (a dynamic and a static dimension) whose condition is `initial_evaluation()`: the
    sensor requests all its partitions once, then nothing. Its requested subset is Dagster's in-memory
    all-partitions subset, which the sensor's cursor string stores as its keys; InitialEvaluationCondition compares
    the previous requested subset's type, so a cursor kept as an object must hold the keys too. Red without
    `_as_stored` in `_new_cursor` (seen: ticks 2 and 3 requested x|a and x|b again). And the drift guard: every
    condition cursor the driver keeps equals Dagster's own `get_new_cursor` after its serialization round trip."""
    from dagster._serdes import deserialize_value, serialize_value

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        parts = dg.MultiPartitionsDefinition({"case": dg.DynamicPartitionsDefinition(name="case"),
                                              "kind": dg.StaticPartitionsDefinition(["a", "b"])})

        @dg.asset(partitions_def=parts, automation_condition=dg.AutomationCondition.initial_evaluation())
        def toy(): ...

        sensor = dg.AutomationConditionSensorDefinition("toy_sensor", target=dg.AssetSelection.all(),
                                                        use_user_code_server=True, emit_backfills=False)
    toy_defs = dg.Definitions(assets=[toy], sensors=[sensor])
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("case", ["x"])
    kept, new_cursor = [], ticks_module._new_cursor
    monkeypatch.setattr(ticks_module, "_new_cursor", lambda result: kept.append((result, new_cursor(result)))
                        or kept[-1][1])
    driver, cursor = AutomationTicks(toy_defs, instance, None, sensor=sensor), None
    for expected in (["x|a", "x|b"], [], []):
        result = sensor(dg.build_sensor_context(instance=instance, cursor=cursor,
                                                repository_def=toy_defs.get_repository_def()))
        cursor = result.cursor
        assert sorted(request.partition_key for request in result.run_requests or []) == expected
        assert sorted(request.partition_key for request in driver.tick()) == expected
    assert driver.serialized_cursor() == cursor
    for result, condition_cursor in kept:
        sensor_s = serialize_value(result.get_new_cursor())
        assert serialize_value(condition_cursor) == sensor_s
        assert condition_cursor == deserialize_value(sensor_s, type(condition_cursor))
