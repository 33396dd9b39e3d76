"""The deploy profile running for real: Postgres, Redis, code server, daemon and Celery workers started by
`make deploy-check` (pipelines.stack), after its cold refresh through the run queue (pipelines.queue_refresh).

These tests drive that live stack (COMPASS_DEPLOY_STACK names its var/deploy/stack.json); without it they skip,
so `make test` does not need Postgres or Redis. Each test states the guarantee it checks; the mutation that turns
it red is in its docstring.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import ROOT

STATE = os.environ.get("COMPASS_DEPLOY_STACK")
pytestmark = pytest.mark.skipif(
    not STATE or not Path(STATE).exists(),
    reason="needs the live deploy stack (Postgres, Redis, Celery workers): run `make deploy-check`",
)
RUN_TIMEOUT_S = 900  # a loaded CI machine; a poll, returns when the run ends


@pytest.fixture(scope="module")
def stack():
    """The running stack, this process's environment pointed at it (its Dagster instance and warehouse)."""
    from pipelines.stack import Stack

    stack = Stack.load(Path(STATE).parent)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in stack.env().items():
            mp.setenv(key, value)
        yield stack


@pytest.fixture(scope="module")
def instance(stack):
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        yield instance


@pytest.fixture(scope="module")
def queue(stack, instance):
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import WorkspaceFileTarget

    from pipelines.queue_refresh import Queue

    with WorkspaceProcessContext(instance, WorkspaceFileTarget(paths=[stack.workspace])) as workspace:
        yield Queue(instance, workspace)


def versions(db: str | Path) -> dict[str, list[str]]:
    """Every published table's data versions (sorted, distinct), by table."""
    from resources.warehouse import Warehouse

    wh = Warehouse(db)
    tables = wh.query("select table_schema || '.' || table_name as t from information_schema.columns "
                      "where table_catalog = 'warehouse' and column_name = 'data_version' "
                      "and table_schema <> 'history' order by 1")["t"]
    return {t: sorted(wh.query(f"select distinct data_version from {t}")["data_version"].astype(str)) for t in tables}


def differences(a: dict[str, list[str]], b: dict[str, list[str]]) -> list[str]:
    return [f"{t}: {a.get(t)} != {b.get(t)}" for t in sorted(a.keys() | b.keys()) if a.get(t) != b.get(t)]


def step_events(instance, run_ids):
    """Per (run, step): the celery worker(s) that executed it and its (start, end) times, from the event log."""
    import dagster as dg

    steps: dict[tuple[str, str], dict] = {}
    for run_id in run_ids:
        for record in instance.all_logs(run_id):
            event = record.dagster_event
            if event is None or event.step_key is None:
                continue
            step = steps.setdefault((run_id, event.step_key), {"workers": [], "queue": None, "start": None,
                                                                "end": None, "starts": 0})
            if event.event_type == dg.DagsterEventType.ENGINE_EVENT:
                meta = event.engine_event_data.metadata
                if "Celery worker" in meta:
                    step["workers"].append(meta["Celery worker"].value)
                if "Submitting celery task" in (event.message or ""):
                    step["queue"] = event.message.rsplit('"', 2)[-2]
            elif event.event_type == dg.DagsterEventType.STEP_START:
                step["start"], step["starts"] = step["start"] or record.timestamp, step["starts"] + 1
            elif event.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
                step["end"] = record.timestamp
    return steps


def overlapping_steps(steps) -> list[str]:
    """Pairs of duckdb-queue steps whose execution intervals overlap."""
    writers = sorted((s["start"], s["end"], f"{run[:8]}:{key}") for (run, key), s in steps.items()
                     if s["queue"] == "duckdb" and s["start"] and s["end"])
    found, latest = [], None  # latest: the writer that ends last among those started so far
    for start, end, label in writers:
        if latest is not None and start < latest[1]:
            found.append(f"{label} overlaps {latest[2]}")
        if latest is None or end > latest[1]:
            latest = (start, end, label)
    return found


# ---- the cold refresh make deploy-check just ran -------------------------------------------------------------


