"""pipelines.queue_refresh without a stack: a tick that overlaps runs in flight does not request their asset
partitions again, nor their children, before those runs finished (issue 44, item 3; review finding 10)."""

import dagster as dg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipelines.queue_refresh as qr
from pipelines.queue_refresh import _split_in_flight
from pipelines.refresh import MAX_TICKS, RefreshReport

TARGETS, LEADERBOARDS, RECOMMENDATIONS = (dg.AssetKey(["compass", name]) for name in
                                          ("targets", "leaderboards", "recommendations"))
CHANGES = dg.AssetKey(["compass", "leaderboard_changes"])
LOW, ALL = "small_open|cost_aware_low", "small_open|constrained_all"


def test_a_tick_does_not_request_what_a_run_in_flight_plans():
    """A run in flight plans one decision partition, i.e. all five decision tables (a multi-asset that cannot run in
    part): a tick requesting any of them for that partition, or their child, gets them deferred, the other partition
    submitted. Red when nothing is deferred (the cold refresh ran 11 asset partitions twice, 73 materializations
    instead of 62, measured on the live stack), when the run's inseparable siblings are not counted as planned (the
    leaderboards, only the targets named in the run's request, would run twice) and when the child of a planned
    asset partition is submitted (the old `_not_in_flight`)."""
    in_flight = {"run-1": (LOW, [TARGETS])}
    runs = [(LOW, [LEADERBOARDS, CHANGES]), (ALL, [TARGETS]), (LOW, [RECOMMENDATIONS])]
    assert _split_in_flight(runs, in_flight) == ([(ALL, [TARGETS])],
                                                 [(LOW, [LEADERBOARDS, CHANGES]), (LOW, [RECOMMENDATIONS])])
    assert _split_in_flight(runs, {}) == (runs, [])


class _Instance:
    """An instance with only a home (the automation cursor's file) and the run tags the driver adds."""

    def __init__(self, root_directory):
        self.root_directory = str(root_directory)
        self.added: dict[str, dict[str, str]] = {}

    def add_run_tags(self, run_id, tags):
        self.added.setdefault(run_id, {}).update(tags)


class _InstantQueue:
    """Runs that finish as soon as they are submitted (no stack): the driver's loop alone."""

    def __init__(self, home):
        self.instance = _Instance(home)
        self.submitted: list[tuple[str | None, list[dg.AssetKey]]] = []
        self.tags: list[dict | None] = []

    def submit(self, keys, partition, tags=None):
        self.submitted.append((partition, keys))
        self.tags.append(tags)
        return f"run-{len(self.submitted)}"

    def finished(self, run_ids):
        return dict.fromkeys(run_ids, dg.DagsterRunStatus.SUCCESS)

    def wait(self, run_ids, timeout_s, any_of=False):
        return self.finished(run_ids)

    def steps_waiting(self):
        return False


def _ticks(answer):
    """A stand-in for pipelines.automation_ticks.AutomationTicks: `answer(cursor)` gives (run requests, new cursor)."""

    class Ticks:
        def __init__(self, defs, instance, cursor):
            self.cursor = cursor

        def tick(self):
            requests, self.cursor = answer(self.cursor)
            return requests

        def serialized_cursor(self):
            return self.cursor

    return Ticks


class _OneAtATimeQueue(_InstantQueue):
    """Runs that finish one per wait, in the order submitted; those in `failing` fail."""

    def __init__(self, home, failing=()):
        super().__init__(home)
        self.done: set[str] = set()
        self.failing = set(failing)

    def finished(self, run_ids):
        return {run_id: dg.DagsterRunStatus.FAILURE if run_id in self.failing else dg.DagsterRunStatus.SUCCESS
                for run_id in run_ids if run_id in self.done}

    def wait(self, run_ids, timeout_s, any_of=False):
        self.done.add(min(set(run_ids) - self.done, key=lambda run_id: int(run_id.split("-")[1])))
        return self.finished(run_ids)


