"""The refresh condition on a three-asset toy graph with the real partition shapes (case -> case x scenario).

root (unpartitioned) -> parent[case] -> child[case|scenario], and root -> child directly:
the diamond that made decisions run before their cost side.
"""

import dagster as dg
import pytest

from assets.automation import REFRESH_CONDITION
from pipelines.definitions import defs

_case = dg.DynamicPartitionsDefinition(name="toy_case")
_scenario = dg.DynamicPartitionsDefinition(name="toy_scenario")
_version = {"root": "1", "parent_fails": False}  # module state: tests set it before materializing


@dg.asset
def root() -> dg.MaterializeResult:
    return dg.MaterializeResult(data_version=dg.DataVersion(_version["root"]))


@dg.asset(partitions_def=_case, deps=[root], automation_condition=REFRESH_CONDITION)
def parent() -> None:
    if _version["parent_fails"]:
        raise RuntimeError("parent fails on purpose")


@dg.asset(partitions_def=dg.MultiPartitionsDefinition({"case": _case, "scenario": _scenario}),
          deps=[parent, root], automation_condition=REFRESH_CONDITION)
def child() -> None: ...


def _requested(instance, cursor):
    ev = dg.evaluate_automation_conditions(defs=dg.Definitions(assets=[root, parent, child]), instance=instance,
                                           cursor=cursor)
    return {k.path[-1]: ev.get_requested_partitions(k) for k in (parent.key, child.key)}, ev.cursor


@pytest.fixture
def toy_instance():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("toy_case", ["c1"])
        instance.add_dynamic_partitions("toy_scenario", ["s1", "s2"])
        yield instance


def test_child_waits_for_a_parent_in_another_partitions_definition_then_runs_once(toy_instance):
    _version.update(root="1", parent_fails=False)
    dg.materialize([root], instance=toy_instance)
    requested, cursor = _requested(toy_instance, None)
    assert requested == {"parent": {"c1"}, "child": set()}  # child waits: its parent is missing
    dg.materialize([root, parent], instance=toy_instance, partition_key="c1", selection=[parent])
    requested, cursor = _requested(toy_instance, cursor)
    assert requested == {"parent": set(), "child": {"c1|s1", "c1|s2"}}
    for s in ("s1", "s2"):
        dg.materialize([root, parent, child], instance=toy_instance, selection=[child],
                       partition_key=dg.MultiPartitionKey({"case": "c1", "scenario": s}))
    assert _requested(toy_instance, cursor)[0] == {"parent": set(), "child": set()}

    # root changes: both are triggered, but the child (reached directly and via the parent) must wait.
    _version["root"] = "2"
    dg.materialize([root], instance=toy_instance)
    requested, cursor = _requested(toy_instance, cursor)
    assert requested == {"parent": {"c1"}, "child": set()}
    dg.materialize([root, parent], instance=toy_instance, partition_key="c1", selection=[parent])
    requested, cursor = _requested(toy_instance, cursor)
    assert requested == {"parent": set(), "child": {"c1|s1", "c1|s2"}}


def test_child_waits_while_its_parent_failed_and_a_failed_parent_is_not_retried_each_tick(toy_instance):
    _version.update(root="1", parent_fails=False)
    dg.materialize([root], instance=toy_instance)
    _, cursor = _requested(toy_instance, None)
    dg.materialize([root, parent], instance=toy_instance, partition_key="c1", selection=[parent])
    for s in ("s1", "s2"):
        dg.materialize([root, parent, child], instance=toy_instance, selection=[child],
                       partition_key=dg.MultiPartitionKey({"case": "c1", "scenario": s}))
    _, cursor = _requested(toy_instance, cursor)
    _version.update(root="3", parent_fails=True)
    dg.materialize([root], instance=toy_instance)
    requested, cursor = _requested(toy_instance, cursor)
    assert requested == {"parent": {"c1"}, "child": set()}
    failed = dg.materialize([root, parent], instance=toy_instance, partition_key="c1", selection=[parent],
                            raise_on_error=False)
    assert not failed.success
    # The child's input changed (root) but its parent failed: no mix of new root and stale parent.
    requested, cursor = _requested(toy_instance, cursor)
    assert requested == {"parent": set(), "child": set()}
    _version["parent_fails"] = False
    dg.materialize([root, parent], instance=toy_instance, partition_key="c1", selection=[parent])
    requested, cursor = _requested(toy_instance, cursor)
    assert requested == {"parent": set(), "child": {"c1|s1", "c1|s2"}}


def test_dagster_will_be_requested_is_blind_across_partitions_definitions(toy_instance):
    """Why AncestorPending exists: with will_be_requested() the child would be requested with its parent.

    If a Dagster release fixes this, this test fails and the custom operand can go."""
    ac = dg.AutomationCondition
    blind = child.map_asset_specs(lambda spec: spec.replace_attributes(
        automation_condition=ac.any_deps_match(ac.will_be_requested())))
    dg.materialize([root], instance=toy_instance)
    ev = dg.evaluate_automation_conditions(defs=dg.Definitions(assets=[root, parent, blind]), instance=toy_instance)
    assert ev.get_requested_partitions(parent.key) == {"c1"}
    assert ev.get_requested_partitions(child.key) == set()