def test_same_data_versions_as_a_local_run(stack, tmp_path):
    """Every published table of the distributed refresh has the data versions of a local `compass run` on the same
    inputs. Red when a worker computes differently, e.g. the duckdb worker started without COMPASS_SMOKE=1."""
    env = {k: v for k, v in stack.env().items() if k not in ("COMPASS_EXECUTOR", "COMPASS_WRITER_POOL",
                                                             "COMPASS_CELERY_CONFIG", "COMPASS_WRITE_LOG",
                                                             "COMPASS_PUBLISH_FROM", "COMPASS_REMOTE_STEPS")}
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((ROOT / "dagster.yaml").read_text())
    env.update(DAGSTER_HOME=str(home), COMPASS_DB=str(tmp_path / "warehouse.duckdb"),
               COMPASS_INBOX=str(tmp_path / "inbox"), COMPASS_ACCEPTED=str(tmp_path / "sources"))
    local = subprocess.run([str(Path(sys.executable).parent / "compass"), "run"], env=env, cwd=tmp_path,
                           capture_output=True, text=True)
    assert local.returncode == 0, local.stderr[-2000:]
    distributed, here = versions(stack.env()["COMPASS_DB"]), versions(tmp_path / "warehouse.duckdb")
    assert {"compass.leaderboards", "compass.recommendations", "raw.benchmark_scores"} <= here.keys(), sorted(here)
    assert differences(distributed, here) == []


def test_every_kind_of_step_ran_on_its_worker(instance):
    """Writers (raw sources, per-case and per-case x scenario decision partitions) on the duckdb workers (the check's
    second refresh has two), the checks on the compute worker, no step outside Celery, no step of the refresh started
    twice. Red when routing breaks
    (pipelines.executor.route a no-op); the last assertion is red when the check's visibility timeout is below a
    step's duration (a step still running is handed out again; not applied)."""
    import dagster as dg

    runs = [r for r in instance.get_runs() if "compass/test" not in r.tags]
    steps = step_events(instance, [r.run_id for r in runs])
    assert steps and all(s["workers"] for s in steps.values() if s["start"]), "a step ran outside Celery"
    by_queue = {}
    for (run_id, key), s in steps.items():
        by_queue.setdefault(s["queue"], set()).update(w.split("@")[0] for w in s["workers"])
    assert by_queue.get("duckdb") == {"worker-duckdb", "worker-duckdb-2"} and \
        by_queue.get("dagster") == {"worker-compute"}, by_queue
    twice = [f"{run_id[:8]}:{key}" for (run_id, key), s in steps.items() if s["starts"] > 1]
    assert twice == [], f"steps handed out twice (visibility timeout below the step's duration?): {twice}"
    partitions = {r.tags.get("dagster/partition") for r in runs if r.status == dg.DagsterRunStatus.SUCCESS}
    assert None in partitions and any("|" in (p or "") for p in partitions) and \
        any(p and "|" not in p for p in partitions), partitions
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs), [r.run_id for r in runs if r.status !=
                                                                         dg.DagsterRunStatus.SUCCESS]


def test_each_asset_partition_materialized_once(instance):
    """The cold refresh (the check's second; the first was wiped) materialized every asset partition exactly once:
    the driver ticks while runs are in flight and must not request again what a run in flight plans
    (pipelines.queue_refresh._not_in_flight). Red when that filter returns its input unchanged: seen on the live
    stack, 2026-11-29, 73 materializations of 62 asset partitions (the oracle curve and post-hoc and the cascade
    protocols of a dataset, a case x scenario's five decision tables and their children ran twice)."""
    import collections

    import dagster as dg

    refresh_runs = {r.run_id for r in instance.get_runs() if "compass/test" not in r.tags}
    counts = collections.Counter()
    for run_id in refresh_runs:
        for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            counts[(record.dagster_event.asset_key.to_user_string(), record.dagster_event.partition)] += 1
    assert len(counts) >= 60, len(counts)  # the check's graph: 62 asset partitions
    assert [label for label, n in counts.items() if n > 1] == []