class _Clock:
    """The driver's time: `_TimedQueue.wait` moves it to the next run's end, the driver's sleeps advance it."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class _TimedQueue(_InstantQueue):
    """Run i (in submission order) finishes at `ends[i]` on the driver's clock; a step waits on the broker for a
    worker until `waiting_until`."""

    def __init__(self, home, clock, ends, waiting_until):
        super().__init__(home)
        self.clock, self.ends, self.waiting_until = clock, ends, waiting_until

    def _end(self, run_id):
        return self.ends[int(run_id.split("-")[1]) - 1]

    def finished(self, run_ids):
        return {run_id: dg.DagsterRunStatus.SUCCESS for run_id in run_ids if self._end(run_id) <= self.clock.now}

    def wait(self, run_ids, timeout_s, any_of=False):
        self.clock.now = max(self.clock.now, min(self._end(run_id) for run_id in run_ids))
        return self.finished(run_ids)

    def steps_waiting(self):
        return self.clock.now < self.waiting_until


def _timed_refresh(monkeypatch, tmp_path, answers, ends, waiting_until):
    """`tick_as_runs_finish` on a `_TimedQueue`: (when the driver ticked, runs submitted when each tick printed)."""
    clock, ticked = _Clock(), []
    monkeypatch.setattr(qr, "time", clock)
    monkeypatch.setattr(qr, "TICK_GAP_S", 10.0)

    def answer(cursor):
        ticked.append(clock.now)
        return next(answers, []), cursor

    monkeypatch.setattr(qr, "AutomationTicks", _ticks(answer))
    monkeypatch.setattr(qr, "sync_dynamic_partitions", lambda instance: None)
    monkeypatch.setattr(qr, "grow", lambda instance, runs, others, blocked: runs)
    monkeypatch.setattr(qr, "skipped_to_retry", lambda instance, blocked: ([], []))
    monkeypatch.setattr(qr, "_still_stale", lambda instance, runs: runs)
    monkeypatch.setattr(RefreshReport, "add", lambda self, *args: None)
    queue, submitted_at_tick = _TimedQueue(tmp_path, clock, ends, waiting_until), []
    qr.tick_as_runs_finish(queue, RefreshReport(), 1, lambda line: submitted_at_tick.append(len(queue.submitted)))
    return ticked, submitted_at_tick


def _decisions(*scenarios):
    return [dg.RunRequest(partition_key=f"small_open|{s}", asset_selection=[LEADERBOARDS]) for s in scenarios]


@pytest.mark.parametrize("waiting_until, tick_times", [(100, [0, 10, 12]), (0, [0, 3, 6, 9, 12]),
                                                       (5, [0, 5, 6, 9, 12])])
def test_while_steps_wait_for_a_worker_a_finished_run_is_ticked_on_after_the_gap(monkeypatch, tmp_path,
                                                                               waiting_until, tick_times):
    """Four runs finishing at 3, 6, 9 and 12 s. While steps wait on the broker for a worker (every worker has work),
    the runs finished at 3, 6 and 9 s are ticked on once, TICK_GAP_S (10 s here) after the last tick (on the default graph
    with 2 workers most ticks requested nothing and each took CPU seconds from the steps); with no step waiting the
    driver ticks as each run finishes, as before; when the wait ends within the gap (at 5 s), the driver ticks then,
    not at 10 s. Red without the gap (the first case ticks at 3 s), with the gap whatever the broker says (the second
    case ticks at 10 s) and when the gap's poll ignores the broker (the third case ticks at 10 s)."""
    ticked, _ = _timed_refresh(monkeypatch, tmp_path, iter([_decisions("a", "b", "c", "d")]), [3, 6, 9, 12],
                               waiting_until)
    assert ticked == tick_times


def test_a_run_that_finished_during_the_gap_is_not_in_flight_at_the_next_tick(monkeypatch, tmp_path):
    """Two runs finishing at 3 and 6 s, steps waiting throughout: the tick after the gap (10 s) requests the second
    run's partition again; that run finished during the gap, so the request is submitted at that tick, not deferred
    to one more tick. Red when the runs that finished during the gap are not booked before the tick."""
    answers = iter([_decisions("a", "b"), [dg.RunRequest(partition_key="small_open|b",
                                                         asset_selection=[LEADERBOARDS, CHANGES])]])
    ticked, submitted_at_tick = _timed_refresh(monkeypatch, tmp_path, answers, [3, 6, 11], 100)
    assert ticked[:2] == [0, 10] and submitted_at_tick[:2] == [2, 3]