def test_child_waits_while_a_raw_source_run_is_in_flight():
    """Under the daemon the schedule runs the raw sources asynchronously: one done, one still running."""
    versions = {"a": "1", "b": "1"}

    @dg.asset(group_name="sources")
    def raw_a() -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=dg.DataVersion(versions["a"]))

    @dg.asset(group_name="sources")
    def raw_b() -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=dg.DataVersion(versions["b"]))

    @dg.asset(deps=[raw_a, raw_b], automation_condition=REFRESH_CONDITION)
    def measures() -> None: ...

    sensor = dg.AutomationConditionSensorDefinition("toy_automation", target=dg.AssetSelection.all(),
                                                    use_user_code_server=True, emit_backfills=False)
    toy = dg.Definitions(assets=[raw_a, raw_b, measures], sensors=[sensor],
                         jobs=[dg.define_asset_job("raw_b_job", selection=[raw_b])])

    def tick(instance, cursor):
        result = sensor(dg.build_sensor_context(instance=instance, cursor=cursor,
                                                repository_def=toy.get_repository_def()))
        return [k for r in result.run_requests for k in r.asset_selection], result.cursor

    with dg.instance_for_test() as instance:
        dg.materialize([raw_a, raw_b], instance=instance)
        requested, cursor = tick(instance, None)
        dg.materialize([raw_a, raw_b, measures], selection=[measures], instance=instance)
        requested, cursor = tick(instance, cursor)
        assert requested == []
        versions.update(a="2", b="2")
        dg.materialize([raw_a], instance=instance)
        run = instance.create_run_for_job(job_def=toy.resolve_job_def("raw_b_job"),
                                          asset_selection=frozenset([raw_b.key]), status=dg.DagsterRunStatus.STARTED)
        requested, cursor = tick(instance, cursor)
        assert requested == []  # raw_a changed, but raw_b is still being written
        instance.report_run_failed(run)  # the in-flight run ends (here: fails) ...
        dg.materialize([raw_b], instance=instance)  # ... and a later one writes raw_b
        requested, cursor = tick(instance, cursor)
        assert requested == [measures.key]


def _versioned_graph(version: str) -> list[dg.AssetsDefinition]:
    """root -> parent[case] -> child[case|scenario] at one code version; parent's output (data version) does not
    change with its code: an upgrade that reorganizes code without changing what the parent publishes."""

    @dg.asset(name="root")
    def v_root() -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=dg.DataVersion("1"))

    @dg.asset(name="parent", partitions_def=_case, deps=["root"], code_version=version,
              automation_condition=REFRESH_CONDITION)
    def v_parent() -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=dg.DataVersion("same output"))

    @dg.asset(name="child", partitions_def=dg.MultiPartitionsDefinition({"case": _case, "scenario": _scenario}),
              deps=["parent"], code_version=version, automation_condition=REFRESH_CONDITION)
    def v_child() -> None: ...

    return [v_root, v_parent, v_child]


def test_a_code_change_seen_while_a_parent_is_pending_is_not_forgotten(toy_instance):
    """An upgrade bumps the code version of a parent and of its child in another partitions definition (the
    decisions below a case's cost side). On the first tick the child waits for its parent; on the next it must
    still run, although the parent published the same data version. Red with a bare `code_version_changed()` in
    the refresh condition (true on one tick only): the child kept its old-code tables."""

    def requested(assets, cursor):
        ev = dg.evaluate_automation_conditions(defs=dg.Definitions(assets=assets), instance=toy_instance,
                                               cursor=cursor)
        return {k.path[-1]: ev.get_requested_partitions(k) for k in (dg.AssetKey("parent"), dg.AssetKey("child"))}, ev.cursor

    def materialize(assets, name, partitions):
        for partition in partitions:
            key = partition if name == "parent" else dg.MultiPartitionKey(dict(zip(("case", "scenario"),
                                                                                   partition.split("|"))))
            assert dg.materialize(assets, instance=toy_instance, selection=[name], partition_key=key).success

    old = _versioned_graph("1")
    dg.materialize(old, instance=toy_instance, selection=["root"])
    materialize(old, "parent", ["c1"])
    materialize(old, "child", ["c1|s1", "c1|s2"])
    cursor = requested(old, None)[1]
    assert requested(old, cursor)[0] == {"parent": set(), "child": set()}

    new = _versioned_graph("2")
    first, cursor = requested(new, cursor)
    assert first == {"parent": {"c1"}, "child": set()}  # the child waits for its parent
    materialize(new, "parent", ["c1"])
    second, cursor = requested(new, cursor)
    assert second == {"parent": set(), "child": {"c1|s1", "c1|s2"}}
