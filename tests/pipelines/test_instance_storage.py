"""The local Dagster storage of dagster.yaml (pipelines/instance_storage.py): kept SQLite connections, Dagster's
own files and places, readable by Dagster's default storage and back."""

import shutil
import sqlite3

import dagster as dg
import pytest

from resources.settings import ROOT


@dg.asset
def tiny() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"n": 1})


def _home(tmp_path, yaml: str | None):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if yaml is None:
        (home / "dagster.yaml").unlink(missing_ok=True)
    else:
        shutil.copy(ROOT / yaml, home / "dagster.yaml")
    return home


def _materialize(home, times: int) -> None:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for _ in range(times):
            assert dg.materialize([tiny], instance=instance).success


def test_a_run_reuses_its_sqlite_connections(tmp_path, monkeypatch):
    """Dagster's default opens a connection per read and per event; the local storage keeps them (17 here: a
    few per database, one set-up connection per new run shard)."""
    home = _home(tmp_path, "dagster.yaml")
    _materialize(home, 1)  # databases created
    opened = []
    real = sqlite3.dbapi2.connect  # what SQLAlchemy's pysqlite dialect calls
    monkeypatch.setattr(sqlite3.dbapi2, "connect", lambda *a, **k: opened.append(a[0]) or real(*a, **k))
    _materialize(home, 3)
    assert len(opened) < 30, opened  # Dagster's default: 124 (58 of runs.db, 16 of each run's shard)


def test_commits_use_normal_sync_in_wal_mode(tmp_path):
    home = _home(tmp_path, "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        with instance.run_storage.connect() as conn:
            assert conn.exec_driver_sql("pragma synchronous").scalar() == 1  # NORMAL
            assert conn.exec_driver_sql("pragma journal_mode").scalar() == "wal"


@pytest.mark.parametrize("first, second", [("dagster.yaml", None), (None, "dagster.yaml")])
def test_a_home_opens_with_either_storage(tmp_path, first, second):
    """Same files in the same places: runs and materializations written by one storage are read by the other."""
    home = _home(tmp_path, first)
    _materialize(home, 2)
    assert (home / "history" / "runs.db").exists() and (home / "history" / "runs" / "index.db").exists()
    home = _home(tmp_path, second)
    _materialize(home, 1)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_runs_count() == 3
        records = instance.fetch_materializations(dg.AssetKey("tiny"), limit=10).records
        assert len(records) == 3
        assert type(instance.run_storage).__name__ == ("LocalRunStorage" if second else "SqliteRunStorage")


def _open_sqlite_files() -> list[str]:
    import os

    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
        except FileNotFoundError:  # the listing's own descriptor
            continue
    return [name for name in names if name.endswith((".db", ".db-wal", ".db-shm"))]


def test_a_forked_child_inherits_no_open_sqlite_database(tmp_path):
    """`compass run --jobs N` forks its workers from the refresh, whose instance keeps SQLite connections: a child
    that inherits an open database takes its parent's locks for its own, and a parallel cold run failed with "file
    is not a database". Red without the fork hook in pipelines/instance_storage.py (the child sees runs.db open)."""
    import os

    home = _home(tmp_path, "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert dg.materialize([tiny], instance=instance).success
        assert _open_sqlite_files()  # connections to runs.db and the shards kept
        pid = os.fork()
        if pid == 0:  # the child: how many SQLite files does it have open?
            os._exit(min(len(_open_sqlite_files()), 100))
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the forked child inherited open SQLite files"
        assert dg.materialize([tiny], instance=instance).success  # the parent reconnects


def test_partition_lookups_ask_sqlite_for_the_partitions_table_once(tmp_path, monkeypatch):
    """Dagster checks that the dynamic-partitions table exists before every lookup (hundreds per automation tick),
    each time on a new connection; the local storage asks once. Red without `LocalEventLogStorage.has_table`."""
    from sqlalchemy.dialects.sqlite.base import SQLiteDialect

    home = _home(tmp_path, "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("p", ["a", "b"])
        asked = []
        real = SQLiteDialect.has_table
        monkeypatch.setattr(SQLiteDialect, "has_table",
                            lambda self, conn, name, *a, **k: asked.append(name) or real(self, conn, name, *a, **k))
        for _ in range(20):
            assert instance.get_dynamic_partitions("p") == ["a", "b"]
        assert asked.count("dynamic_partitions") <= 1, asked