@pytest.mark.parametrize("stale, low_run_fails", [(set(), False), ({LEADERBOARDS}, False), ({LEADERBOARDS}, True)])
def test_requests_waiting_for_a_run_in_flight_are_deferred_then_rechecked(monkeypatch, tmp_path, stale,
                                                                           low_run_fails):
    """Tick 1 queues a decision partition of each scenario; after the first finished, tick 2 requests the other's
    leaderboards (planned by its run in flight: a tick seeing its steps part-way) and their child. Neither is
    submitted while that run is in flight; after it finished, the child (stale: its parent got a new version) runs,
    and the leaderboards run again only if still stale (a parent changed after that run read it: the automation,
    its trigger spent, will not request them again). Red with the old drop (the child submitted at tick 2, the
    stale leaderboards never) and when the deferred requests are not re-checked (they vanish: nothing after tick 2)
    or not filtered (the fresh leaderboards run twice). When that run fails (e.g. the decisions' blocking check),
    nothing it held runs, as the automation waits while a parent's run failed: red when failures are not held."""
    answers = iter([[dg.RunRequest(partition_key=p, asset_selection=[LEADERBOARDS]) for p in (ALL, LOW)],
                    [dg.RunRequest(partition_key=LOW, asset_selection=[LEADERBOARDS, CHANGES])], [], []])
    monkeypatch.setattr(qr, "AutomationTicks", _ticks(lambda cursor: (next(answers), cursor)))
    monkeypatch.setattr(qr, "sync_dynamic_partitions", lambda instance: None)
    monkeypatch.setattr(qr, "grow", lambda instance, runs, others, blocked: runs)  # test_run_growth.py
    monkeypatch.setattr(qr, "skipped_to_retry", lambda instance, blocked: ([], []))
    monkeypatch.setattr(qr, "_still_stale", lambda instance, runs: [
        (p, [k for k in keys if k == CHANGES or k in stale]) for p, keys in runs])
    monkeypatch.setattr(RefreshReport, "add", lambda self, *args: None)
    queue, submitted_at_tick = _OneAtATimeQueue(tmp_path, failing={"run-2"} if low_run_fails else ()), []
    qr.tick_as_runs_finish(queue, RefreshReport(), 1,
                           lambda line: submitted_at_tick.append(len(queue.submitted)))
    assert queue.submitted[:2] == [(ALL, [LEADERBOARDS]), (LOW, [LEADERBOARDS])]
    assert submitted_at_tick[:2] == [2, 2]  # tick 2 submitted nothing: the LOW run was in flight
    after = [key for key in (LEADERBOARDS, CHANGES) if key == CHANGES or key in stale]
    assert queue.submitted[2:] == ([] if low_run_fails else [(LOW, after)])


def test_a_failed_grown_run_is_tagged_for_a_later_refresh_to_request_what_it_skipped(monkeypatch, tmp_path):
    """A decision run that leaderboard_changes joined fails: the driver tags it (RETRY_TAG pending: what it skipped
    counts as failed, which nothing requests again; review 44b, finding 2), and the run names what joined it
    (GROWN_TAG). What an earlier failed run skipped (pipelines.run_growth.skipped_to_retry, tested in
    test_run_growth.py) is submitted with the first tick's runs, and that run tagged done. Red when a failed grown
    run is not tagged, and when the retries are not submitted or not tagged done."""
    answers = iter([[dg.RunRequest(partition_key=LOW, asset_selection=[TARGETS])], [], []])
    monkeypatch.setattr(qr, "AutomationTicks", _ticks(lambda cursor: (next(answers), cursor)))
    monkeypatch.setattr(qr, "sync_dynamic_partitions", lambda instance: None)
    monkeypatch.setattr(qr, "grow", lambda instance, runs, others, blocked: [
        (partition, keys + [CHANGES] if TARGETS in keys else keys) for partition, keys in runs])
    monkeypatch.setattr(qr, "skipped_to_retry", lambda instance, blocked: ([(ALL, [CHANGES])], ["an-old-run"]))
    monkeypatch.setattr(RefreshReport, "add", lambda self, *args: None)
    queue = _OneAtATimeQueue(tmp_path, failing={"run-2"})
    qr.tick_as_runs_finish(queue, RefreshReport(), 1, lambda line: None)
    assert queue.submitted == [(ALL, [CHANGES]), (LOW, [TARGETS, CHANGES])]
    assert queue.tags == [None, {qr.GROWN_TAG: "compass/leaderboard_changes"}]
    assert queue.instance.added == {"an-old-run": {qr.RETRY_TAG: "done"}, "run-2": {qr.RETRY_TAG: "pending"}}


