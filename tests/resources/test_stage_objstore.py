"""A stage on an object store (resources.stage, issue 44 item 2): fsspec's memory:// in one process, and a folder
that moves by copy and delete (tests/resources/objstore_fs.py) for a race between processes. An entry's fate is
decided by an exclusive create of decided/<entry>, not by a rename, so exactly one of the publisher's claim and a
step's set-aside wins there too."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import subprocess
import sys
import time
import uuid

import duckdb
import fsspec
import fsspec.implementations.memory
import pandas as pd
import pytest

from pipelines.stage_publish import publish_on_host
from resources import stage as stage_module
from resources.publish import publish_many
from resources.stage import DECIDED, PUBLISHES, SET_ASIDE, TAKEN, Stage, StagedWarehouse, StageUnavailable
from resources.warehouse import Warehouse
from tests.paths import ROOT
from tests.resources import objstore_fs
from tests.resources.test_stage import A1, CONTEXT, TABLES, W, _publish_all, _table


@pytest.fixture
def memory_stage(tmp_path, monkeypatch):
    """A stage set up at a memory:// URL of its own (its warehouse host's warehouse empty); removed after."""
    url = f"memory://compass-{uuid.uuid4().hex[:8]}/stage"
    Stage(url).create_empty()
    monkeypatch.setattr(stage_module, "_publisher", stage_module.NO_PUBLISH)  # entries pending until publish_stage
    monkeypatch.delenv("COMPASS_PUBLISH_FROM", raising=False)
    monkeypatch.delenv("COMPASS_STAGE", raising=False)
    monkeypatch.setenv("COMPASS_DB", str(tmp_path / "host.duckdb"))
    yield url
    fs, root = fsspec.core.url_to_fs(url)
    fs.rm(root.rsplit("/", 1)[0], recursive=True)


def _listed(url: str, folder: str) -> list[str]:
    stage = Stage(url)
    return sorted(os.path.basename(p) for p in stage.fs.find(stage._full(folder)))


def test_a_memory_stage_publishes_what_a_direct_publish_writes(memory_stage, tmp_path, monkeypatch):
    """Staged on memory:// (Parquet uploaded whole, read by DuckDB through the fsspec filesystem) and committed by the
    host: the same data versions, rows, column types and history as a direct publish, and stage mode reads the host's
    export. Red when DuckDB is not given the filesystem (`Stage.attach` a no-op: "No files found that match the
    pattern memory:///..."; seen red)."""
    direct = Warehouse(tmp_path / "direct.duckdb")
    expected = _publish_all(direct)
    remote = StagedWarehouse(memory_stage)
    assert _publish_all(remote) == expected
    assert {p.name for p in tmp_path.rglob("*.duckdb")} == {"direct.duckdb"}
    for table in ("compass.a", "compass.w"):  # the pending writes over the (empty) snapshot
        pd.testing.assert_frame_equal(remote.query(f"select * exclude (refreshed_at) from {table}"),
                                      _table(direct, table)[0])
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", memory_stage)
    host = Warehouse(tmp_path / "host.duckdb")
    assert host.publish_stage() == 3
    for table in TABLES:
        for mine, theirs in zip(_table(host, table), _table(direct, table), strict=True):
            pd.testing.assert_frame_equal(mine, theirs)
    assert not _listed(memory_stage, "pending") and not _listed(memory_stage, "publishing")
    assert {Stage(memory_stage)._fate(name) for name in _listed(memory_stage, DECIDED)} == {TAKEN}
    monkeypatch.delenv("COMPASS_PUBLISH_FROM")
    pd.testing.assert_frame_equal(StagedWarehouse(memory_stage).query("select * exclude (refreshed_at) from compass.w"),
                                  _table(direct, "compass.w")[0])