def test_remote_steps_ran_where_the_warehouse_is_not(stack, instance):
    """Issue 44 item 2: the steps named in COMPASS_REMOTE_STEPS ran on `worker-remote` only, a worker whose working
    folder holds no warehouse and whose COMPASS_DB cannot exist (its folder would be inside a file); what they staged
    was committed by the warehouse host (stage.publishes lists each of their tables), and
    test_same_data_versions_as_a_local_run compares those tables with a local run's. Green in the check of
    2026-11-29 10:16-10:36 UTC. Not seen red live (a check costs 20 minutes here): red by construction when the
    executor does not route them (`route` ignoring `remote`: no step on queue remote); a remote step that opened the
    warehouse (WarehouseResource.get ignoring COMPASS_STAGE) fails on the impossible path, seen red without the
    stack in tests/pipelines/test_remote_steps.py ("FileExistsError: .../not-a-folder")."""
    from pipelines.stack import REMOTE_STEPS
    from resources.warehouse import Warehouse

    runs = [r.run_id for r in instance.get_runs() if "compass/test" not in r.tags]
    steps = step_events(instance, runs)
    remote = {key for (_, key), s in steps.items() if s["queue"] == "remote" and s["end"]}
    assert remote == {k.replace("/", "__") for k in REMOTE_STEPS}, remote
    workers = {w.split("@")[0] for s in steps.values() if s["queue"] == "remote" for w in s["workers"]}
    assert workers == {"worker-remote"}, workers
    pid = stack.pids["worker-remote"]
    environ = dict(item.split("=", 1) for item in Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
                   if "=" in item)
    db = Path(environ["COMPASS_DB"])
    assert environ["COMPASS_STAGE"] == str(stack.stage) and "COMPASS_PUBLISH_FROM" not in environ
    assert db.parent.is_file() and not db.exists(), db  # no warehouse there, and none can be made
    cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    assert cwd != ROOT and not list(cwd.rglob("*.duckdb")), cwd
    published = set(Warehouse(stack.env()["COMPASS_DB"]).query('select distinct "table" from stage.publishes')["table"])
    assert {"compass.case_benchmarks", "compass.imputation_validation", "compass.variance_explained",
            "compass.bootstrap_measures"} <= published, published


def test_remote_rows_were_in_the_warehouse_before_dagster_recorded_them(stack, instance):
    """Issue 44 item 2's publish step: every staged transaction of the refresh's remote steps was committed by the
    warehouse host (stage.publishes, one row per table of an entry) before Dagster recorded the step's materialization
    of that table, and no entry is left pending. Red when a remote step does not wait for its publish
    (`resources.stage.request_publish` a no-op: nothing publishes the stage, stage.publishes is empty; seen red in
    tests/resources/test_stage.py)."""
    import dagster as dg

    from resources.warehouse import Warehouse

    published = Warehouse(stack.env()["COMPASS_DB"]).query(
        'select "table", max(epoch(published_at::timestamptz)) as at from stage.publishes group by 1')
    at = dict(zip(published["table"], published["at"], strict=True))
    runs = [r.run_id for r in instance.get_runs() if "compass/test" not in r.tags]
    recorded = {}
    for run_id in runs:
        for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            table = ".".join(record.dagster_event.asset_key.path)
            if table in at:
                recorded[table] = max(recorded.get(table, 0), record.timestamp)
    assert recorded.keys() >= {"compass.case_benchmarks", "compass.variance_explained"}, sorted(recorded)
    late = {t: f"published {at[t]:.3f}, recorded {recorded[t]:.3f}" for t in recorded if at[t] > recorded[t]}
    assert late == {}
    assert not any((stack.stage / "pending").glob("*.json"))


# ---- the writer pool and the faults, on runs of their own ------------------------------------------------------


def _messages(error) -> str:
    """A step failure's error with its causes, as text."""
    parts = []
    while error is not None:
        parts.append(error.message)
        error = error.cause
    return " | ".join(parts)


def test_stage_unreachable_fails_the_remote_step_in_one_line_and_publishes_nothing(stack, queue, instance):
    """Shared storage gone (the stage's folder moved away) while a remote step runs: the step fails with one line
    naming the stage, the run fails, and nothing published changed (checked once the stage is back). Red when stage
    mode does not check its stage first (`Stage.check` a no-op: the step fails on a missing table, not naming the
    stage; by construction, not seen live)."""
    import dagster as dg

    db = stack.env()["COMPASS_DB"]
    before = versions(db)
    away = stack.stage.with_name("stage-away")
    stack.stage.rename(away)
    try:
        run_id = queue.submit([dg.AssetKey(["compass", "variance_explained"])], "small_open",
                              tags={"compass/test": "stage"})
        status = queue.wait([run_id], RUN_TIMEOUT_S)[run_id]
    finally:
        away.rename(stack.stage)
    assert status == dg.DagsterRunStatus.FAILURE
    failures = [_messages(r.dagster_event.step_failure_data.error)
                for r in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE)]
    assert failures and all(f"the stage {stack.stage} is unreachable: no such folder" in f for f in failures), failures
    assert differences(versions(db), before) == []