def test_a_queued_refresh_starts_from_the_last_refresh_s_cursor_and_keeps_its_own(monkeypatch, tmp_path):
    """The driver's first tick evaluates against the automation cursor the last refresh left in the home (as `compass
    run` does), and it leaves its last cursor for the next: with None (review 44b, finding 6), tick 1 had no previous
    evaluation, so a source's new data version or a new code version from before it reached no child (a warm queued
    refresh recomputed nothing: `cascade/economics` not requested after a new `datasets/records`, reproduced with
    Dagster's own tick). Red with the old `cursor = None` and without the save."""
    seen = []

    def tick(cursor):
        seen.append(cursor)
        return [], f"after tick {len(seen)}"

    monkeypatch.setattr(qr, "AutomationTicks", _ticks(tick))
    monkeypatch.setattr(qr, "skipped_to_retry", lambda instance, blocked: ([], []))
    queue = _InstantQueue(tmp_path)
    qr._save_cursor(queue.instance, "the last refresh's")
    qr.tick_as_runs_finish(queue, RefreshReport(), 1, lambda line: None)
    assert seen == ["the last refresh's"]
    qr.tick_as_runs_finish(queue, RefreshReport(), 1, lambda line: None)
    assert seen == ["the last refresh's", "after tick 1"]


def test_a_refresh_that_does_not_settle_stops(monkeypatch, tmp_path):
    """A tick that requests the same decision partition again after every run (as a data version that changed on
    every run would) stops the refresh after MAX_TICKS runs of that partition key, with an error naming it, instead
    of ticking for ever; a tick that requests nothing ends it after the runs it started. Red when the bound is
    removed (the loop never ends: seen, this test killed by `timeout 90`, no output) and when the runs are not
    counted (`unsettled` always empty: the same)."""
    requests = [dg.RunRequest(partition_key=LOW, asset_selection=[LEADERBOARDS])]  # it has children
    monkeypatch.setattr(qr, "AutomationTicks", _ticks(lambda cursor: (requests, cursor)))
    monkeypatch.setattr(qr, "sync_dynamic_partitions", lambda instance: None)
    monkeypatch.setattr(qr, "grow", lambda instance, runs, others, blocked: runs)  # test_run_growth.py
    monkeypatch.setattr(qr, "skipped_to_retry", lambda instance, blocked: ([], []))
    monkeypatch.setattr(RefreshReport, "add", lambda self, *args: None)
    queue = _InstantQueue(tmp_path)
    with pytest.raises(RuntimeError, match=f"more than {MAX_TICKS} runs of partition key.*{LOW}"):
        qr.tick_as_runs_finish(queue, RefreshReport(), 1, lambda line: None)
    assert len(queue.submitted) == MAX_TICKS

    answers = iter([requests, requests, []])
    monkeypatch.setattr(qr, "AutomationTicks", _ticks(lambda cursor: (next(answers), cursor)))
    queue, report = _InstantQueue(tmp_path), RefreshReport()
    qr.tick_as_runs_finish(queue, report, 1, lambda line: None)
    assert len(queue.submitted) == 2 and report.ticks == 3


@pytest.mark.parametrize("value, named", [("compass/case_benchmarks,compass/case_benchmark", "compass/case_benchmark'"),
                                          ("compass/leaderboards", "compass/leaderboards")])
