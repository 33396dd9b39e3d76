"""pipelines.run_growth without a stack, on Dagster's own records (an ephemeral instance; materializations carry the
data-version provenance a run records): a queued run grows by exactly the descendants the automation would request
for certain once it finished (issue 44, item 3)."""

import dagster as dg
import pytest
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData)
from dagster._core.definitions.data_version import (CODE_VERSION_TAG, DATA_VERSION_TAG, get_input_data_version_tag,
                                                    get_input_event_pointer_tag)
from dagster._core.events import AssetMaterializationPlannedData, DagsterEvent, DagsterEventType
from dagster._core.utils import make_new_run_id

from assets.automation import REPORT_CONDITION
from pipelines.queue_refresh import _blocked, defs
from pipelines.run_growth import GROWN_TAG, RETRY_TAG, _Statuses, grow, skipped_to_retry

KEY = dg.AssetKey.from_user_string
TARGETS, MEASURES, BOOTSTRAP = KEY("compass/targets"), KEY("compass/measures"), KEY("compass/rank_bootstrap")
CHANGES, UNCERTAINTY, NEXT = KEY("compass/leaderboard_changes"), KEY("compass/rank_uncertainty"), \
    KEY("compass/next_evaluations")
CATALOG, COST = KEY("compass/case_catalog"), KEY("compass/cost_side")
CASE, LOW = "small_open", "small_open|cost_aware_low"
SCENARIOS = ["cost_aware_low", "constrained_all", "triangle", "failed_missing", "failed_code", "retry"]  # one a test, so module-scoped cases stay independent
GRAPH = defs.resolve_asset_graph()


def _instance() -> dg.DagsterInstance:
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("case", [CASE])
    instance.add_dynamic_partitions("scenario", SCENARIOS)
    return instance


def _partition(key: dg.AssetKey) -> str | None:
    return CASE if GRAPH.get(key).partitions_def is not None else None  # the case's ancestors: by case, or none


def _materialize(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None = None,
                 code_version: str | None = None, data_version: str = "v1") -> None:
    """A materialization recording its parents' latest data versions, as a run's does (fresh until one changes);
    by default of the case's partition (or none)."""
    partition = partition or _partition(key)
    tags = {DATA_VERSION_TAG: data_version, CODE_VERSION_TAG: code_version or GRAPH.get(key).code_version}
    for parent in GRAPH.get(key).parent_keys:
        same = GRAPH.get(parent).partitions_def == GRAPH.get(key).partitions_def
        read = partition if same else _partition(parent)
        record = instance.fetch_materializations(dg.AssetRecordsFilter(
            asset_key=parent, asset_partitions=[read] if read else None), limit=1).records[0]
        tags |= {get_input_data_version_tag(parent): record.asset_materialization.tags[DATA_VERSION_TAG],
                 get_input_event_pointer_tag(parent): str(record.storage_id)}
    instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=partition, tags=tags))


def _with_ancestors_of(instance: dg.DagsterInstance, *keys: dg.AssetKey) -> dg.DagsterInstance:
    wanted = set(keys).union(*(GRAPH.get_ancestor_asset_keys(key) for key in keys))
    for each in GRAPH.toposorted_asset_keys:
        if each in wanted:
            _materialize(instance, each)
    return instance


def _grown(instance, others=(), partition=LOW) -> list[dg.AssetKey]:
    [(grown_partition, keys)] = grow(instance, [(partition, [TARGETS])], list(others), _blocked)
    assert grown_partition == partition
    return keys


def _checked(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None,
             results: dict[str, bool]) -> None:
    """Check results on the latest materialization of `key`'s `partition`."""
    record = instance.fetch_materializations(dg.AssetRecordsFilter(
        asset_key=key, asset_partitions=[partition] if partition else None), limit=1).records[0]
    target = AssetCheckEvaluationTargetMaterializationData(storage_id=record.storage_id, run_id=record.run_id,
                                                           timestamp=record.timestamp)
    for name, passed in results.items():
        instance.report_runless_asset_event(dg.AssetCheckEvaluation(
            asset_key=key, check_name=name, passed=passed, partition=partition, target_materialization_data=target))


