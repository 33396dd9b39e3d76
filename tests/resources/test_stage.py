"""Steps without the warehouse file (resources.stage, issue 44 item 2): what a step stages in stage mode and the
warehouse host publishes is what the step would have written in place, once, all or nothing."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import duckdb
import pandas as pd
import pytest
import redis.exceptions
from celery.exceptions import TimeoutError as CeleryTimeout

from pipelines import stage_publish
from pipelines.stage_publish import publish_on_host, task_args
from resources.publish import publish_many
from resources import stage as stage_module
from resources.stage import (CLAIMED, DECIDED, PUBLISHES, SET_ASIDE, TAKEN, Stage, StagedWarehouse, StagedWriteRejected,
                             StageUnavailable)
from resources.warehouse import Warehouse
from tests.paths import ROOT

CONTEXT = SimpleNamespace(run=SimpleNamespace(run_id="run-1"), log=logging.getLogger("test_stage"))
A1 = pd.DataFrame({"model_id": ["m1", "m2"], "value": [0.5, 0.25], "n": [1, 2]})
A2 = pd.DataFrame({"model_id": ["m3"], "value": [0.75], "n": [3.0], "extra": ["e"]})  # n a float, a new column
W = pd.DataFrame({"k": ["x", "y"], "w": [None, None]})  # an all-null column: stored as a string
TABLES = ("compass.a", "compass.w", "history.compass_a")


def killed_on_commit(n: int, publish: str) -> str:
    """A script that runs `publish` with `stage._commit` SIGKILLing its process on the n-th staged write applied, in
    the middle of the publish's one transaction."""
    return f"""
import os, signal, sys
from pipelines.stage_publish import publish_on_host
from resources import stage
from resources.warehouse import Warehouse
real, calls = stage._commit, []
def dies(*args):
    calls.append(1)
    if len(calls) == {n}:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args)
stage._commit = dies
{publish}
"""


# A publisher (`publish_stage` of the warehouse at argv[1]) killed as it applies the third staged write.
KILLED_PUBLISHER = killed_on_commit(3, "Warehouse(sys.argv[1]).publish_stage()")
# The host's publish task (pipelines.stage_publish.publish_on_host) for the entries argv[2:] of the stage in
# COMPASS_PUBLISH_FROM, killed as it applies their second write.
PUBLISH_TASK = killed_on_commit(2, 'print(publish_on_host(os.environ["COMPASS_PUBLISH_FROM"], sys.argv[2:]))')


def _publish_all(wh: Warehouse) -> list[str]:
    """Scoped writes of two partitions and a whole table without history: their data versions."""
    results = [publish_many(CONTEXT, wh, {"compass.a": A1}, {"case_id": "c1"}),
               publish_many(CONTEXT, wh, {"compass.a": A2}, {"case_id": "c2"}),
               publish_many(CONTEXT, wh, {"compass.w": W}, history=False)]
    return [r.data_version.value for r in results]