def test_a_remote_step_that_is_not_one_assets_step_stops_the_driver(monkeypatch, capsys, value, named):
    """COMPASS_REMOTE_STEPS naming a misspelled key, or a member of a multi-asset (the decisions: their step is not
    named after the key), is one line naming the variable and the key, exit 2, before the instance is opened; the
    stack's keys pass. Red when the keys are not checked (both ran in place without a word: the driver went on to
    open the instance, here an AssertionError from the stub)."""
    from pipelines.executor import remote_steps
    from pipelines.stack import REMOTE_STEPS

    monkeypatch.setenv("COMPASS_REMOTE_STEPS", ",".join(REMOTE_STEPS))
    assert remote_steps() == frozenset(REMOTE_STEPS)
    monkeypatch.setenv("COMPASS_REMOTE_STEPS", value)
    monkeypatch.setattr(qr.dg.DagsterInstance, "get", lambda: (_ for _ in ()).throw(AssertionError("instance opened")))
    assert qr.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: COMPASS_REMOTE_STEPS: '") and named in err and len(err.strip().splitlines()) == 1



_ONE_STEP = {"compass/case_benchmarks", "compass/rank_bootstrap", "compass/variance_explained"}  # the stack's
_REMOTE_PARTS = st.one_of(st.sampled_from([*sorted(_ONE_STEP), " compass/variance_explained ", "compass/leaderboards",
                                           ""]),
                          # what an environment variable can hold: no NUL, no lone surrogate
                          st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                                  max_size=12))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_REMOTE_PARTS, max_size=4))
def test_any_remote_steps_value_is_its_keys_or_one_line_naming_a_bad_key(monkeypatch, parts):
    """Any COMPASS_REMOTE_STEPS value (real keys, a multi-asset member, blanks, padding, arbitrary text with commas and
    newlines): either every key names one asset's own step and `remote_steps` returns exactly them, or a SettingsError
    of one line names the first bad key. Red when a key is not checked, or a key with a newline is echoed raw."""
    from pipelines.executor import remote_steps
    from resources.settings import SettingsError

    value = ",".join(parts)
    keys = {k.strip() for k in value.split(",") if k.strip()}
    monkeypatch.setenv("COMPASS_REMOTE_STEPS", value)
    try:
        got = remote_steps()
    except SettingsError as error:
        message = str(error)
        assert len(message.splitlines()) == 1 and message.startswith("COMPASS_REMOTE_STEPS: ")
        assert any(repr(k) in message for k in keys - _ONE_STEP), message
    else:
        assert got == keys and keys <= _ONE_STEP  # arbitrary text is no asset key (nor is a multi-asset member)


def test_a_deferred_request_is_stale_only_when_a_parent_changed_since_it_materialized():
    """`_still_stale` on Dagster's own records (an ephemeral instance, materializations carrying the data-version
    provenance a run records): `raw/models` computed from `live/fetches` v1 is done; after fetches v2 it runs again.
    Red when it returns every deferred request (the first assert: a run in flight's work done twice) and when it
    returns none (the second: the refresh ends with raw/models stale)."""
    from dagster._core.definitions.data_version import (CODE_VERSION_TAG, DATA_VERSION_TAG,
                                                        get_input_data_version_tag, get_input_event_pointer_tag)

    instance = dg.DagsterInstance.ephemeral()
    fetches, models = dg.AssetKey(["live", "fetches"]), dg.AssetKey(["raw", "models"])

    def materialize(key, version, parent=None):
        tags = {DATA_VERSION_TAG: version, CODE_VERSION_TAG: qr.defs.resolve_asset_graph().get(key).code_version}
        if parent is not None:
            record = instance.fetch_materializations(parent, limit=1).records[0]
            tags |= {get_input_data_version_tag(parent): record.asset_materialization.tags[DATA_VERSION_TAG],
                     get_input_event_pointer_tag(parent): str(record.storage_id)}
        instance.report_runless_asset_event(dg.AssetMaterialization(key, tags=tags))

    materialize(fetches, "v1")
    materialize(models, "m1", parent=fetches)
    assert qr._still_stale(instance, [(None, [models])]) == []
    materialize(fetches, "v2")
    assert qr._still_stale(instance, [(None, [models])]) == [(None, [models])]