def test_on_memory_a_claim_and_a_set_aside_cannot_both_win(memory_stage, tmp_path, monkeypatch):
    """The publisher killed after claiming one entry; the step of that entry, which read it before the claim, gives
    up: its set-aside loses (FileNotFoundError) and the next publish commits the entry; the other entry's step gives
    up first: the publisher's claim loses, and a request for it fails as set aside. Red with the exclusive create
    replaced by a plain write and the setup's probe removed (the set-aside of the claimed entry succeeded too; seen
    red)."""
    remote = StagedWarehouse(memory_stage)
    publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": "c1"})
    publish_many(CONTEXT, remote, {"compass.w": W}, history=False)
    first, second = _listed(memory_stage, "pending")
    stage = Stage(memory_stage)
    held = stage._entry("pending", second)
    assert stage._claim([second]) == [second]  # and its publisher killed
    with pytest.raises(FileNotFoundError, match="claimed by the publisher first"):
        stage._set_aside(second, held, "its publish failed: gave up")
    stage._set_aside(first, stage._entry("pending", first), "its publish failed: gave up")
    assert stage._claim([first]) == [] and stage._fate(first) == SET_ASIDE and stage._fate(second) == TAKEN
    monkeypatch.setenv("COMPASS_PUBLISH_FROM", memory_stage)
    assert publish_on_host(memory_stage, [second]) == 1
    with pytest.raises(RuntimeError, match=rf"^staged entries {first} of the stage .* were set aside"):
        publish_on_host(memory_stage, [first])
    host = Warehouse(tmp_path / "host.duckdb")
    assert len(host.read("compass.w")) == 2 and not host.table_exists("compass.a")
    assert host.read(PUBLISHES)["entry"].tolist() == [second]
    assert _listed(memory_stage, "failed") == [first, f"{first}.error"] and not _listed(memory_stage, "publishing")


def test_memory_retention_sets_aside_abandoned_entries_and_drops_old_decisions(memory_stage, tmp_path, monkeypatch):
    """Retention by the files' times on memory:// (no utime there): an entry abandoned in pending/, one claimed by a
    publisher that died (left in publishing/, or decided and still in pending/) go to failed/ with their reasons;
    a decided/ marker stays while its entry is in a folder or younger than keep_s, then goes; a claim's age counts
    from the claim. Red when decided/ markers are kept for ever (seen red) and when retention ignores the claim of an
    entry left in pending/ (its set-aside lost to the claim: the entry stayed in pending/ for good; seen red)."""
    remote = StagedWarehouse(memory_stage)
    for case in ("c1", "c2", "c3"):
        publish_many(CONTEXT, remote, {"compass.a": A1}, {"case_id": case})
    abandoned, claimed, decided = _listed(memory_stage, "pending")
    stage = Stage(memory_stage)
    for name in (abandoned, claimed, decided):
        _age(stage, f"pending/{name}", 7200)
    assert stage._claim([claimed]) == [claimed] and stage._decide(decided, TAKEN) == TAKEN
    assert stage.collect_garbage() == [] and _listed(memory_stage, "publishing") == [claimed]
    _age(stage, f"publishing/{claimed}", 7200)  # now the claim is older than the grace period too
    stage.collect_garbage()
    assert not _listed(memory_stage, "pending") and not _listed(memory_stage, "publishing")
    reasons = {name: stage.fs.cat_file(stage._full(f"failed/{name}.error")).decode()
               for name in (abandoned, claimed, decided)}
    assert "abandoned: no publish asked for within 3600 s" in reasons[abandoned]
    assert "its publisher died and none came" in reasons[claimed] and "its publisher died" in reasons[decided]
    assert _listed(memory_stage, DECIDED) == sorted([abandoned, claimed, decided])
    stage.collect_garbage(keep_s=3600)
    assert len(_listed(memory_stage, DECIDED)) == 3  # young: kept
    time.sleep(0.05)
    removed = stage.collect_garbage(grace_s=0.0, keep_s=0.01)
    assert not _listed(memory_stage, "failed") and not _listed(memory_stage, DECIDED)
    assert len(removed) == 3 and all(path.startswith("tables/compass.a/") for path in removed)


def _age(stage: Stage, relative: str, seconds: float) -> None:
    """Make a memory:// file `seconds` older (memory:// has no utime)."""
    stage.fs.store[stage._full(relative)].modified -= datetime.timedelta(seconds=seconds)