def _table(wh: Warehouse, table: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows (publication time aside: two runs a second apart) and column types of a table."""
    return wh.query(f"select * exclude (refreshed_at) from {table}"), wh.query(f"describe {table}")


@pytest.fixture
def stage(tmp_path, monkeypatch):
    folder = tmp_path / "stage"
    folder.mkdir()
    Stage(str(folder)).create_empty()  # set up by the warehouse host, its warehouse empty
    monkeypatch.setattr(stage_module, "_publisher", stage_module.NO_PUBLISH)  # entries pending until publish_stage
    monkeypatch.delenv("COMPASS_PUBLISH_FROM", raising=False)
    monkeypatch.delenv("COMPASS_STAGE", raising=False)
    monkeypatch.setenv("COMPASS_DB", str(tmp_path / "host.duckdb"))  # the only file a stage publishes to
    return folder


def test_staged_then_published_is_the_direct_publish(stage, tmp_path, monkeypatch):
    """Staged in stage mode and committed by the warehouse host: the same data versions as a direct publish, the same
    rows, column types and history; the stage-mode step never creates a warehouse file. Red when the stage-mode
    overlay does not cast a scope's incoming rows to the table's column types (`_replaced` without its cast: `n`
    read back as a float; seen red), and when the publisher keeps no history (`_commit` passing no version to
    `write_relation`: seen red)."""
    direct = Warehouse(tmp_path / "direct.duckdb")
    expected = _publish_all(direct)
    remote = StagedWarehouse(str(stage))
    assert _publish_all(remote) == expected
    assert not any(p.suffix == ".duckdb" for p in tmp_path.rglob("*")) or \
        {p.name for p in tmp_path.rglob("*.duckdb")} == {"direct.duckdb"}
    for table in ("compass.a", "compass.w"):  # stage-mode reads: the pending writes applied, before any publish
        pd.testing.assert_frame_equal(remote.query(f"select * exclude (refreshed_at) from {table}"),
                                      _table(direct, table)[0])
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    host.publish_stage()  # as each step's WarehouseResource.get does on the host
    for table in TABLES:
        for mine, theirs in zip(_table(host, table), _table(direct, table), strict=True):
            pd.testing.assert_frame_equal(mine, theirs)
    assert len(host.query(f"select * from {PUBLISHES}")) == 3 and not os.listdir(stage / "pending")
    for table in ("compass.a", "compass.w"):  # and stage mode now reads the host's export
        pd.testing.assert_frame_equal(remote.query(f"select * exclude (refreshed_at) from {table}"),
                                      _table(direct, table)[0])


def test_overlay_replaces_a_scope_and_deletes_and_republishing_is_a_no_op(stage, tmp_path, monkeypatch):
    """Over a published snapshot, a pending scoped write replaces that scope's rows only and a pending delete removes
    its rows; the same version staged again publishes nothing (no new history row). Red when the overlay keeps the
    replaced scope's old rows (`_replaced` without its `where not`: seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    _publish_all(host)  # published in place: exported to the stage
    remote = StagedWarehouse(str(stage))
    changed = A1.assign(value=[0.1, 0.2])
    publish_many(CONTEXT, remote, {"compass.a": changed}, {"case_id": "c1"})
    read = remote.read("compass.a").sort_values(["case_id", "model_id"])
    assert read["value"].tolist() == [0.1, 0.2, 0.75] and read["extra"].tolist()[-1] == "e"
    remote.delete_rows(["compass.a"], {"case_id": "c2"})
    assert remote.read("compass.a")["case_id"].unique().tolist() == ["c1"]
    again = publish_many(CONTEXT, remote, {"compass.a": changed}, {"case_id": "c1"})
    assert again.metadata["unchanged"] is True and len(os.listdir(stage / "pending")) == 2  # over the overlay
    host.publish_stage()
    assert host.read("compass.a")["value"].sort_values().tolist() == [0.1, 0.2]  # published: c1 replaced, c2 gone
    history, published = len(host.read("history.compass_a")), len(host.read(PUBLISHES))
    rows = host.read("compass.a", {"case_id": "c1"})  # the same version staged again, e.g. by a re-executed step
    remote.replace("compass.a", rows, {"case_id": "c1"}, rows["data_version"].iloc[0])
    host.publish_stage()
    assert len(host.read(PUBLISHES)) == published + 1 and len(host.read("history.compass_a")) == history
    assert host.read("compass.a")["value"].sort_values().tolist() == [0.1, 0.2]


def test_a_killed_publisher_publishes_nothing_and_the_next_one_everything(stage, tmp_path, monkeypatch):
    """A publisher SIGKILLed in the middle of its transaction leaves the warehouse as it was and the entries pending;
    the next commits them all, and entries it finds again after a kill between commit and cleanup are not applied
    twice (a newer version written in place meanwhile survives them). Red when each entry is committed in a transaction
    of its own (seen red: compass.a published without compass.w), and when the publisher does not look committed
    entries up in stage.publishes (the stale entries overwrote the newer version; seen red)."""
    remote = StagedWarehouse(str(stage))
    _publish_all(remote)
    kept = tmp_path / "kept"
    shutil.copytree(stage / "pending", kept)
    host = Warehouse(tmp_path / "host.duckdb")
    killed = subprocess.run([sys.executable, "-c", KILLED_PUBLISHER, str(host.path)], cwd=ROOT, capture_output=True,
                            env={**os.environ, "COMPASS_PUBLISH_FROM": str(stage), "PYTHONPATH": str(ROOT)})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not host.table_exists("compass.a") and not host.table_exists("compass.w")
    assert len(_unpublished(stage)) == 3
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host.publish_stage()
    history = host.read("history.compass_a")
    assert len(host.read("compass.a")) == 3 and len(host.read("compass.w")) == 2
    newer = A1.assign(value=[9.0, 9.0])
    publish_many(CONTEXT, host, {"compass.a": newer}, {"case_id": "c1"})  # a newer version in place meanwhile
    for name in os.listdir(kept):  # a publisher killed after its commit, before it removed the entries
        shutil.copy(kept / name, stage / "pending" / name)
    host.publish_stage()
    assert host.read("compass.a", {"case_id": "c1"})["value"].tolist() == [9.0, 9.0]  # not the stale entry's
    assert len(host.read("history.compass_a")) == len(history) + 2 == 5
    assert len(host.query(f"select * from {PUBLISHES}")) == 3 and not os.listdir(stage / "pending")


def test_an_unreachable_stage_is_one_line_naming_it_and_nothing_is_published(stage, tmp_path, monkeypatch):
    """Host and stage mode: one line naming the stage; the host's warehouse file is not even created."""
    missing = str(tmp_path / "gone")
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", missing)
    host = Warehouse(tmp_path / "host" / "warehouse.duckdb")
    monkeypatch.setenv("COMPASS_DB", str(host.path))
    with pytest.raises(StageUnavailable) as raised:
        host.publish_stage()
    assert str(raised.value) == f"the stage {missing} is unreachable: no such folder"
    assert not host.path.exists()
    with pytest.raises(StageUnavailable, match=f"the stage {missing} is unreachable"):
        StagedWarehouse(missing).read("compass.a")


def _unpublished(stage) -> list[str]:
    """The entries pending or claimed by a publisher (publishing/), not yet committed."""
    return sorted(p.name for folder in ("pending", "publishing") if (stage / folder).is_dir()
                  for p in (stage / folder).iterdir())


def _remote_values(stage) -> list[float]:
    return sorted(StagedWarehouse(str(stage)).read("compass.a")["value"].tolist())


def test_an_export_that_fails_after_its_commit_stays_owed_until_one_succeeds(stage, tmp_path, monkeypatch):
    """A publisher whose export dies after its commit, and an in-place write whose export fails (its retry then
    'unchanged'): the next `publish_stage` exports what they owed, so stage mode reads what the warehouse holds.
    Red when the owed tables are not kept (`export_owed` exporting only the connection's own writes: stage mode
    read [0.5, 0.25] then; seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    with monkeypatch.context() as remote_env:
        remote_env.delenv("COMPASS_PUBLISH_FROM")
        publish_many(CONTEXT, StagedWarehouse(str(stage)), {"compass.a": A1.assign(value=[2.0, 2.0])}, {"case_id": "c1"})
    real, failures = Stage.export, []

    def fails_once(self, con, tables):
        if not failures:
            failures.append(1)
            raise StageUnavailable("the stage is unreachable: blip")
        return real(self, con, tables)

    monkeypatch.setattr(Stage, "export", fails_once)
    with pytest.raises(StageUnavailable):
        host.publish_stage()  # committed, then the export fails
    assert host.read("compass.a")["value"].tolist() == [2.0, 2.0] and len(_unpublished(stage)) == 1
    host.publish_stage()
    assert _remote_values(stage) == [2.0, 2.0] and not _unpublished(stage)
    failures.clear()
    three = A1.assign(value=[3.0, 3.0])
    with pytest.raises(StageUnavailable):
        publish_many(CONTEXT, host, {"compass.a": three}, {"case_id": "c1"})
    assert publish_many(CONTEXT, host, {"compass.a": three}, {"case_id": "c1"}).metadata["unchanged"] is True
    host.publish_stage()  # the next step on the host
    assert _remote_values(stage) == [3.0, 3.0]


def test_rows_that_do_not_fit_fail_the_step_and_a_refused_entry_is_set_aside(stage, tmp_path, monkeypatch):
    """A string staged into a DOUBLE column fails the stage-mode step (nothing pending); an entry the warehouse still
    refuses (staged without that check) goes to failed/ with a one-line reason naming it and its run, and the
    entries after it are published. Red without the staging check (`_check_applies` a no-op: the step succeeded;
    seen red) and without the one-entry-at-a-time retry (publish_stage raised ConversionException; seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    monkeypatch.delenv("COMPASS_PUBLISH_FROM")
    remote = StagedWarehouse(str(stage))
    bad = A1.assign(value=["not a number", "x"])
    with pytest.raises(StagedWriteRejected, match=r"^compass\.a: rows staged to .* do not fit the published table"):
        publish_many(CONTEXT, remote, {"compass.a": bad}, {"case_id": "c2"})
    assert not (stage / "pending").exists()
    monkeypatch.setattr(stage_module, "_check_applies", lambda *args: None)
    publish_many(CONTEXT, remote, {"compass.a": bad}, {"case_id": "c2"})
    monkeypatch.undo()
    monkeypatch.setattr(stage_module, "_publisher", stage_module.NO_PUBLISH)
    monkeypatch.setenv("COMPASS_DB", str(host.path))
    publish_many(CONTEXT, StagedWarehouse(str(stage)), {"compass.w": W}, history=False)
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host.publish_stage()
    assert len(host.read("compass.w")) == 2 and host.read("compass.a")["case_id"].unique().tolist() == ["c1"]
    assert not os.listdir(stage / "pending")
    failed = sorted(os.listdir(stage / "failed"))
    assert len(failed) == 2 and failed[1] == failed[0] + ".error"
    reason = (stage / "failed" / failed[1]).read_text()
    assert reason.startswith(f"staged entry {failed[0]} (run run-1) not published: ") and reason.count("\n") == 1


def test_only_the_warehouse_compass_db_names_takes_the_stage(stage, tmp_path, monkeypatch):
    """With COMPASS_PUBLISH_FROM set, a write to another file (a backup, a script's --db) neither commits the stage's
    entries nor exports its tables over the snapshot. Red when any file publishes (`_publishing_stage` without its
    path check: the copy took the entry; seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    shutil.copy(host.path, tmp_path / "copy.duckdb")
    with monkeypatch.context() as remote_env:
        remote_env.delenv("COMPASS_PUBLISH_FROM")
        publish_many(CONTEXT, StagedWarehouse(str(stage)), {"compass.w": W}, history=False)
    copy = Warehouse(tmp_path / "copy.duckdb")
    publish_many(CONTEXT, copy, {"compass.a": A2}, {"case_id": "c1"})
    copy.publish_stage()
    assert not copy.table_exists("compass.w") and len(os.listdir(stage / "pending")) == 1
    assert _remote_values(stage) == [0.25, 0.5]
    host.publish_stage()
    assert host.table_exists("compass.w") and not os.listdir(stage / "pending")


def test_reads_never_publish_and_a_publish_never_waits_on_this_process(stage, tmp_path, monkeypatch):
    """While one Warehouse object holds a reading session, another object of the same file reads the committed rows
    (an entry pending) and `publish_stage` returns without publishing, instead of waiting for an exclusive lock
    against this process's own shared one; after the session it publishes. Red when reads publish (the read committed
    the entry: seen red) and when publish_stage ignores the locks this process holds (it hung: seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    with monkeypatch.context() as remote_env:
        remote_env.delenv("COMPASS_PUBLISH_FROM")
        publish_many(CONTEXT, StagedWarehouse(str(stage)), {"compass.w": W}, history=False)
    assert host.read("compass.w").empty and len(os.listdir(stage / "pending")) == 1
    seen = []

    def inside_a_session():
        with Warehouse(host.path).reading():
            seen.append(Warehouse(host.path).table_exists("compass.w"))
            Warehouse(host.path).publish_stage()
            seen.append(len(os.listdir(stage / "pending")))

    worker = threading.Thread(target=inside_a_session, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "deadlocked on its own lock"
    assert seen == [False, 1]
    host.publish_stage()
    assert host.table_exists("compass.w")


def test_a_folder_without_the_hosts_marker_is_no_stage(tmp_path, monkeypatch):
    """An empty folder at the stage path (an unmounted share's mount point) is unreachable in stage mode, not an empty
    warehouse, and on the host a write's export to it is one line naming it, nothing written there (the tables stay
    owed); once set up (`create_empty`, the only writer of the marker) the next write exports them; a stage removed
    meanwhile is not recreated by a write. Red when the marker is not required (`check` without it: the read found no
    table; seen red), when the host's export marks the folder itself (the write succeeded, the mount point got a
    marker, a manifest and a snapshot: seen red on the pub branch) and when `_put` recreates the folder (seen red)."""
    empty = tmp_path / "mnt"
    empty.mkdir()
    monkeypatch.delenv("COMPASS_STAGE", raising=False)
    with pytest.raises(StageUnavailable, match=f"^the stage {empty} is unreachable: no STAGE marker in it"):
        StagedWarehouse(str(empty)).read("compass.a")
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(empty))
    monkeypatch.setenv("COMPASS_DB", str(tmp_path / "host.duckdb"))
    host = Warehouse(tmp_path / "host.duckdb")
    with pytest.raises(StageUnavailable, match=f"^the stage {empty} is unreachable: no STAGE marker in it "
                                               r"\(not mounted, or never set up: Stage\.create_empty\)$"):
        publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    assert os.listdir(empty) == [] and len(host.read("compass.a")) == 2  # committed, owed
    Stage(str(empty)).create_empty()
    host.publish_stage()  # the next write on the host exports what is owed
    monkeypatch.delenv("COMPASS_PUBLISH_FROM")
    remote = StagedWarehouse(str(empty))
    assert len(remote.read("compass.a")) == 2
    shutil.rmtree(empty)
    with pytest.raises(StageUnavailable, match="no such folder"):
        remote.stage._write_json("pending/x.json", {})
    assert not empty.exists()


def test_a_table_written_by_sql_in_stage_mode_fails_instead_of_vanishing(stage):
    """Red when the stage-mode connection lets a `create table` pass (it would be lost at close; seen red)."""
    remote = StagedWarehouse(str(stage))
    with pytest.raises(RuntimeError, match=r"compass\.pins written by SQL, not staged"):
        with remote.connect() as con:
            con.execute("create schema compass")
            con.execute("create table compass.pins as select 1 as x")


def test_two_pending_writes_of_one_scope_publish_in_the_order_staged(stage, tmp_path, monkeypatch):
    """Red when entries are applied newest first (`pending` listed in reverse: the overlay read 0.5; seen red)."""
    remote = StagedWarehouse(str(stage))
    for value in (0.5, 0.75):
        publish_many(CONTEXT, remote, {"compass.a": A1.assign(value=[value, value])}, {"case_id": "c1"})
    assert remote.read("compass.a")["value"].tolist() == [0.75, 0.75]
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    host.publish_stage()
    assert host.read("compass.a")["value"].tolist() == [0.75, 0.75]


def _on_host(stage, tmp_path, monkeypatch, args: list) -> int:
    """The host's publish task run with `args` in the host's environment, the step's restored after."""
    with monkeypatch.context() as host_env:
        host_env.setenv("COMPASS_PUBLISH_FROM", str(stage))
        host_env.setenv("COMPASS_DB", str(tmp_path / "host.duckdb"))
        return publish_on_host(*args)


@pytest.fixture
def host_publisher(stage, tmp_path, monkeypatch):
    """The publish task of the warehouse host (pipelines.stage_publish.publish_on_host), called as a step in stage
    mode asks for it: in the host's environment, the step's restored after. (the entries asked for, the publisher)"""
    asked = []

    def publisher(url, entries):
        asked.append(list(entries))
        return _on_host(stage, tmp_path, monkeypatch, task_args(url, entries))

    stage_module.set_publisher(publisher)
    yield asked, publisher
    stage_module.set_publisher(None)


def test_a_remote_write_is_in_the_warehouse_before_the_step_reports_it(stage, tmp_path, host_publisher):
    """Issue 44 item 2's publish step: each staged transaction is committed by the host before `publish_many` returns
    (so the data version Dagster records is in the warehouse), only the entries the step asked for (an entry left by a
    step that failed before asking stays unpublished), and a request delivered twice commits nothing more. Red when
    steps do not ask (`request_publish` a no-op: compass.a absent; seen red) and when a request publishes every
    pending entry (`publish_pending` without its filter: compass.w published; seen red)."""
    asked, publisher = host_publisher
    remote = StagedWarehouse(str(stage))
    stage_module.set_publisher(stage_module.NO_PUBLISH)
    publish_many(CONTEXT, remote, {"compass.w": W}, history=False)  # staged by a step that then died
    orphan = os.listdir(stage / "pending")
    stage_module.set_publisher(publisher)
    result = publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    host = Warehouse(tmp_path / "host.duckdb")
    assert host.data_versions("compass.a") == [result.data_version.value]
    assert not host.table_exists("compass.w") and os.listdir(stage / "pending") == orphan
    assert len(asked) == 1 and asked[0][0] not in orphan
    assert publisher(str(stage), asked[0]) == 0  # delivered twice
    assert len(host.read(PUBLISHES)) == 1


def test_a_refused_request_fails_the_step_and_a_host_without_the_stage_refuses(stage, tmp_path, monkeypatch,
                                                                             host_publisher):
    """Rows the warehouse refuses although the staging check passed fail the step that asked, naming its entry, and
    the entry goes to failed/; a worker that does not publish this stage (COMPASS_PUBLISH_FROM another) refuses the
    task in one line, and the step whose request failed moves its entry to failed/ (else every stage-mode reader
    would apply it). Red when a refused request is set aside silently (the step succeeded; seen red) and when a failed
    request leaves its entry pending (seen red)."""
    remote = StagedWarehouse(str(stage))
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    monkeypatch.setattr(stage_module, "_check_applies", lambda *args: None)
    with pytest.raises(StagedWriteRejected, match=r"^staged entries \S+\.json not published to .*host\.duckdb: "):
        publish_many(CONTEXT, remote, {"compass.a": A1.assign(value=["x", "y"])}, {"case_id": "c2"})
    assert len(os.listdir(stage / "failed")) == 2 and not os.listdir(stage / "pending")
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(tmp_path / "elsewhere"))
    with pytest.raises(RuntimeError, match=r"this worker does not publish the stage .*elsewhere\)"):
        publish_on_host(str(stage), ["x.json"])
    stage_module.set_publisher(publish_on_host)  # that worker, asked by a step: the step fails
    with pytest.raises(RuntimeError, match="this worker does not publish"):
        publish_many(CONTEXT, remote, {"compass.a": A2}, {"case_id": "c3"})
    assert not os.listdir(stage / "pending") and len(os.listdir(stage / "failed")) == 4
    assert "its publish failed: this worker does not publish" in max((stage / "failed").glob("*.error")).read_text()


def test_the_manifest_lists_every_table_and_a_reader_checks_it(tmp_path, monkeypatch):
    """The snapshot's manifest: a warehouse that had tables before publishing was switched on exports them all with
    its first export; history.* is listed without a file, so stage mode reading it fails naming it instead of reading
    nothing; a missing manifest, or one naming a file that is not there, is one line naming the stage. Red when the
    first export exports only the written table (compass.w missing from the manifest; seen red), when history is
    exported like any table (the manifest named a file for it; seen red), and without the reader's file check (seen
    red: DuckDB's IO error on the missing Parquet file, not naming the manifest)."""
    monkeypatch.delenv("COMPASS_STAGE", raising=False)
    monkeypatch.delenv("COMPASS_PUBLISH_FROM", raising=False)
    monkeypatch.setenv("COMPASS_DB", str(tmp_path / "host.duckdb"))
    host = Warehouse(tmp_path / "host.duckdb")
    publish_many(CONTEXT, host, {"compass.w": W}, history=False)  # before publishing was switched on
    folder = tmp_path / "stage"
    folder.mkdir()
    remote = StagedWarehouse(str(folder))
    with pytest.raises(StageUnavailable, match=r"no STAGE marker"):
        remote.read("compass.w")
    Stage(str(folder)).create_empty()  # set up: marked, its manifest empty
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(folder))
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    manifest = Stage(str(folder))._read_json("snapshot/_tables.json")["tables"]
    assert sorted(manifest) == ["compass.a", "compass.w", "history.compass_a", "stage.unexported"]
    assert manifest["compass.a"]["version"] and manifest["history.compass_a"] == {"version": None, "path": None}
    assert len(remote.read("compass.w")) == 2
    with pytest.raises(Exception, match=r"history\.compass_a is in the warehouse but not exported to the stage"):
        remote.read("history.compass_a")
    parquet = folder / manifest["compass.a"]["path"]
    parquet.rename(parquet.with_name("moved"))
    with pytest.raises(StageUnavailable, match=r"inconsistent snapshot: snapshot/_tables\.json lists "
                                               r"snapshot/compass\.a/\w+\.parquet, which is not there"):
        StagedWarehouse(str(folder)).read("compass.w")
    (folder / "snapshot" / "_tables.json").unlink()
    with pytest.raises(StageUnavailable, match=r"has no snapshot manifest \(snapshot/_tables\.json\)"):
        StagedWarehouse(str(folder)).read("compass.w")