def test_a_tick_whose_query_finds_its_connection_dropped_is_ticked_again(tmp_path):
    """Postgres restarted while the driver's kept connection sat in the pool for less than PING_AFTER_IDLE_S: the
    tick's query fails on the dead connection (SQLAlchemy invalidates it) and the driver ticks again after a wait
    instead of stopping the refresh without saving its cursor; any other database error stops it. On a SQLite file,
    the disconnect simulated through the dialect's `is_disconnect`. Red when the driver calls `ticks.tick()` once
    (seen: the DBAPIError reached the test)."""
    from sqlalchemy import create_engine, exc, text
    from sqlalchemy.pool import QueuePool

    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}", poolclass=QueuePool)
    dropped = [True]
    engine.dialect.is_disconnect = lambda error, connection, cursor: dropped[0]

    class Ticks:
        def __init__(self):
            self.queries = ["select * from no_such_table", "select 1"]  # the first fails as a dead connection would

        def tick(self):
            with engine.connect() as connection:
                connection.execute(text(self.queries.pop(0)))
            return ["requests"]

    waits = []
    assert qr.tick_riding_out_restarts(Ticks(), waits.append) == ["requests"]
    assert waits == [qr.TICK_RETRY_WAITS_S[0]]
    dropped[0] = False
    with pytest.raises(exc.DBAPIError):
        qr.tick_riding_out_restarts(Ticks(), waits.append)
    assert waits == [qr.TICK_RETRY_WAITS_S[0]]


def test_the_driver_s_poll_reads_finished_runs_from_the_instance():
    """`Queue.finished` on Dagster's own run storage (an ephemeral instance): only finished runs are returned, with
    their status. Red when the status filter is wrong (a started run reported finished ends its bookkeeping early)."""
    instance = dg.DagsterInstance.ephemeral()
    status = {name: getattr(dg.DagsterRunStatus, name) for name in ("NOT_STARTED", "STARTING", "STARTED", "SUCCESS",
                                                                     "FAILURE")}
    ids = {name: instance.add_run(dg.DagsterRun(job_name="noop", status=value)).run_id
           for name, value in status.items()}
    queue = qr.Queue(instance, workspace=None)
    assert queue.finished(ids.values()) == {ids["SUCCESS"]: status["SUCCESS"], ids["FAILURE"]: status["FAILURE"]}
    assert queue.finished([ids["STARTED"], ids["NOT_STARTED"], ids["STARTING"]]) == {}


def test_steps_waiting_reads_the_asset_step_queues_of_the_broker():
    """`Queue.steps_waiting` on kombu's in-memory broker: nothing declared, or a queue declared and empty, is no wait;
    a step's message on `duckdb` (or `remote`) is, until a worker takes it; a message on the checks' queue `dagster`
    is not (its worker runs no asset step); no broker, or one that cannot be reached, is no wait (the driver ticks at
    once, as without the gap). Red when the queues are not read (always False), when every queue counts, and when an
    unreachable broker stops the refresh."""
    import kombu

    queue = qr.Queue(None, None, "memory://")
    assert not queue.steps_waiting()
    with kombu.Connection("memory://") as connection:
        channel = connection.channel()
        queues = {name: kombu.Queue(name, kombu.Exchange(name), routing_key=name)(channel)
                  for name in ("duckdb", "remote", "dagster")}
        for declared in queues.values():
            declared.declare()
        assert not queue.steps_waiting()
        connection.Producer(channel).publish({"step": "x"}, exchange="dagster", routing_key="dagster")
        assert not queue.steps_waiting()
        for name in ("duckdb", "remote"):
            connection.Producer(channel).publish({"step": "x"}, exchange=name, routing_key=name)
            assert queue.steps_waiting()
            queues[name].get(no_ack=True)  # a worker took it
            assert not queue.steps_waiting()
    assert not qr.Queue(None, None).steps_waiting()
    assert not qr.Queue(None, None, "redis://127.0.0.1:1/0").steps_waiting()