def test_writes_never_overlap_while_steps_do(stack, instance):
    """Writes are serialized, steps are not: in the refresh with two workers on the duckdb queue, writer steps ran at
    the same time on both workers, yet no two exclusive holds of the warehouse lock (each publish transaction, logged
    by every process to COMPASS_WRITE_LOG) overlapped, over both cold refreshes of the check. Red when writers share
    the lock (LOCK_SH for writers in resources.warehouse: seen red in tests/resources/test_warehouse_writes.py, the
    same log and the same overlap finder). Its first half is red by construction, not seen live (a check costs 20
    minutes here), when the pool serializes steps again (`default_limit: 1` in deploy/dagster.yaml: no two writer
    steps overlap). Green in two checks on 2026-11-29."""
    from resources.warehouse import overlapping_holds, write_holds

    runs = [r.run_id for r in instance.get_runs() if "compass/test" not in r.tags]
    steps = step_events(instance, runs)
    workers = {w.split("@")[0] for s in steps.values() if s["queue"] == "duckdb" for w in s["workers"]}
    assert workers == {"worker-duckdb", "worker-duckdb-2"}, f"not both duckdb workers ran writer steps: {workers}"
    assert overlapping_steps(steps), "no two writer steps overlapped: steps are still serialized"
    holds = write_holds(stack.write_log)
    assert len(holds) >= len([s for s in steps.values() if s["queue"] == "duckdb"]) and \
        len({pid for _, _, pid in holds}) >= 2, holds
    assert overlapping_holds(holds) == []