def _decided(instance: dg.DagsterInstance, partition: str) -> None:
    """The decision tables of `partition` as a previous refresh left them."""
    for key in GRAPH.get(TARGETS).assets_def.keys:
        _materialize(instance, key, partition)


def _run(instance: dg.DagsterInstance, keys: list[dg.AssetKey], partition: str | None,
         failed: bool = True, tags: dict[str, str] | None = None) -> dg.DagsterRun:
    """A run that planned `keys` of `partition` (as a submitted run records), then failed (else: still in progress)."""
    tags = {**(tags or {}), **({"dagster/partition": partition} if partition else {})}
    run = instance.add_run(dg.DagsterRun(job_name="__ASSET_JOB", run_id=make_new_run_id(), tags=tags,
                                         status=dg.DagsterRunStatus.STARTED, asset_selection=frozenset(keys)))
    for key in keys:
        instance.report_dagster_event(DagsterEvent(
            DagsterEventType.ASSET_MATERIALIZATION_PLANNED.value, job_name=run.job_name,
            event_specific_data=AssetMaterializationPlannedData(key, partition=partition)), run_id=run.run_id)
    if failed:
        instance.report_run_failed(run)
    return run


@pytest.fixture(scope="module")
def settled_case():
    """Everything above the case's decisions and rank bootstrap materialized and fresh, its blocking checks passed
    (what the automation's request of the decisions vouches for, and more); no decision yet."""
    instance = _with_ancestors_of(_instance(), TARGETS, BOOTSTRAP)
    for key in GRAPH.get_ancestor_asset_keys(TARGETS) | GRAPH.get_ancestor_asset_keys(BOOTSTRAP):
        _checked(instance, key, _partition(key), {check.name: True for check in GRAPH.get(key).check_keys
                                                  if GRAPH.get(check).blocking})
    return instance


def test_a_decision_run_takes_its_children_when_their_other_parents_are_settled(settled_case):
    """A decision run (the automation requested the targets: a multi-asset, all five tables) takes the three children
    it would otherwise leave to a run of their own one tick later: leaderboard_changes (its parents all in the
    run), rank_uncertainty (also the case's rank bootstrap, fresh and planned by no run) and next_evaluations (the
    case's steps, vetted by the targets' request, and rank_uncertainty joined before it). With the bootstrap planned
    by a run in flight, or missing (a cold refresh), the two that read it wait, as the automation would make them.
    A child another run plans (a deferred request) does not join either. Red when `_blocked` is not asked for the
    child (leaderboard_changes joined although deferred) and when an unsettled parent is accepted (`settled`
    returning True: joined with the bootstrap missing)."""
    decisions = sorted(GRAPH.get(TARGETS).assets_def.keys)
    assert _grown(settled_case) == [TARGETS, CHANGES, UNCERTAINTY, NEXT]
    assert _grown(settled_case, others=[(CASE, [BOOTSTRAP])]) == [TARGETS, CHANGES]
    assert _grown(settled_case, others=[(LOW, [CHANGES])]) == [TARGETS, UNCERTAINTY, NEXT]  # deferred: its own run
    assert _grown(_instance()) == [TARGETS, CHANGES]
    assert len(decisions) == 5  # the run submits them all (with_inseparable); only the targets were requested