def test_garbage_is_what_no_manifest_or_entry_names_once_it_is_old(stage, tmp_path, monkeypatch):
    """Retention: after a second export of compass.a and a published remote write, the published entry's staged file
    goes once older than the grace period, and the superseded snapshot file once the grace period has passed since the
    manifest dropped it, however old the file (a step may have bound it); the manifest's files, a pending entry's file
    and anything younger stay; a pending entry that old (its step died before asking) goes to failed/ with its
    reason, its file kept. Red when garbage ignores the entries (`named` without them: the pending entry's file went;
    seen red) and when it ignores the grace period (the young superseded file went; seen red), and when it counts from
    the file's time (the pub branch: the file written long ago, superseded just now, went; seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    first = set(Stage(str(stage))._files("snapshot"))
    publish_many(CONTEXT, host, {"compass.a": A1.assign(value=[1.0, 1.0])}, {"case_id": "c1"})
    with monkeypatch.context() as remote_env:
        remote_env.delenv("COMPASS_PUBLISH_FROM")
        remote = StagedWarehouse(str(stage))
        publish_many(CONTEXT, remote, {"compass.w": W}, history=False)
    host.publish_stage()  # published: its staged file is garbage
    with monkeypatch.context() as remote_env:
        remote_env.delenv("COMPASS_PUBLISH_FROM")
        publish_many(CONTEXT, remote, {"compass.a": A2}, {"case_id": "c2"})  # pending
    files = Stage(str(stage))._files("tables") | Stage(str(stage))._files("snapshot")
    stage_gc = Stage(str(stage))
    superseded = sorted(first - {"snapshot/_tables.json"} - {v["path"] for v in stage_gc._read_json(
        "snapshot/_tables.json")["tables"].values()})
    assert len(superseded) == 1
    assert stage_gc.collect_garbage() == []  # everything is younger than an hour
    for path in [*(stage / f for f in files), *(stage / "pending").iterdir()]:
        os.utime(path, (0, 0))  # written long ago, the superseded file too (but superseded just now)
    removed = stage_gc.collect_garbage()
    assert superseded[0] not in removed and len(removed) == 1 and removed[0].startswith("tables/compass.w/")
    assert (stage / "failed").is_dir() and len(os.listdir(stage / "failed")) == 2
    assert "abandoned: no publish asked for within 3600 s" in next((stage / "failed").glob("*.error")).read_text()
    manifest = stage_gc._read_json("snapshot/_tables.json")
    assert list(manifest["retired"]) == superseded
    stage_gc._write_json("snapshot/_tables.json", {**manifest, "retired": {superseded[0]: 0.0}})  # an hour later
    assert stage_gc.collect_garbage() == superseded
    assert len(StagedWarehouse(str(stage)).read("compass.a")) == 2  # the manifest's files are all there


def test_a_publish_task_killed_mid_commit_commits_its_entries_whole_when_delivered_again(stage, tmp_path,
                                                                                         monkeypatch):
    """Item 4 in one process tree: the host's publish task for two of three staged entries, SIGKILLed in the middle of
    its transaction (after the first entry's write), leaves the warehouse as it was; the task delivered again (Celery:
    acknowledged late) commits both, the third (not asked for) stays pending. Red when a request's entries are
    committed one transaction each (compass.a held c1 after the kill; seen red)."""
    remote = StagedWarehouse(str(stage))
    _publish_all(remote)
    names = sorted(os.listdir(stage / "pending"))
    env = {**os.environ, "COMPASS_PUBLISH_FROM": str(stage), "COMPASS_DB": str(tmp_path / "host.duckdb"),
           "PYTHONPATH": str(ROOT)}
    host = Warehouse(tmp_path / "host.duckdb")
    killed = subprocess.run([sys.executable, "-c", PUBLISH_TASK, "kill", *names[:2]], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert not host.table_exists("compass.a") and _unpublished(stage) == names
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    assert publish_on_host(str(stage), names[:2]) == 2  # delivered again
    assert sorted(host.read("compass.a")["case_id"]) == ["c1", "c1", "c2"] and not host.table_exists("compass.w")
    assert _unpublished(stage) == names[2:] and len(host.read(PUBLISHES)) == 2


def test_a_step_reads_no_other_steps_pending_entry(stage, tmp_path, monkeypatch, host_publisher):
    """A compute step killed between its pending entry and its publish request (finding 1 of rev44a): no other reader
    sees its rows (the warehouse never gets them), the object that staged it (NO_PUBLISH) does until it is published,
    and a reader with a publisher reads the snapshot only. Red when readers overlay every pending entry (the pub
    branch: the new reader read 9.9; seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    monkeypatch.delenv("COMPASS_PUBLISH_FROM")
    stage_module.set_publisher(stage_module.NO_PUBLISH)  # the killed step: staged, never asked
    killed = StagedWarehouse(str(stage))
    publish_many(CONTEXT, killed, {"compass.a": A1.assign(value=[9.9, 9.9])}, {"case_id": "c1"})
    assert killed.read("compass.a")["value"].tolist() == [9.9, 9.9] and len(os.listdir(stage / "pending")) == 1
    assert _remote_values(stage) == [0.25, 0.5]
    stage_module.set_publisher(host_publisher[1])
    assert _remote_values(stage) == [0.25, 0.5]
    writer = StagedWarehouse(str(stage))
    publish_many(CONTEXT, writer, {"compass.w": W}, history=False)  # published by the host before it returns
    assert len(writer.read("compass.w")) == 2 and writer.read("compass.a")["value"].sort_values().tolist() == [0.25, 0.5]


def test_a_stage_mode_write_without_a_publisher_fails_in_one_line(stage):
    """A step in stage mode in a process that cannot have the host publish (no pipelines.celery_app: `compass run`,
    the in-process executor) fails before it stages anything, instead of succeeding with rows that never reach the
    warehouse. Red when the missing publisher is ignored (the pub branch: the write succeeded; seen red)."""
    stage_module.set_publisher(None)
    remote = StagedWarehouse(str(stage))
    for write in (lambda: publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"}),
                  lambda: remote.delete_rows(["compass.a"], {"case_id": "c1"})):
        with pytest.raises(RuntimeError, match=r"^stage mode \(.*\) needs the warehouse host's publish task: run steps "
                                               r"on workers started with -A pipelines\.celery_app$"):
            write()
    assert not (stage / "pending").exists() and not (stage / "tables").exists()


def test_retention_is_best_effort_and_a_reused_staged_file_is_young(stage, tmp_path, monkeypatch, caplog):
    """An error inside retention (a file another user wrote on a share) is one warning naming the stage, and the write
    it followed succeeds (committed and exported); a staged file reused by content address is touched, so retention
    does not take it before its entry names it. Red when retention's error escapes (the pub branch: the write raised
    PermissionError after its commit; seen red) and when a reused file keeps its old time (collected; seen red)."""
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")

    def denied(self, **_):
        raise PermissionError(13, "Permission denied", str(stage / "snapshot" / "x.parquet"))

    monkeypatch.setattr(Stage, "collect_garbage", denied)
    monkeypatch.setattr(stage_module, "_collected_at", -float("inf"))
    publish_many(CONTEXT, host, {"compass.a": A1}, {"case_id": "c1"})
    assert _remote_values(stage) == [0.25, 0.5]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == [f"retention of the stage {stage} skipped: [Errno 13] Permission denied: "
                      f"'{stage}/snapshot/x.parquet'"]
    monkeypatch.undo()
    staged, rows = Stage(str(stage)), "tables/compass.x/v1/s.parquet"
    with contextlib.closing(duckdb.connect()) as con:
        staged.write_parquet(con, "(select 1 as x)", rows)
        os.utime(stage / rows, (0, 0))  # staged long ago, its entry published: garbage
        staged.write_parquet(con, "(select 1 as x)", rows)  # the same rows staged again
    assert rows not in staged.collect_garbage() and (stage / rows).exists()


def test_an_entry_is_committed_or_set_aside_never_both(stage, tmp_path, monkeypatch):
    """Finding 3 of rev44a: a step that gives up on its request (its wait over, its run terminated) while the host's
    task is about to commit the entry: exactly one of them takes it (the host claims entries by rename under the
    writer lock); a task that arrives after the step set its entry aside commits nothing and says so. Red when the
    publisher commits the entries it listed without claiming them (the pub branch: the row committed and the entry in
    failed/ marked "not published"; seen red) and on the late task's message ("lost staged entries"; seen red)."""
    remote = StagedWarehouse(str(stage))
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    publish_many(CONTEXT, remote, {"compass.w": W}, history=False)
    first, second = sorted(os.listdir(stage / "pending"))

    def timed_out(url, entries):
        raise TimeoutError("The operation timed out")

    def gives_up(name):  # the step's side of request_publish when its wait runs out
        monkeypatch.setattr(stage_module, "_publisher", timed_out)
        with pytest.raises(TimeoutError):
            stage_module.request_publish(Stage(str(stage)), name)

    real = Stage._commit_entries

    def the_step_gives_up_meanwhile(self, wh, con, entries):
        gives_up(first)
        return real(self, wh, con, entries)

    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    with monkeypatch.context() as racing:
        racing.setattr(Stage, "_commit_entries", the_step_gives_up_meanwhile)
        assert publish_on_host(str(stage), [first]) == 1
    host = Warehouse(tmp_path / "host.duckdb")
    assert len(host.read("compass.a")) == 2 and not (stage / "failed").exists()  # committed, so not set aside
    gives_up(second)  # and a task that comes after the step gave up
    with pytest.raises(RuntimeError, match=rf"^staged entries {second} of the stage .* were set aside \(failed/\) "
                                           r"before this publish: not published$"):
        publish_on_host(str(stage), [second])
    assert not host.table_exists("compass.w") and sorted(os.listdir(stage / "failed")) == [second, f"{second}.error"]
    assert not _unpublished(stage)


class _Request:
    """A Celery result answered `after` s after it was sent: `answer()` runs the task as a worker would, or `answer`
    is the task's error (None: the request is lost, never answered); `get(timeout)` waits up to `timeout` as Celery's
    does, `ready()` fails while `down()` (the result backend out of reach)."""

    def __init__(self, answer, after=0.0, down=lambda: False):
        self.answer, self.down, self.revoked = answer, down, False
        self.sent_at = time.monotonic()
        self.at = self.sent_at + after

    def ready(self) -> bool:
        if self.down():
            raise redis.exceptions.ConnectionError("Error 111 connecting to localhost:6379. Connection refused.")
        return self.answer is not None and time.monotonic() >= self.at

    def successful(self) -> bool:
        return self.ready() and not isinstance(self.answer, BaseException)

    def get(self, timeout=None, disable_sync_subtasks=True):
        end = time.monotonic() + (1e9 if timeout is None else timeout)
        while not self.ready():
            if time.monotonic() >= end:
                raise CeleryTimeout("The operation timed out.")
            time.sleep(0.002)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer()

    def revoke(self):
        self.revoked = True


def _through_a_broker(monkeypatch, deliver) -> list[tuple[list, _Request]]:
    """The step's publisher as the deploy profile's workers register it (stage_publish.register), on an app whose
    task's `apply_async(args=...)` returns `deliver(n, args)` (a _Request) for the n-th request: the requests sent."""
    sent = []

    def apply_async(args, **routing):
        sent.append((args, deliver(len(sent), args)))
        return sent[-1][1]

    class App:
        def task(self, name, **options):
            assert options == {"acks_late": True, "reject_on_worker_lost": True}  # a killed publisher: handed on
            return lambda body: SimpleNamespace(apply_async=apply_async)

    monkeypatch.setattr(stage_publish, "WAIT_S", 1.0)
    monkeypatch.setattr(stage_publish, "REASK_S", 0.1)
    monkeypatch.setattr(stage_publish, "POLL_S", 0.01)
    monkeypatch.setattr(stage_module, "_publisher", None)
    stage_publish.register(App())
    return sent


def test_a_publish_request_never_delivered_is_asked_again_and_a_duplicate_commits_nothing(stage, tmp_path,
                                                                                          monkeypatch):
    """Open item 1 of the issue-44 review: the step's first publish request is lost (a worker killed after taking it:
    the broker would hand it on only after its 7200-s visibility timeout, past the step's 30-minute wait); the step
    asks again after REASK_S (here 0.1 s of a 1-s wait), the second request commits the entry and the step finishes
    well before its wait is over; the lost request delivered late commits nothing (0), the warehouse as it was. Red
    without the second request (the old `result.get(WAIT_S)`: the step failed with Celery's TimeoutError; seen red),
    when the first wait is the whole wait (rev-pubq M1, `get(timeout=wait_s)`: timed out; seen red, with a `get` that
    waits, as Celery's does) and when a publish applies an entry stage.publishes already lists again (`done` filter
    removed from `publish_pending`: the late request failed "lost staged entries"; seen red)."""
    asked = []

    def on_host(args):
        asked.append(time.monotonic())
        return _on_host(stage, tmp_path, monkeypatch, args)

    sent = _through_a_broker(monkeypatch, lambda n, args: _Request(None if n == 0 else lambda: on_host(args)))
    result = publish_many(CONTEXT, StagedWarehouse(str(stage)), {"compass.a": A1}, {"case_id": "c1"})
    host = Warehouse(tmp_path / "host.duckdb")
    assert host.data_versions("compass.a") == [result.data_version.value] and not _unpublished(stage)
    assert len(sent) == 2 and sent[0][0] == sent[1][0]
    assert 0.1 <= sent[1][1].sent_at - sent[0][1].sent_at < 0.6 and asked[0] - sent[0][1].sent_at < 0.9
    assert [request.revoked for _, request in sent] == [True, False]  # the lost one revoked once the other answered
    assert _on_host(stage, tmp_path, monkeypatch, sent[0][0]) == 0  # the lost request, delivered at last
    assert len(host.read(PUBLISHES)) == 1 and len(host.read("compass.a")) == 2


def test_a_publish_request_that_times_out_is_revoked(stage, monkeypatch):
    """Finding 7 of rev44a: when a step's wait for its publish tasks runs out (none answered), every request is revoked
    (still queued, none runs after the step gave up), and the step fails, naming its entry, the stage and the host's
    queue, its entry set aside; the wait is WAIT_S, not longer. Red without the revoke (seen red), on the old message
    (rev-pubq nit 8; seen red) and when the wait runs five times WAIT_S (rev-pubq M6; seen red)."""
    sent = _through_a_broker(monkeypatch, lambda n, args: _Request(None))
    with pytest.raises(CeleryTimeout, match=rf"^no answer to \d+ publish requests for \S+\.json of the stage {stage} "
                                            r"within 1 s \(the warehouse host's queue duckdb busy or without a "
                                            r"worker\)$"):
        publish_many(CONTEXT, StagedWarehouse(str(stage)), {"compass.a": A1}, {"case_id": "c1"})
    assert time.monotonic() - sent[0][1].sent_at < 1.0 + 1.0  # (machine load)
    assert len(sent) > 2 and all(request.revoked for _, request in sent)
    assert not _unpublished(stage) and len(os.listdir(stage / "failed")) == 2


def _requests(*made):
    """`send` for wait_for_publish: the n-th call returns made[n]() (or raises it, an exception); the requests sent."""
    sent = []

    def send():
        request = made[min(len(sent), len(made) - 1)]
        if isinstance(request, BaseException):
            sent.append(None)
            raise request
        sent.append(request())
        return sent[-1]

    return send, sent


def test_the_step_waits_for_its_earliest_request_through_a_broker_restart(caplog):
    """rev-pubq findings 1, 2 and 6: the first request is only slow (queued behind long steps), so its answer, after
    two re-asks, is the step's; meanwhile the broker refuses a re-ask and the result backend a look at the answers
    (a Redis restart): one warning each, and the wait goes on; the requests not answered are revoked. Red when only
    the newest request is watched (rev-pubq M2: timed out; seen red), on the old loop (the refused re-ask failed the
    step: kombu's OperationalError; seen red) and without revoking the others once one answered (seen red)."""
    from kombu.exceptions import OperationalError

    t0 = time.monotonic()

    def backend_down():  # after the first request's own wait (0.1 s), for some looks
        return 0.15 <= time.monotonic() - t0 <= 0.2

    send, sent = _requests(lambda: _Request(lambda: 1, 0.35, backend_down), OperationalError("broker restarting"),
                           lambda: _Request(None))
    assert stage_publish.wait_for_publish(send, wait_s=2.0, reask_s=0.1, poll_s=0.01) == 1
    assert time.monotonic() - t0 < 1.5 and len(sent) >= 3 and sent[1] is None
    assert not sent[0].revoked and all(request.revoked for request in sent[2:])
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("asking again failed (broker restarting): still waiting" in w for w in warned)
    assert any(w.startswith("the publish requests' answers cannot be read (Error 111") for w in warned)


def test_a_commit_beats_an_error_and_an_interrupted_wait_revokes_its_requests():
    """rev-pubq nit 7: two requests answered between two looks, the earlier with an error and the later committed:
    the step succeeds (its entry is committed). And a wait interrupted (the run terminated) revokes every request
    (nit 6). Red when the first answer found wins (the old loop: the step failed with the error; seen red) and
    without the revoke on the way out (seen red)."""
    t0 = time.monotonic()
    send, sent = _requests(lambda: _Request(RuntimeError("unreachable on that worker"), 0.25),
                           lambda: _Request(lambda: 1, t0 + 0.25 - time.monotonic()))
    assert stage_publish.wait_for_publish(send, wait_s=2.0, reask_s=0.1, poll_s=0.2) == 1

    def interrupted():
        raise KeyboardInterrupt

    send, sent = _requests(lambda: _Request(None), lambda: _Request(None, down=interrupted))
    with pytest.raises(KeyboardInterrupt):
        stage_publish.wait_for_publish(send, wait_s=2.0, reask_s=0.05, poll_s=0.01)
    assert len(sent) == 2 and all(request.revoked for request in sent)


def test_a_stage_is_its_marker_not_the_path_it_is_mounted_at(stage, tmp_path, monkeypatch):
    """Open item 2 of the issue-44 review: the host publishes for a step that mounted the stage at another path (here
    a symlink), since both read one STAGE marker; a stage set up elsewhere (another marker) is refused in one line;
    a copy of the folder (its marker copied too) agrees by id, but its entries are not in the host's folder: the
    request fails in one line and nothing is published. Red when the host compares paths (publish_on_host ignoring
    the id: the symlinked step's request refused; seen red) and on the old messages of a copy ("lost staged entries
    ...: neither pending nor published", no hint at a copy; then no hint at a request older than the records kept,
    rev-pubq nit 12; seen red)."""
    def task(url, entries):
        return _on_host(stage, tmp_path, monkeypatch, task_args(url, entries))

    stage_module.set_publisher(task)
    mounted = tmp_path / "mnt"
    mounted.symlink_to(stage)
    publish_many(CONTEXT, StagedWarehouse(str(mounted)), {"compass.a": A1}, {"case_id": "c1"})
    host = Warehouse(tmp_path / "host.duckdb")
    assert len(host.read("compass.a")) == 2 and not _unpublished(stage)
    other = tmp_path / "other"
    other.mkdir()
    Stage(str(other)).create_empty()
    with pytest.raises(RuntimeError, match=rf"^this worker does not publish the stage {other} \(COMPASS_PUBLISH_FROM="
                                           rf"{stage}, another STAGE marker\): start the warehouse host's workers "
                                           r"with the stage's folder as it is mounted there$"):
        publish_many(CONTEXT, StagedWarehouse(str(other)), {"compass.a": A2}, {"case_id": "c2"})
    copy = shutil.copytree(stage, tmp_path / "copy", symlinks=True)
    with pytest.raises(StageUnavailable, match=rf"^the stage {stage} lost staged entries \S+: neither pending nor "
                                               r"published within 7 days \(staged to a copy of this folder, its STAGE "
                                               r"marker copied too\? removed by hand\? or a request delivered after "
                                               r"stage\.publishes forgot its entry\)$"):
        publish_many(CONTEXT, StagedWarehouse(str(copy)), {"compass.a": A2}, {"case_id": "c2"})
    assert sorted(host.read("compass.a")["case_id"]) == ["c1", "c1"] and len(host.read(PUBLISHES)) == 1


def test_failed_entries_and_publish_records_go_after_the_retention_horizon(stage, tmp_path, monkeypatch,
                                                                          host_publisher):
    """Open item 3 of the issue-44 review: the host's retention (after a write's export) removes a failed/ entry and
    its reason KEEP_S after it was set aside, then its staged file as any unnamed file, and stage.publishes records
    older than KEEP_S; a younger failed entry stays (set aside when its reason was written: its entry file keeps the
    staging time), a younger record stays, and so does an old record whose entry is still in publishing/ or pending/
    (a publisher killed after its commit: the record keeps the next publish from applying it again). Red without
    the failed/ rule (both failed entries stayed; seen red), without the records' rule (the old record stayed; seen
    red), when the records' rule ignores publishing/ or pending/ (that record went; seen red for each), when it
    ignores the age (rev-pubq M4: the young record went; seen red) and when a failed entry's age ignores its reason
    (rev-pubq M5: the young failed entry went; seen red)."""
    remote = StagedWarehouse(str(stage))
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    publish_many(CONTEXT, remote, {"compass.w": W}, history=False)
    old_record, kept_record = host_publisher[0][0][0], host_publisher[0][1][0]
    monkeypatch.setattr(stage_module, "_check_applies", lambda *args: None)
    for case in ("c2", "c3"):  # refused by the warehouse: set aside to failed/
        with pytest.raises(StagedWriteRejected):
            publish_many(CONTEXT, remote, {"compass.a": A1.assign(value=["x", case])}, {"case_id": case})
    old_failed, young_failed = sorted(p.name for p in (stage / "failed").glob("*.json"))
    old_file = Stage(str(stage))._read_json(f"failed/{old_failed}")["writes"][0]["path"]
    for path in (stage / "failed" / old_failed, stage / "failed" / f"{old_failed}.error", stage / old_file,
                 stage / "failed" / young_failed):
        os.utime(path, (0, 0))  # set aside long ago; the young one's entry staged long ago, set aside just now
    (stage / "publishing").mkdir(exist_ok=True)
    (stage / "publishing" / kept_record).write_text(json.dumps({"writes": []}))  # its publisher killed after commit
    (stage / "pending" / "pending.json").write_text(json.dumps({"writes": []}))  # and one before it claimed
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    with host.connect() as con:
        con.execute(f"update {PUBLISHES} set published_at = published_at - interval 8 day")  # committed long ago
        con.execute(f"insert into {PUBLISHES} values "
                    f"('pending.json', 'compass.a', null, now()::timestamp - interval 8 day), "
                    f"('young.json', 'compass.a', null, now()::timestamp - interval 6 day)")
    monkeypatch.setattr(stage_module, "_collected_at", -float("inf"))
    host.delete_rows(["compass.a"], {"case_id": "c9"})  # a write on the host: its export, then retention
    assert sorted(p.name for p in (stage / "failed").iterdir()) == [young_failed, f"{young_failed}.error"]
    assert not (stage / old_file).exists()
    assert sorted(host.read(PUBLISHES)["entry"]) == sorted([kept_record, "pending.json", "young.json"])
    assert old_record != kept_record


def test_a_committed_entry_is_never_set_aside_and_a_claim_ages_from_when_it_was_made(stage, tmp_path, monkeypatch):
    """rev-pubq finding 4: entries staged more than GC_GRACE_S ago; one is published by hand, and the retention after
    its export neither sets it aside (it is committed) nor an entry claimed a moment ago by a publisher killed before
    its commit (a claim is a rename, which keeps the staging time); an entry committed whose file such a publisher
    left in publishing/ long ago is dropped, never set aside as "not published". Red on the old code (the committed
    entry in failed/ "abandoned: its publisher died"; seen red), without touching a claimed entry (the fresh claim set
    aside; seen red) and without dropping committed entries (the leftover set aside; seen red)."""
    remote = StagedWarehouse(str(stage))
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    publish_many(CONTEXT, remote, {"compass.w": W}, history=False)
    first, second = sorted(os.listdir(stage / "pending"))
    long_ago = time.time() - 7200
    for name in (first, second):
        os.utime(stage / "pending" / name, (long_ago, long_ago))
    assert Stage(str(stage))._claim([second]) == [second]  # its publisher killed after the claim
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    monkeypatch.setattr(stage_module, "_collected_at", -float("inf"))
    host = Warehouse(tmp_path / "host.duckdb")
    assert host.publish_stage([first]) == 1
    assert host.read(PUBLISHES)["entry"].tolist() == [first] and not (stage / "failed").exists()
    assert os.listdir(stage / "publishing") == [second]
    os.utime(stage / "publishing" / second, (long_ago, long_ago))
    with host.connect() as con:  # committed by a publisher killed before it removed the entry
        con.execute(f"insert into {PUBLISHES} values (?, 'compass.w', null, now()::timestamp)", [second])
    monkeypatch.setattr(stage_module, "_collected_at", -float("inf"))
    host.delete_rows(["compass.a"], {"case_id": "c9"})  # a write on the host: its export, then retention
    assert not (stage / "failed").exists() and not os.listdir(stage / "publishing")


def test_a_stage_needs_an_exclusive_create_and_its_marker_has_an_id(stage):
    """rev-pubq finding 5 and nit 9, since the objstore branch: an fsspec URL whose filesystem cannot create a file
    exclusively (http://) is refused in one line naming it and why (an entry's fate is decided by an exclusive create);
    s3:// without s3fs says what it needs; a STAGE marker made by hand without an id is one line saying so, not a JSON
    parser's message. Red when any URL is accepted (`_without_exclusive_create` answering None: the http URL
    accepted; seen red) and on the old marker message ("unreachable: Expecting value ..."; seen red)."""
    with pytest.raises(StageUnavailable, match=r"^the stage http://example\.org/stage cannot be used: http:// cannot "
                                               r"create a file exclusively \(an entry's fate is decided by whoever "
                                               r"creates decided/<entry> first\): a stage is a folder \(local or NFS\), "
                                               r"s3:// \(s3fs >= 2025\.7\), gs:// \(gcsfs\) or az:// \(adlfs\)$"):
        Stage("http://example.org/stage")
    if importlib.util.find_spec("s3fs") is None:  # (not installed here)
        with pytest.raises(StageUnavailable, match=r"^the stage s3://bucket/stage cannot be used: s3:// needs s3fs >= "
                                                   r"2025\.7\.0 \(not installed\)$"):
            Stage("s3://bucket/stage")
    for marker in ("", "{}\n"):
        (stage / "STAGE").write_text(marker)
        with pytest.raises(StageUnavailable, match=rf"^the stage {stage} has a STAGE marker without an id \(made by "
                                                   r"hand\?\): remove it and set the stage up again "
                                                   r"\(Stage\.create_empty, on the warehouse host\)$"):
            Stage(str(stage)).identity()


def _killed_after_copy(stage: Stage, name: str) -> None:
    """The publisher's claim of `name` (decided, copied to publishing/), killed before it deleted pending/<name>."""
    assert stage._decide(name, TAKEN) == TAKEN
    stage._write_json(f"{CLAIMED}/{name}", stage._entry("pending", name))


def test_an_entry_left_in_pending_and_publishing_is_committed_once_and_never_set_aside(stage, tmp_path, monkeypatch):
    """rev-objstore finding 2: a publisher killed between copying an entry to publishing/ and deleting it from
    pending/; a publish by hand (`publish_stage()`, every entry) commits it once (one stage.publishes row, one history
    row) and drops both copies; retention drops the pending copy of such an entry, however old, never sets it aside
    (its claim is young). Red on the objstore merge (the entry committed twice in one transaction: 2 rows in
    stage.publishes; seen red), without the dedupe alone (seen red), without `_claim` dropping the pending copy (left
    in pending/; seen red) and when retention's pending/ pass ignores publishing/ (set aside "its publisher died":
    then never published; seen red)."""
    remote = StagedWarehouse(str(stage))
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    (first,) = os.listdir(stage / "pending")
    staged = Stage(str(stage))
    _killed_after_copy(staged, first)
    monkeypatch.setattr(stage_module, "_collected_at", float("inf"))  # no retention after this publish's export
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    assert host.publish_stage() == 1
    assert host.read(PUBLISHES)["entry"].tolist() == [first] and len(host.read("history.compass_a")) == 2
    assert not os.listdir(stage / "pending") and not os.listdir(stage / CLAIMED)
    monkeypatch.delenv("COMPASS_PUBLISH_FROM")
    publish_many(CONTEXT, remote, {"compass.w": W}, history=False)
    (second,) = os.listdir(stage / "pending")
    _killed_after_copy(staged, second)
    long_ago = time.time() - 7200  # staged long ago, claimed a moment ago
    os.utime(stage / "pending" / second, (long_ago, long_ago))
    staged.collect_garbage()
    assert not (stage / "failed").exists() and not os.listdir(stage / "pending") and staged._fate(second) == TAKEN
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    assert host.publish_stage([second]) == 1 and len(host.read("compass.w")) == 2


def test_a_claim_set_aside_is_not_taken_again_and_a_decided_set_aside_answers_set_aside(stage, tmp_path,
                                                                                         monkeypatch):
    """rev-objstore finding 6 (the review's tests, adapted): the publisher set aside a refused entry (its decision
    replaced by "set aside", failed/ written) and was killed before dropping publishing/<e>: the next publish does not
    commit it; a step killed right after deciding its entry's set-aside (still in pending/, retention run since): a
    request for it fails as set aside, not lost. Red under the review's mutations M1 (`_claim` taking an entry in
    publishing/ whatever its decision: compass.w committed; seen red), M2 (retention dropping a decision whose entry
    is still pending: the set-aside entry was then published; seen red) and M3 (`publish_pending` telling set aside
    from lost by failed/ alone: "lost"; seen red)."""
    remote = StagedWarehouse(str(stage))
    publish_many(CONTEXT, remote, {"compass.w": W}, history=False)
    (refused,) = os.listdir(stage / "pending")
    staged = Stage(str(stage))
    assert staged._claim([refused]) == [refused]
    staged._put(f"{DECIDED}/{refused}", stage_module._decision(SET_ASIDE))
    staged._write_json(f"failed/{refused}", staged._entry(CLAIMED, refused))  # killed: still in publishing/
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    host = Warehouse(tmp_path / "host.duckdb")
    assert host.publish_stage() == 0 and not host.table_exists("compass.w")
    monkeypatch.delenv("COMPASS_PUBLISH_FROM")
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    (abandoned,) = os.listdir(stage / "pending")
    assert staged._decide(abandoned, SET_ASIDE) == SET_ASIDE  # and its step killed
    staged.collect_garbage(keep_s=0)  # its decision kept: its entry is still in pending/
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    with pytest.raises(RuntimeError, match=rf"^staged entries {abandoned} of the stage .* were set aside"):
        host.publish_stage([abandoned])
    assert not host.table_exists("compass.a")


def test_retention_stats_only_the_decisions_named_before_the_horizon(stage, monkeypatch):
    """rev-objstore finding 4: a decided/ marker is named by its entry's staging time (time_ns first), so retention
    reads no time of one named after now - keep_s (a HEAD each on S3: 20,000 a run); one named and written before is
    removed. Red when every marker is stat'ed (61 `modified` calls for decided/; seen red)."""
    staged, now = Stage(str(stage)), time.time_ns()
    (stage / DECIDED).mkdir(exist_ok=True)
    for n in range(60):
        (stage / DECIDED / f"{now - n:020d}-1-young.json").write_bytes(stage_module._decision(TAKEN))
    old = stage / DECIDED / f"{now - 7200 * 10**9:020d}-1-old.json"
    old.write_bytes(stage_module._decision(TAKEN))
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    seen, real = [], staged.fs.modified
    monkeypatch.setattr(staged.fs, "modified", lambda path: (seen.append(path), real(path))[1])
    staged.collect_garbage(keep_s=3600)
    assert [p for p in seen if f"/{DECIDED}/" in p] == [str(old)]
    assert not old.exists() and len(os.listdir(stage / DECIDED)) == 60


def test_a_folder_without_hard_links_or_a_failed_write_is_one_line_naming_the_stage(stage, tmp_path, monkeypatch):
    """rev-objstore finding 5: a stage set up before the exclusive-create probe, on a share where a hard link is not
    permitted: the publish is one line naming the stage and the file it could not create exclusively (the entry stays
    pending); a staged write that cannot be written is one line too. Red on the objstore merge (a raw PermissionError
    from os.link, and from the write; seen red)."""
    remote = StagedWarehouse(str(stage))
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    (name,) = os.listdir(stage / "pending")

    def denied(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", denied)
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", str(stage))
    with pytest.raises(StageUnavailable, match=rf"^the stage {stage} cannot create {DECIDED}/{name} exclusively: "
                                               r"\[Errno 1\] Operation not permitted$"):
        Warehouse(tmp_path / "host.duckdb").publish_stage()
    assert os.listdir(stage / "pending") == [name] and not os.listdir(stage / DECIDED)
    monkeypatch.delenv("COMPASS_PUBLISH_FROM")
    monkeypatch.setattr(Stage, "_write_local", denied)
    with pytest.raises(StageUnavailable, match=rf"^the stage {stage} cannot write pending/\d+-\d+-\w+\.json: "
                                               r"\[Errno 1\] Operation not permitted$"):
        remote.delete_rows(["compass.a"], {"case_id": "c1"})