@contextlib.contextmanager
def writer_lock_held(db: str):
    """Hold the exclusive lock every warehouse writer takes (resources.warehouse): writers block in flight."""
    with open(f"{db}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _wait_for_step_in(instance, run_id: str, worker: str, step: str | None, timeout_s: float = 600):
    """Poll the event log until a step of `run_id` started executing on `worker` (and has not finished)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for (_, key), s in step_events(instance, [run_id]).items():
            if (step is None or key == step) and any(w.startswith(worker) for w in s["workers"]) and s["end"] is None:
                return key
        time.sleep(0.1)
    raise TimeoutError(f"no step of {run_id} started on {worker}")


def _wait_for_writers_done(instance, run_id: str, timeout_s: float = 600) -> None:
    """Poll the event log until `run_id` has writer (duckdb queue) steps and all of them finished."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        writers = [s for s in step_events(instance, [run_id]).values() if s["queue"] == "duckdb"]
        if writers and all(s["end"] for s in writers):
            return
        time.sleep(0.05)
    raise TimeoutError(f"the writer steps of {run_id} did not finish within {timeout_s:.0f} s")


@pytest.mark.parametrize(("worker", "queue_name"), [("worker-duckdb", "duckdb"), ("worker-compute", "dagster")])
def test_sigkill_of_a_worker_mid_step_is_redelivered(stack, queue, instance, worker, queue_name):
    """SIGKILL of a worker (its whole process group) while it executes a step: the step's task was not acknowledged
    (task_acks_late), the broker hands it to the restarted worker after the visibility timeout, the run completes and
    the tables hold the same data versions. The step is kept in flight by the held writer lock (a writer blocks at
    once; a check, which runs after its asset, from the moment its asset's writers are done), so the kill cannot
    miss it. A step not executed again within the visibility timeout plus a margin (the check's workers sweep for
    expired steps each second) is lost: the test fails then, naming it, rather than waiting for the run's timeout.
    Green on a live stack (2026-11-26). Seen red (2026-11-26): `task_acks_late: false` in
    deploy/run_config.celery.yaml, fresh stack, the duckdb case: "step raw__models of run 5d20de51-..., killed on
    worker-duckdb, was not executed again within 80 s: its Celery task is lost (acknowledged before it ran?
    task_acks_late must be true)" after 91 s (the task was acknowledged on receipt and died with the worker; before
    this wait the test hung until the run's 300 s timeout). Run after it, the compute case went red too (its writers
    never ran: the dead run keeps the duckdb pool's slot)."""
    import dagster as dg

    from pipelines.stack import VISIBILITY_TIMEOUT_S

    before = versions(stack.env()["COMPASS_DB"])
    keys = [dg.AssetKey(["raw", "models"]), dg.AssetKey(["raw", "benchmark_scores"])]
    with contextlib.ExitStack() as held:
        if queue_name == "duckdb":
            held.enter_context(writer_lock_held(stack.env()["COMPASS_DB"]))
        run_id = queue.submit(keys, None, tags={"compass/test": "kill"})
        if queue_name != "duckdb":
            _wait_for_writers_done(instance, run_id)
            held.enter_context(writer_lock_held(stack.env()["COMPASS_DB"]))
        step = _wait_for_step_in(instance, run_id, worker, None)
        stack.stop_one(worker, sig=9, wait_s=0)
        stack.start_worker(worker, queue_name)
    _wait_for_redelivery(instance, run_id, step, worker, VISIBILITY_TIMEOUT_S + 120)
    status = queue.wait([run_id], RUN_TIMEOUT_S)[run_id]
    assert status == dg.DagsterRunStatus.SUCCESS
    assert differences(versions(stack.env()["COMPASS_DB"]), before) == []


def test_sigkill_of_the_publishing_worker_mid_publish_loses_nothing(stack, queue, instance):
    """SIGKILL of the warehouse host's worker while it holds a remote step's publish task (kept in flight by the held
    writer lock, so the kill cannot miss it): the task was not acknowledged, the restarted worker commits the entry
    whole, the remote step (waiting for it) succeeds, nothing stays pending and the tables hold the same data
    versions. Red when the publish task is acknowledged on receipt (`task_acks_late: false`: the step waits out its
    publish and the run fails; by construction, not seen live)."""
    import dagster as dg

    from resources.warehouse import Warehouse

    db = stack.env()["COMPASS_DB"]
    before = versions(db)
    # its rows deleted on the host (and from the snapshot), so the step stages them again rather than finding its
    # data version published ('unchanged': no entry, no publish task)
    Warehouse(db).delete_rows(["compass.variance_explained"], {"case_id": "small_open"})
    log = stack.logs / "worker-duckdb.log"
    received = log.read_text(errors="replace").count("compass.publish_stage[")
    with writer_lock_held(db):
        run_id = queue.submit([dg.AssetKey(["compass", "variance_explained"])], "small_open",
                              tags={"compass/test": "publisher"})
        deadline = time.monotonic() + 600
        while log.read_text(errors="replace").count("compass.publish_stage[") == received:
            assert time.monotonic() < deadline, "no publish task reached worker-duckdb"
            time.sleep(0.2)
        stack.stop_one("worker-duckdb", sig=9, wait_s=0)
        stack.start_worker("worker-duckdb", "duckdb")
    assert queue.wait([run_id], RUN_TIMEOUT_S)[run_id] == dg.DagsterRunStatus.SUCCESS
    assert differences(versions(db), before) == []
    assert not any((stack.stage / "pending").glob("*.json"))


def _wait_for_redelivery(instance, run_id: str, step: str, worker: str, timeout_s: float) -> None:
    """Poll the event log until `step` was handed to a worker again after the kill; fail naming the lost step."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if len(step_events(instance, [run_id])[(run_id, step)]["workers"]) >= 2:
            return
        time.sleep(0.5)
    pytest.fail(f"step {step} of run {run_id}, killed on {worker}, was not executed again within {timeout_s:.0f} s: "
                f"its Celery task is lost (acknowledged before it ran? task_acks_late must be true), or no worker "
                f"sweeps for expired unacknowledged steps (unacked_restore_interval)", pytrace=False)


def test_broker_restart_mid_run(stack, queue, instance):
    """Redis restarted while a run executes: that run completes or fails cleanly (a finished status), the next run
    of the same assets completes, and nothing published changed (every write is one transaction)."""
    import dagster as dg

    before = versions(stack.env()["COMPASS_DB"])
    keys = [dg.AssetKey(["raw", "models"]), dg.AssetKey(["raw", "benchmark_scores"])]
    with writer_lock_held(stack.env()["COMPASS_DB"]):  # its first writer step stays in flight over the restart
        run_id = queue.submit(keys, None, tags={"compass/test": "broker"})
        _wait_for_step_in(instance, run_id, "worker-", None)
        stack.restart_redis()
    first = queue.wait([run_id], RUN_TIMEOUT_S)[run_id]
    assert first in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE)
    again = queue.submit(keys, None, tags={"compass/test": "broker"})
    assert queue.wait([again], RUN_TIMEOUT_S)[again] == dg.DagsterRunStatus.SUCCESS
    assert differences(versions(stack.env()["COMPASS_DB"]), before) == []


def test_postgres_unavailable_is_one_clear_error(stack):
    """Postgres not reachable at start: one line naming it, exit code 2, no traceback. Red without
    pipelines.queue_refresh.unavailable_postgres (a page of SQLAlchemy traceback)."""
    env = {**stack.env(), "DAGSTER_PG_HOST": "127.0.0.2"}  # loopback, where nothing listens
    done = subprocess.run([sys.executable, "-m", "pipelines.queue_refresh", "-w", stack.workspace], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert "Postgres" in lines[0] and "127.0.0.2" in lines[0] and "Traceback" not in done.stderr, lines