def test_children_that_are_there_do_not_join_unless_their_code_changed(settled_case):
    """A warm refresh keeps its minimal recomputation: a child already materialized (current code version) is left
    to the automation, which requests it only if its parents' data versions change; with a new code version the
    automation requests it for certain, so it joins. Red when `certain` accepts any child (the first assert) and
    when it ignores code versions (the second)."""
    instance = _with_ancestors_of(_instance(), BOOTSTRAP)
    for key in GRAPH.get(TARGETS).assets_def.keys:  # the decisions as a previous refresh left them
        instance.report_runless_asset_event(dg.AssetMaterialization(key, partition=LOW, tags={DATA_VERSION_TAG: "v1"}))
    _materialize(instance, CHANGES, LOW)
    assert CHANGES not in _grown(instance)
    _materialize(instance, CHANGES, LOW, code_version="an older version")
    assert CHANGES in _grown(instance)


@pytest.mark.parametrize("results, settled", [({}, False), ({"measures_in_unit_interval": True,
                                                             "measures_keep_their_meaning": False}, False),
                                              ({"measures_in_unit_interval": True,
                                                "measures_keep_their_meaning": True}, True)])
def test_a_parent_is_settled_only_when_its_blocking_checks_passed(results, settled):
    """The case's measures, fresh, count as settled for a joining child only once both blocking checks passed on
    that materialization (as the automation's all_deps_blocking_checks_passed): not before any result, not after
    one failed. Red when blocking checks are not read (True in the first two cases)."""
    instance = _with_ancestors_of(_instance(), MEASURES)
    _checked(instance, MEASURES, CASE, results)
    statuses = _Statuses(instance)
    try:
        assert statuses.settled(MEASURES, statuses.subset(MEASURES, CASE), {}, _blocked) is settled
    finally:
        statuses.loop.close()


def test_a_child_does_not_join_while_another_parent_of_it_descends_from_the_run(settled_case):
    """Next_evaluations (a new code version: certain) reads rank_uncertainty, which is there and current but is itself
    a child of the decisions: after the run the automation requests it (its parent has a new data version), and
    next_evaluations after it. Joined, next_evaluations would read the new leaderboards and the old rank_uncertainty,
    run twice and publish mixed inputs in between (review 44b, finding 1). Red without the descendant rule."""
    triangle = f"{CASE}|triangle"
    _decided(settled_case, triangle)
    _materialize(settled_case, UNCERTAINTY, triangle)
    _materialize(settled_case, NEXT, triangle, code_version="an older version")
    assert _grown(settled_case, partition=triangle) == [TARGETS, CHANGES]


@pytest.mark.parametrize("scenario, code_version", [("failed_missing", None), ("failed_code", "an older version")])
def test_a_child_whose_own_latest_run_failed_does_not_join(settled_case, scenario, code_version):
    """Leaderboard_changes, missing or with a new code version, whose own latest run failed: the automation does not
    request it again (a missing asset's failed execution, a code change handled once requested), so it does not
    join; rank_uncertainty still does. Red when `certain` ignores failures on the missing branch and (review 44b,
    finding 3) on the code-version branch, where a deterministic failure joined every run of its parent and held
    the whole run's descendants as failed."""
    partition = f"{CASE}|{scenario}"
    if code_version:
        _decided(settled_case, partition)
        _materialize(settled_case, CHANGES, partition, code_version=code_version)
    _run(settled_case, [CHANGES], partition)
    grown = _grown(settled_case, partition=partition)
    assert CHANGES not in grown and UNCERTAINTY in grown


def test_what_a_failed_grown_run_skipped_is_requested_once_its_parents_are_settled(settled_case):
    """A decision run that rank_uncertainty joined failed in the decisions: rank_uncertainty, skipped, now counts as
    a failed execution, which neither the automation nor growth requests again (review 44b, finding 2). The driver
    tagged the run; a later refresh requests it once its parents are settled (the decisions re-run, their blocking
    check passed), not before. Red when the parents are not read (requested at once) and without the retry."""
    partition = f"{CASE}|retry"
    decisions = sorted(GRAPH.get(TARGETS).assets_def.keys)
    run = _run(settled_case, [*decisions, UNCERTAINTY], partition,
               tags={GROWN_TAG: UNCERTAINTY.to_user_string(), RETRY_TAG: "pending"})
    assert skipped_to_retry(settled_case, _blocked) == ([], [])
    _decided(settled_case, partition)
    _checked(settled_case, KEY("compass/leaderboards"), partition, {"ranked_by_score": True})
    assert UNCERTAINTY not in _grown(settled_case, partition=partition)  # failed: not certain
    assert skipped_to_retry(settled_case, _blocked) == ([(partition, [UNCERTAINTY])], [run.run_id])


