"""Dagster's local SQLite storage with kept connections (the run and event-log storages of dagster.yaml).

Dagster's SqliteRunStorage and SqliteEventLogStorage open a new SQLite
connection for every read and every event and close it after (a NullPool): on a
busy disk each open-commit-close costs ~15 ms, closing the last connection of a
WAL database checkpoints it, and a refresh stores a few hundred events in a few
thousand transactions. These subclasses keep one engine per database file (its
connections pooled) and commit with `synchronous=NORMAL`, which in WAL mode
keeps the database consistent on a crash and loses at most the last commits on a
power cut (a killed process loses nothing): the run looks unfinished, and
`pipelines.refresh.fail_orphaned_runs` re-runs it.
Same files, same schema: a home written by either storage opens with the other.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sqlite_storage import _event_logs_directory, _runs_directory

# Per-run event-log shards whose engines a process keeps open (the most recently used).
KEPT_SHARDS = 8


def _engine(conn_string: str) -> sa.Engine:
    engine = sa.create_engine(conn_string, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
                              pool_size=1, max_overflow=4)

    @sa.event.listens_for(engine, "connect")
    def _normal_sync(dbapi_connection, _record) -> None:
        dbapi_connection.execute("pragma synchronous=normal")

    return engine


class _Engines:
    """One engine per database file, for this process only (a forked child starts its own)."""

    def __init__(self, limit: int | None = None):
        self.limit, self.pid, self.engines = limit, os.getpid(), OrderedDict()

    def get(self, conn_string: str) -> sa.Engine:
        if self.pid != os.getpid():  # never share pooled SQLite connections across a fork
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


class LocalRunStorage(SqliteRunStorage):
    """SqliteRunStorage on kept connections; `base_dir` is the instance's home (runs.db under history/)."""

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls.from_local(_runs_directory(config_value["base_dir"]), inst_data=inst_data)

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:
        if not hasattr(self, "_engines"):
            self._engines = _Engines()
        with self._engines.get(self._conn_string).connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        if hasattr(self, "_engines"):
            self._engines.dispose()
        super().dispose()


class LocalEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage on kept connections; `base_dir` is the instance's home (shards under history/runs/)."""

    def __init__(self, base_dir: str, inst_data=None):
        self._engines = _Engines(KEPT_SHARDS)
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(_event_logs_directory(config_value["base_dir"]), inst_data=inst_data)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sa.Connection]:
        with self._db_lock:
            engine = self._engines.get(self.conn_string_for_shard(shard))
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def dispose(self) -> None:
        self._engines.dispose()
        super().dispose()