def test_a_store_that_ignores_exclusive_creates_and_a_protocol_without_one_are_refused(tmp_path):
    """A stage on a store whose exclusive create is a plain write (a bucket without conditional writes) is refused at
    setup in one line, before anything is written; a protocol with no exclusive create at all is refused when named.
    Red without the setup's probe (the stage was set up; seen red); the probe alone also turned every test above red
    with the exclusive create replaced by a plain write (seen)."""

    class NoConditionalWrites(fsspec.implementations.memory.MemoryFileSystem):
        protocol = ("nocond",)

        def _open(self, path, mode="rb", **kwargs):
            return super()._open(path, mode.replace("x", "w"), **kwargs)

    fsspec.register_implementation("nocond", NoConditionalWrites, clobber=True)
    url = f"nocond://compass-{uuid.uuid4().hex[:8]}/stage"
    with pytest.raises(StageUnavailable, match=rf"^the stage {url} cannot be used: an exclusive create of "
                                               r"decided/\.probe-\w+ succeeded twice \(a store without conditional "
                                               r"writes cannot decide an entry's fate\)$"):
        Stage(url).create_empty()
    assert not Stage(url).fs.exists(Stage(url)._full("STAGE"))
    with pytest.raises(StageUnavailable, match=r"^the stage ftp://host/stage cannot be used: ftp:// cannot create a "
                                               r"file exclusively"):
        Stage("ftp://host/stage")


# The step's side of the race, in a process of its own, on the stage argv[1], for the entries argv[3:]: it reads its
# entries, says it is ready (a file in the folder argv[2]), and once the publisher is too sets each aside
# (`_set_aside`, as `request_publish` does when the step gives up); prints the entries it won.
STEP = """
import json, os, sys, time
from tests.resources import objstore_fs
from resources.stage import Stage
url, ready, names = sys.argv[1], sys.argv[2], sys.argv[3:]
stage = Stage(url)
held = {name: stage._entry("pending", name) for name in names}
open(os.path.join(ready, "step"), "w").close()
while not os.path.exists(os.path.join(ready, "publisher")):
    time.sleep(0.001)
won = []
for name in names:
    try:
        stage._set_aside(name, held[name], "its publish failed: gave up")
        won.append(name)
    except FileNotFoundError:
        pass
print(json.dumps(won))
"""


