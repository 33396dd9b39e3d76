"""Dagster's local SQLite storage on kept connections: the run and event-log storages named in dagster.yaml.

Dagster's SqliteRunStorage and SqliteEventLogStorage open a new SQLite
connection for every read and every event and close it after (a NullPool): on a
busy disk one open-commit-close costs ~15 ms, and a price-only refresh stores a few
hundred events in a few thousand transactions (issue 17: a quarter of its time).
These subclasses keep one engine per database file, its connections pooled, and
commit with `synchronous=NORMAL`: in WAL mode the database stays consistent on
any crash and a killed process loses nothing; a power cut may lose the last
commits, so a run can look unfinished, and `pipelines.refresh.fail_orphaned_runs`
marks it failed and the refresh re-runs its assets (as after a SIGKILL). Same files, same schema and the same
places as Dagster's default (history/runs.db, history/runs/*.db under the
instance's home, taken from the instance itself): a home opens with either.
Dagster is pinned (==1.13.27 in pyproject.toml): these subclass private classes,
checked by tests/pipelines/test_instance_storage.py.
"""

from __future__ import annotations

import os
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import sqlalchemy as sa
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import _event_logs_directory, _runs_directory

# Per-run event-log shards whose engines a process keeps (the most recently used ones).
KEPT_SHARDS = 8


def _engine(conn_string: str) -> sa.Engine:
    engine = sa.create_engine(conn_string, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
                              pool_size=1, max_overflow=4)

    @sa.event.listens_for(engine, "connect")
    def _normal_sync(dbapi_connection, _record) -> None:
        dbapi_connection.execute("pragma synchronous=normal")

    return engine


class _Engines:
    """One engine per database file, for this process only (a forked child opens its own), at most `limit`."""

    def __init__(self, limit: int | None = None):
        self.limit, self.pid, self.engines = limit, os.getpid(), OrderedDict()
        _LIVE.add(self)

    def get(self, conn_string: str) -> sa.Engine:
        if self.pid != os.getpid():  # pooled SQLite connections must not cross a fork
            self.pid, self.engines = os.getpid(), OrderedDict()
        if conn_string not in self.engines:
            self.engines[conn_string] = _engine(conn_string)
            if self.limit is not None and len(self.engines) > self.limit:
                self.engines.popitem(last=False)[1].dispose()
        self.engines.move_to_end(conn_string)
        return self.engines[conn_string]

    def dispose(self) -> None:
        for engine in self.engines.values():
            engine.dispose()
        self.engines.clear()


_LIVE: weakref.WeakSet[_Engines] = weakref.WeakSet()


def _close_before_fork() -> None:
    """Close this process's kept SQLite connections before any fork (`compass run --jobs N`'s workers): a child
    inherits SQLite's in-process record of the locks its parent holds on an open file, takes them as its own without
    asking the kernel, and reads pages while the parent commits ("file is not a database" in a parallel cold run;
    sqlite.org/howtocorrupt.html section 2.6). The engines reconnect on next use."""
    for engines in list(_LIVE):
        if engines.pid == os.getpid():
            engines.dispose()


os.register_at_fork(before=_close_before_fork)


class _InstanceHome:
    """No configuration: the storage opens in the home of the instance that registers it."""

    @classmethod
    def config_type(cls) -> dict:
        return {}

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(inst_data)


class LocalRunStorage(_InstanceHome, SqliteRunStorage):
    """SqliteRunStorage on kept connections, in the registering instance's history/runs.db."""

    def __init__(self, inst_data=None):  # the database opens when the instance registers (its home)
        self._inst_data, self._engines = inst_data, _Engines()
        super(SqliteRunStorage, self).__init__()

    def register_instance(self, instance: dg.DagsterInstance) -> None:
        # Dagster's own set-up of the file (creation, migrations); this object keeps only its address.
        self._conn_string = SqliteRunStorage.from_local(_runs_directory(instance.root_directory))._conn_string
        super().register_instance(instance)

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:
        with self._engines.get(self._conn_string).connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        self._engines.dispose()
        super().dispose()


class LocalEventLogStorage(_InstanceHome, SqliteEventLogStorage):
    """SqliteEventLogStorage on kept connections, in the registering instance's history/runs/."""

    def __init__(self, inst_data=None):  # the shards open when the instance registers (its home)
        self._pending_inst_data, self._engines = inst_data, _Engines(KEPT_SHARDS)
        self._tables_present: set[str] = set()

    def register_instance(self, instance: dg.DagsterInstance) -> None:
        super().__init__(_event_logs_directory(instance.root_directory), self._pending_inst_data)
        super().register_instance(instance)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sa.Connection]:
        with self._db_lock:
            engine = self._engines.get(self.conn_string_for_shard(shard))
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def has_table(self, table_name: str) -> bool:
        """Dagster asks before every dynamic-partition lookup whether the partitions table exists (hundreds of times
        per tick), each time on a new connection; a table of the index never goes away, so a yes is remembered."""
        if table_name not in self._tables_present:
            engine = self._engines.get(self.conn_string_for_shard(INDEX_SHARD_NAME))
            with engine.connect() as conn:
                if engine.dialect.has_table(conn, table_name):
                    self._tables_present.add(table_name)
        return table_name in self._tables_present

    def dispose(self) -> None:
        self._engines.dispose()
        super().dispose()