def test_a_child_under_another_condition_does_not_join(settled_case, monkeypatch):
    """Leaderboard_changes, were it under the report's condition (which also runs while a parent is missing or
    failed, and is not what growth models), is left to the automation. Red without the condition filter (on the
    real graph the report, unpartitioned, is left out by its partitions as well)."""
    node = GRAPH.get(CHANGES)
    monkeypatch.setattr(node, "_spec", node._spec.replace_attributes(automation_condition=REPORT_CONDITION))
    assert _grown(settled_case) == [TARGETS, UNCERTAINTY, NEXT]


def test_a_run_of_the_same_tick_planning_a_parent_holds_the_child(settled_case):
    """The case's rank bootstrap, requested in the same tick as the decisions (before or after them in submission
    order), holds rank_uncertainty and next_evaluations, which read it. Red when `planned` leaves out the runs
    before (the driver's order: by case before by case and scenario) or after the one growing."""
    for runs in ([(CASE, [BOOTSTRAP]), (LOW, [TARGETS])], [(LOW, [TARGETS]), (CASE, [BOOTSTRAP])]):
        assert dict(grow(settled_case, runs, [], _blocked))[LOW] == [TARGETS, CHANGES]


def test_a_parent_whose_latest_run_failed_is_not_settled(settled_case):
    """The case's rank bootstrap, fresh, but its latest run failed (a re-run whose check failed, say): the children
    that read it wait, as the automation's parent_failed makes them. Red when `settled` ignores failed executions."""
    try:
        _run(settled_case, [BOOTSTRAP], CASE)
        assert _grown(settled_case) == [TARGETS, CHANGES]
    finally:
        _materialize(settled_case, BOOTSTRAP)  # re-run: fresh again, for the tests below


def test_a_parent_the_automation_vetted_counts_though_dagster_calls_it_stale(settled_case):
    """The cost side read a case catalogue older than the latest (a change the automation's trigger did not see, or
    handled): Dagster calls it stale, yet the automation requested the decisions, so it vouched for the cost side
    as their parent, and next_evaluations, which reads the same partition of it, joins as it would be requested
    after the run. Red without the vetted shortcut (the cost side is not settled by Dagster's status)."""
    try:
        _materialize(settled_case, CATALOG, data_version="v2")
        assert _grown(settled_case) == [TARGETS, CHANGES, UNCERTAINTY, NEXT]
    finally:
        _materialize(settled_case, COST)  # fresh again, for the tests below


def test_a_parent_below_a_run_in_progress_is_not_settled(settled_case):
    """A run the driver did not submit (the daemon's schedule, or one started by hand) rewrites the scores, an
    ancestor of the case's rank bootstrap: rank_uncertainty and next_evaluations, which read the bootstrap, wait for
    it as the automation's AncestorPending makes them (review 44b, finding 4); once it finished they join. Red when
    `settled` reads only the driver's own runs. Last in this module: the run is on the shared raw table while it
    lasts."""
    run = _run(settled_case, [KEY("raw/benchmark_scores")], None, failed=False)
    try:
        assert _grown(settled_case) == [TARGETS, CHANGES]
    finally:
        settled_case.report_dagster_event(DagsterEvent(DagsterEventType.RUN_SUCCESS.value, job_name=run.job_name),
                                          run_id=run.run_id)
    assert _grown(settled_case) == [TARGETS, CHANGES, UNCERTAINTY, NEXT]