def test_across_processes_on_a_store_that_moves_by_copy_each_entry_is_claimed_or_set_aside(tmp_path):
    """The publisher (claiming every entry) and a step (setting each aside) race in two processes on a folder whose
    move is a copy and a delete, as an object store's (tests/resources/objstore_fs.py: no rename, no link): each entry
    is won by exactly one of them, and the folders and decided/ agree with the winner (about half each, seen 6/6,
    8/4, 11/1). Red with the old claim by move (`_claim`/`_set_aside` through `fs.mv`: both won all 12 entries, twice;
    seen red) and with the exclusive create replaced by a plain write and the setup's probe removed (both won 6 and
    12 entries; seen red)."""
    folder = tmp_path / "stage"
    folder.mkdir()
    url = f"{objstore_fs.PROTOCOL}://{folder}"
    stage = Stage(url)
    stage.create_empty()
    names = [f"{n:04d}.json" for n in range(12)]
    for name in names:
        stage._write_json(f"pending/{name}", {"writes": [{"kind": "delete", "table": "compass.a", "where": {}}]})
    ready = tmp_path / "ready"
    ready.mkdir()
    step = subprocess.Popen([sys.executable, "-c", STEP, url, str(ready), *names], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    while not (ready / "step").exists() and step.poll() is None:
        time.sleep(0.001)
    (ready / "publisher").touch()
    claimed = set(stage._claim(names))  # the publisher, in this process
    out, err = step.communicate(timeout=120)
    assert step.returncode == 0, err[-2000:]
    aside = set(json.loads(out))
    assert not claimed & aside, f"both won {sorted(claimed & aside)}"
    assert claimed | aside == set(names)
    assert {p.name for p in folder.glob("publishing/*")} == claimed and not os.listdir(folder / "pending")
    assert {p.name for p in folder.glob("failed/*.json")} == aside
    assert {name: stage._fate(name) for name in names} == {
        name: TAKEN if name in claimed else SET_ASIDE for name in names}


def test_a_staged_file_reused_on_memory_is_written_again_so_it_is_young(memory_stage):
    """A content-addressed file staged again where the filesystem cannot touch a file (memory://, an object store):
    it is written again, so retention counts its age from the reuse. Red when a reuse on such a store is skipped
    (`write_parquet` returning on NotImplementedError: the old time kept; seen red)."""
    stage, rows = Stage(memory_stage), "tables/compass.x/v1/s.parquet"
    with contextlib.closing(duckdb.connect()) as con:
        stage.write_parquet(con, "(select 1 as x)", rows)
        _age(stage, rows, 7200)  # staged long ago, its entry published: garbage
        stage.write_parquet(con, "(select 1 as x)", rows)
    assert stage._modified(rows) > time.time() - 600 and stage.collect_garbage() == []


def test_a_young_staged_file_on_a_store_is_reused_without_a_rewrite(memory_stage):
    """rev-objfix finding 2: a reused file written less than GC_GRACE_S / 2 ago is not uploaded again (a reader of it
    could see it change under it; retention keeps it for at least that long again), an older one is. Red when every
    reuse is written again (the file's object replaced)."""
    stage, rows = Stage(memory_stage), "tables/compass.x/v1/s.parquet"
    with contextlib.closing(duckdb.connect()) as con:
        stage.write_parquet(con, "(select 1 as x)", rows)
        first = stage.fs.store[stage._full(rows)]
        _age(stage, rows, stage_module.GC_GRACE_S / 2 - 60)
        stage.write_parquet(con, "(select 1 as x)", rows)
        assert stage.fs.store[stage._full(rows)] is first
        _age(stage, rows, 120)
        stage.write_parquet(con, "(select 1 as x)", rows)
    assert stage.fs.store[stage._full(rows)] is not first


def test_retention_keeps_a_file_reused_after_its_age_was_read(memory_stage, monkeypatch):
    """rev-objfix finding 3: retention lists ages, then removes; a step that reuses a file in between (a fresh PUT, a
    touch) must not lose it. The reuse is simulated right after retention first read the file's age. Red when the age
    is not read again before the removal (the file removed)."""
    stage, rows = Stage(memory_stage), "tables/compass.x/v1/s.parquet"
    with contextlib.closing(duckdb.connect()) as con:
        stage.write_parquet(con, "(select 1 as x)", rows)
    _age(stage, rows, 7200)
    modified, reads = stage._modified, []

    def reused_after_first_read(relative, missing=None):
        seen = modified(relative, missing)
        if relative == rows and not reads:
            reads.append(seen)
            stage.fs.store[stage._full(rows)].modified = datetime.datetime.now(tz=datetime.timezone.utc)
        return seen

    monkeypatch.setattr(stage, "_modified", reused_after_first_read)
    assert stage.collect_garbage() == [] and stage.fs.exists(stage._full(rows))


@pytest.mark.parametrize("kind", ["folder", "memory"])
def test_a_reused_staged_file_that_vanishes_at_its_check_is_written_whole(kind, tmp_path, monkeypatch):
    """rev-objstore finding 1: a content-addressed file staged again just as retention removes it (its old copy was
    garbage): it is written again, whole, never touched into an empty file DuckDB cannot read; in a folder (the
    touch's `os.utime` fails) and on memory:// (always written). Red on the objstore merge (`fs.exists` then
    `fs.touch(truncate=False)`: a 0-byte file in both; seen red)."""
    url = str(tmp_path) if kind == "folder" else f"memory://compass-{uuid.uuid4().hex[:8]}/stage"
    stage, rows = Stage(url), "tables/compass.x/v1/s.parquet"
    stage.create_empty()
    path, exists, utime = stage._full(rows), stage.fs.exists, os.utime

    removed = []

    def then_removed(check, before: bool):  # retention removes the file right after (or as) it is checked, once
        def checked(target, *args, **kwargs):
            found = None if before else check(target, *args, **kwargs)
            if target == path and not removed:
                removed.append(path)
                stage.fs.rm(path)
            return check(target, *args, **kwargs) if before else found
        return checked

    with contextlib.closing(duckdb.connect()) as con:
        stage.write_parquet(con, "(select 1 as x)", rows)
        monkeypatch.setattr(stage.fs, "exists", then_removed(exists, before=False))
        monkeypatch.setattr(os, "utime", then_removed(utime, before=True))
        stage.write_parquet(con, "(select 1 as x)", rows)
        monkeypatch.undo()
        assert removed == ([path] if kind == "folder" else [])  # (a store writes it again without a check)
        stage.attach(con)
        assert stage.fs.size(path) > 0
        assert con.execute(f"select * from {stage.rows({'path': rows})}").fetchall() == [(1,)]
    if kind == "memory":
        stage.fs.rm(stage.root.rsplit("/", 1)[0], recursive=True)


def _entries(tmp_path, count: int) -> tuple[Stage, list[str]]:
    """A stage on a folder that behaves as an object store, with `count` pending entries."""
    folder = tmp_path / "stage"
    folder.mkdir()
    stage = Stage(f"{objstore_fs.PROTOCOL}://{folder}")
    stage.create_empty()
    names = [f"{n:04d}.json" for n in range(count)]
    for name in names:
        stage._write_json(f"pending/{name}", {"writes": [{"kind": "delete", "table": "compass.a", "where": {}}]})
    return stage, names


def test_a_lost_create_or_a_lost_response_is_settled_by_reading_the_decision_back(tmp_path, monkeypatch):
    """rev-objstore finding 3: on S3 a losing exclusive create may be a 409 or a 412 that s3fs raises as a plain
    OSError, not FileExistsError, and a create that succeeded may raise (its response lost): the decider reads
    decided/<e> back, its own token is a win and another's a loss; a create that keeps failing and leaves nothing is
    one line naming the stage after CREATE_TRIES tries, and so is a marker that exists at each create and is gone at
    each read. Red on the objstore merge (the OSError escaped `_decide` in all three; seen red; its unbounded
    recursion: RecursionError)."""
    stage, (lost, won, failing) = _entries(tmp_path, 3)
    pauses = []
    monkeypatch.setattr(stage_module.time, "sleep", pauses.append)
    monkeypatch.setattr(objstore_fs, "FAULT", "conflict-as-oserror")
    assert stage._decide(lost, TAKEN) == TAKEN and stage._decide(lost, SET_ASIDE) == TAKEN
    monkeypatch.setattr(objstore_fs, "FAULT", "lost-response")
    assert stage._decide(won, SET_ASIDE) == SET_ASIDE and stage._fate(won) == SET_ASIDE
    monkeypatch.setattr(objstore_fs, "FAULT", "fails")
    with pytest.raises(StageUnavailable, match=rf"^the stage {stage.url} cannot create {DECIDED}/{failing} "
                                               r"exclusively: \[Errno 5\] Service Unavailable"):
        stage._claim([failing])
    monkeypatch.setattr(objstore_fs, "FAULT", None)
    assert pauses[:2] == [0.05, 0.05] and pauses[-3:] == [0.05, 0.1, 0.2]  # a pause before each read-back (409)
    assert stage._claim([lost, won, failing]) == [lost, failing] and stage._decide(won, TAKEN) == SET_ASIDE
    monkeypatch.setattr(stage, "_create_exclusive", lambda *args, **kwargs: False)  # there, yet gone when read
    monkeypatch.setattr(stage, "_fate", lambda name: None)
    with pytest.raises(StageUnavailable, match=rf"^the stage {stage.url} cannot decide {DECIDED}/{won}: it exists and "
                                               r"vanishes, 3 times$"):
        stage._decide(won, TAKEN)
