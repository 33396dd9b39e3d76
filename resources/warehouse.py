"""The DuckDB warehouse: the system of record.

DuckDB allows one read-write process at a time. Every connection here is taken
under an exclusive advisory file lock (`<db>.lock`), so steps running in
parallel processes (multiprocess executor, sensors, the CLI) queue for the
database instead of failing on DuckDB's own lock. Each write replaces exactly
the writer's own rows inside one transaction: a failure rolls back, so a
table is never half-written.

Outside readers (notebooks, the DuckDB CLI) open the read replica instead,
`<name>.read.duckdb` next to the file: a copy made after each completed refresh
and swapped in with an atomic rename, so `duckdb.connect(replica, read_only=True)`
never meets a writer's lock and always shows the last completed refresh (a home's first refresh creates it
empty as it starts: `ensure_replica`).

With COMPASS_PUBLISH_FROM set (the deploy profile's warehouse host, issue 44 item 2), `publish_stage` on the warehouse
file COMPASS_DB names (no other file) commits what a step without the warehouse file staged there, when that step asks
(each staged transaction once, before the step reports it: resources.stage); every write exports the tables it changed
to the stage, and a table whose export failed stays owed (stage.unexported, written in the write's transaction) until
an export succeeds. Other connections never publish. Unset, nothing here touches a stage.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import dagster as dg
import duckdb
import numpy as np
import pandas as pd

from compass.ingest.errors import IngestError
from resources import settings

# Columns every published row carries (resources.publish): content hash, the run that wrote it, when.
STAMP_COLUMNS = ["data_version", "run_id", "refreshed_at"]
# Per-query tables are stored once (issue 45): their rows live in history.<t>_rows as row version ranges
# (`_append_ranged_history`) and the table itself is a view of the live ranges (`_live_view`), not a second copy; a
# row that left the table more than this many versions ago is dropped (retention).
RANGED_HISTORY = ("raw.query_records",)
HISTORY_VERSIONS_KEPT = 30
# Views that read a ranged table at a pinned version (ranged table -> (pins table, its seq column, the column a pin
# and a row share), e.g. the dataset extracts, `resources.query_extract.publish_records_view`): retention keeps every
# row live at a pin of its own dataset (one stale pin holds back only its dataset's rows).
RANGED_PINS = {"raw.query_records": ("datasets.query_records_versions", "raw_seq", "dataset")}
RANGE_COLUMNS = ("valid_from", "valid_to", "scope")
# Tables the warehouse host changed and has not yet exported to its stage (resources.stage, COMPASS_PUBLISH_FROM)
UNEXPORTED = "stage.unexported"


def frame_version(frame: pd.DataFrame) -> str:
    """Content hash of a DataFrame (columns and values): the data version of a published table."""
    h = hashlib.sha256("|".join(map(str, frame.columns)).encode())
    if len(frame):
        h.update(pd.util.hash_pandas_object(_hashable(frame), index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def relation_version(con: duckdb.DuckDBPyConnection, relation: str) -> str:
    """Content hash of a DuckDB relation (column names and the multiset of its rows), computed in DuckDB in one
    scan: the data version of a table published without crossing into pandas (`publish.publish_staged`). Rows
    are unordered here (a sum and an XOR of row hashes), so it differs from `frame_version` of the same rows."""
    columns = [row[0] for row in con.execute(f"describe {relation}").fetchall()]
    row_hash = "hash(" + ", ".join(f'"{c}"' for c in columns) + ")"
    count, total, xor = con.execute(f"select count(*), sum({row_hash}::hugeint)::varchar, bit_xor({row_hash}) "
                                    f"from {relation}").fetchone()
    return hashlib.sha256(f"{'|'.join(columns)}#{count}#{total}#{xor}".encode()).hexdigest()[:16]


def _hashable(frame: pd.DataFrame) -> pd.DataFrame:
    """List columns (embeddings, loadings) as the hex of their float64 bytes: pandas cannot hash lists."""
    lists = [c for c in frame.columns if frame[c].dtype == object
             and isinstance(frame[c].dropna().iloc[0] if frame[c].notna().any() else None, (list, np.ndarray))]
    return frame.assign(**{c: frame[c].map(lambda v: None if v is None else np.asarray(v, float).tobytes().hex())
                           for c in lists}) if lists else frame


class RefreshInProgress(RuntimeError):
    """Another process is refreshing this warehouse."""


# The refresh lock files this process holds (`Warehouse.refreshing`); a forked worker starts with a copy, and
# never takes the lock.
_REFRESHING: set[Path] = set()
# The warehouse lock files this process holds (`Warehouse.connect`), with how many connections hold each: a publish
# there (an exclusive lock) would wait for this process's own lock for good.
_HELD: dict[Path, int] = {}
# In-memory DuckDB databases kept between this process's warehouse connections (`_database`, `_release`): making one
# costs ~20 ms of CPU (its catalog of built-in functions; attaching the file to it ~1 ms), and a cold refresh opens the
# warehouse hundreds of times. One goes back detached from the file (which checkpoints it and lets go of DuckDB's own
# file lock) before our file lock is released, and only in the state it was made in (`_STATE_SQL`, looked at, not
# inferred from what the code runs): no other connection (cursor) on it, no registered filesystem, no database but its
# own, no variable, prepared statement, secret, temporary table, view or sequence, every setting as made (a hash).
# Temporary macros and types are not looked at (duckdb_functions() costs as much as a new database): nothing here makes
# them. Else it is closed, as every connection used to be. A relation object (`con.table(...)`) kept past its block
# would read whatever file the database has attached next: keep frames, not relations.
# Memory: DuckDB's allocator keeps what a block freed (thread caches, invisible to duckdb_memory()) until its database
# closes: 110 MB after reading 5 M rows, 450 MB after a group-by over them. So one database at most is kept, and none
# once the process's resident memory is `_RSS_GROWTH_KEPT` above what it was when the database was made (the growth
# may be Python's frames too: then a database is closed that need not be, ~20 ms against a block that grew 64 MB).
# Idle ones are closed before a fork: a child must not inherit its parent's DuckDB threads' state.
_IDLE: list[tuple[duckdb.DuckDBPyConnection, int]] = []  # (database, this process's resident bytes when it was made)
_IDLE_KEPT = 1
_IDLE_LOCK = threading.Lock()
_RSS_GROWTH_KEPT = 64 << 20
_AS_MADE: tuple | None = None
# one query each: as subqueries of one statement they cost 25 ms of CPU (each runs on DuckDB's threads), alone ~7 ms
_STATE_SQL = ("select * from duckdb_connection_count()",
              "select count(*) from duckdb_databases() where not internal",
              "select count(*) from duckdb_variables()", "select count(*) from duckdb_prepared_statements()",
              "select count(*) from duckdb_secrets()", "select count(*) from duckdb_tables() where temporary",
              "select count(*) from duckdb_views() where temporary and not internal",
              "select count(*) from duckdb_sequences() where temporary",
              "select hash(list(value)) from duckdb_settings()")


def _resident_bytes() -> int | None:
    """This process's resident memory now (Linux /proc; None elsewhere: then no database is kept)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


def _state(con: duckdb.DuckDBPyConnection) -> tuple:
    return (tuple(con.list_filesystems()), *(con.execute(sql).fetchone()[0] for sql in _STATE_SQL))


def _database() -> tuple[duckdb.DuckDBPyConnection, int | None]:
    """An in-memory DuckDB database with nothing attached (an idle one of this process, else a new one), and the
    resident memory of the process when it was made."""
    global _AS_MADE
    with _IDLE_LOCK:
        if _IDLE:
            return _IDLE.pop()
    made_at = _resident_bytes()
    con = duckdb.connect()
    if _AS_MADE is None:
        _AS_MADE = _state(con)
    return con, made_at


def _release(con: duckdb.DuckDBPyConnection, made_at: int | None, reusable: bool) -> None:
    """Close `con` (attached as `warehouse`), or when `reusable` (its block ended without an error) detach the file and
    keep the database for the next `_database` if it is as it was made and the process has not grown much since."""
    try:
        if reusable:
            con.execute("use memory")
            con.execute("detach warehouse")  # refused with a transaction open or aborted: closing rolls it back
            con.execute("reset search_path")  # as made (`use memory` set it)
            now = _resident_bytes()
            if made_at is not None and now is not None and now - made_at < _RSS_GROWTH_KEPT \
                    and _state(con) == _AS_MADE:
                with _IDLE_LOCK:
                    if len(_IDLE) < _IDLE_KEPT:
                        _IDLE.append((con, made_at))
                        return
    except duckdb.Error:
        pass
    except BaseException:  # Ctrl-C during the detach's checkpoint ('Query interrupted', a RuntimeError)
        con.close()
        raise
    con.close()


def _close_idle() -> None:
    with _IDLE_LOCK:
        idle = _IDLE[:]
        _IDLE.clear()
    for con, _ in idle:
        con.close()


os.register_at_fork(before=_close_idle)


class Warehouse:
    """Serialized access to one DuckDB file."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path or settings.db_path())
        self._session: duckdb.DuckDBPyConnection | None = None  # see `reading`
        self._touched: set[str] = set()  # tables written on the open exclusive connection (`changed`)
        self._owing = False  # on an exclusive connection that exports to a stage: `changed` records stage.unexported

    def exists(self) -> bool:
        """Whether there is anything to read yet (the file; resources.stage.StagedWarehouse: the stage)."""
        return self.path.exists()

    def publish_stage(self, entries: list[str] | None = None) -> int:
        """On the warehouse host (COMPASS_PUBLISH_FROM, this being COMPASS_DB's file): commit the staged `entries`
        (None: every pending one) in one transaction and export what is owed to the stage; the number of entries
        committed. Nothing otherwise, nor while this process holds the warehouse lock. A step in stage mode asks for
        its own entries through the host's `duckdb` queue (pipelines.celery_app) before it reports them to Dagster."""
        stage = _publishing_stage(self)
        if stage is None or _HELD.get(self._lock_path.resolve()):
            return 0
        published = stage.publish_pending(self, entries)
        if not published:
            with self.connect():  # exports what an earlier write left owed
                pass
        return published

    def changed(self, con: duckdb.DuckDBPyConnection, *tables: str) -> None:
        """Record tables written on the open exclusive connection `con`, inside the caller's transaction: exported to
        the stage after it (`Stage.export_owed`), and owed in stage.unexported until then when publishing to one."""
        self._touched.update(tables)
        if self._owing:
            con.executemany(f"insert into {UNEXPORTED} values (?)", [[t] for t in tables])

    @property
    def _lock_path(self) -> Path:
        return self.path.with_suffix(self.path.suffix + ".lock")

    @contextlib.contextmanager
    def reading(self) -> Iterator[Warehouse]:
        """Within the block, every read through this object shares one read-only connection (one attach of the
        file instead of one per read: tens of milliseconds each) under one shared lock. No writes inside."""
        if self._session is not None:
            yield self
            return
        with self.connect(read_only=True) as con:
            self._session = con
            try:
                yield self
            finally:
                self._session = None

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._session is not None:
            if not read_only:  # our own shared lock would block the exclusive one for good
                raise RuntimeError(f"write to {self.path} inside Warehouse.reading()")
            yield self._session
            return
        stage = _publishing_stage(self)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._lock_path, "w") as lock:
            exclusive = not (read_only and self.path.exists())
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            entered = time.time()
            con, made_at = self._open(not exclusive)
            key = self._lock_path.resolve() if stage is not None else None  # only a publish asks (local: no lookup)
            _HELD[key] = _HELD.get(key, 0) + 1  # after the open: a failed open holds nothing
            ended = False
            try:
                if stage is not None and exclusive:
                    con.execute("create schema if not exists stage")
                    con.execute(f'create table if not exists {UNEXPORTED} ("table" varchar)')
                    self._owing = True
                yield con
                if stage is not None and exclusive:
                    stage.export_owed(self, con)  # still under the lock
                ended = True
            finally:
                self._owing = False
                self._touched.clear()
                try:
                    _release(con, made_at, ended)  # still under the lock
                finally:
                    _HELD[key] -= 1
                    if exclusive:
                        _log_write(entered)

    def _open(self, read_only: bool) -> tuple[duckdb.DuckDBPyConnection, int | None]:
        """Attach the file as catalog `warehouse`, whatever its name: a file named after a schema
        (compass.duckdb) would otherwise be a catalog DuckDB cannot tell apart from that schema."""
        # The file lock already serializes our processes; retry briefly for foreign readers.
        for attempt in range(50):
            con, made_at = _database()
            try:
                con.execute(f"attach '{self.path}' as warehouse" + (" (read_only)" if read_only else ""))
                con.execute("use warehouse")
                return con, made_at
            except duckdb.IOException as exc:
                con.close()
                if "Could not set lock" not in str(exc):  # a folder, not a DuckDB file: no wait makes it one
                    raise IngestError(str(self.path), None, "--db", f"cannot open the warehouse: {_reason(exc)}") \
                        from None
                if attempt == 49:
                    raise
                time.sleep(0.1 * (attempt + 1))
        raise AssertionError("unreachable")

    @property
    def _refresh_marker(self) -> Path:
        return self.path.with_name(f"{self.path.name}.refresh")

    @contextlib.contextmanager
    def refreshing(self) -> Iterator[None]:
        """Hold the refresh lock for the block: one refresh per warehouse at a time. A second one gets
        RefreshInProgress at once, naming the holder (the lock dies with its process, so a killed refresh
        never blocks the next). Reentrant in the process that holds it (`compass run` takes it before opening
        its log, then refreshes)."""
        marker_path = self._refresh_marker.resolve()
        if marker_path in _REFRESHING:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._refresh_marker, "a+") as marker:
            for attempt in range(20):  # a `compass status` probe holds it for microseconds
                try:
                    fcntl.flock(marker, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if attempt == 19:
                        marker.seek(0)
                        raise RefreshInProgress(f"another refresh of {self.path} is running "
                                                f"({marker.read().strip()})") from None
                    time.sleep(0.1)
            marker.seek(0)
            marker.truncate()
            marker.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}")
            marker.flush()
            _REFRESHING.add(marker_path)
            try:
                yield
            finally:
                _REFRESHING.discard(marker_path)
                marker.truncate(0)

    def refresh_status(self) -> str:
        """'idle', or who is refreshing (see `refreshing`)."""
        if not self._refresh_marker.exists():
            return "idle"
        with open(self._refresh_marker, "a+") as marker:
            try:
                fcntl.flock(marker, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                marker.seek(0)
                return f"refresh in progress ({marker.read().strip()})"
        return "idle"

    @property
    def replica_path(self) -> Path:
        """The read replica for outside readers: var/warehouse.duckdb -> var/warehouse.read.duckdb."""
        return self.path.with_name(f"{self.path.stem}.read.duckdb")

    def publish_replica(self) -> Path:
        """Copy the checkpointed file under the writer lock, then rename it over the replica (atomic on POSIX:
        a reader that opened the old replica keeps reading it; the next one sees the new one)."""
        tmp = self._replica_tmp
        with self.connect() as con:
            con.execute("checkpoint")
            clone_file(self.path, tmp)
        os.replace(tmp, self.replica_path)
        return self.replica_path

    def ensure_replica(self) -> Path:
        """The replica, made now if there is none: the warehouse as it is, or on a home that never refreshed an
        empty database (no tables yet), so an outside reader opens it from the first refresh on (issue 43)."""
        if self.replica_path.exists():
            return self.replica_path
        if self.path.exists():
            return self.publish_replica()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._replica_tmp.unlink(missing_ok=True)  # left by a refresh killed while it published
        duckdb.connect(str(self._replica_tmp)).close()
        os.replace(self._replica_tmp, self.replica_path)
        return self.replica_path

    @property
    def _replica_tmp(self) -> Path:
        return self.replica_path.with_name(self.replica_path.name + ".tmp")

    def query(self, sql: str, params: list | None = None) -> pd.DataFrame:
        with self.connect(read_only=True) as con:
            return con.execute(sql, params or []).df()

    def table_exists(self, table: str) -> bool:
        if not self.exists():
            return False
        with self.connect(read_only=True) as con:
            return self._exists(con, table)

    def read(self, table: str, where: Mapping[str, object] | None = None, exclude: Iterable[str] = ()) -> pd.DataFrame:
        """Rows of `table` (optionally filtered by equality on columns) without the `exclude` columns it has; empty
        frame if absent."""
        if not self.exists():
            return pd.DataFrame()
        clause, params = _where(where)
        with self.connect(read_only=True) as con:  # one connection for the check and the read
            if not self._exists(con, table):
                return pd.DataFrame()
            cols = ", ".join(f'"{c}"' for c in _column_names(con, table) if c not in set(exclude))
            return con.execute(f"select {cols} from {table}{clause}", params).df()

    def replace(
        self,
        table: str,
        frame: pd.DataFrame,
        where: Mapping[str, object] | None = None,
        history_version: str | None = None,
    ) -> int:
        """Atomically replace the rows of `table` selected by `where` (all rows if None) with `frame`.

        With `history_version`, the same transaction appends the rows to
        history.<schema>_<table> unless that version of those rows is already there.
        """
        self.replace_many([(table, frame, where, history_version)])
        return len(frame)

    def replace_many(self, writes: Iterable[tuple[str, pd.DataFrame, Mapping[str, object] | None, str | None]]) -> None:
        """`replace` for several (table, frame, where, history_version) in one transaction: all land or none,
        with one connection and one checkpoint for all of them."""
        with self.connect() as con:
            con.execute("begin transaction")
            try:
                for table, frame, where, history_version in writes:
                    self._replace_in(con, table, frame, where, history_version)
                con.execute("commit")
                con.execute("checkpoint")  # fold the WAL into the file: read-only attaches do not replay it
            except Exception:
                con.execute("rollback")
                raise

    def _replace_in(self, con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame,
                    where: Mapping[str, object] | None, history_version: str | None) -> None:
        con.register("incoming", _typed_nulls(frame))  # on an error the caller rolls back and closes `con`
        self.write_relation(con, table, "incoming", where, history_version)
        con.unregister("incoming")

    def write_relation(self, con: duckdb.DuckDBPyConnection, table: str, relation: str,
                       where: Mapping[str, object] | None, history_version: str | None) -> None:
        """`replace` from a relation of `con` (a registered frame, a temporary table or view): the rows of `table`
        selected by `where` become the relation's, and with `history_version` history keeps that version once.
        The caller holds `con`'s transaction."""
        self.changed(con, table)
        con.execute(f"create schema if not exists {table.split('.')[0]}")
        if table in RANGED_HISTORY:  # stored once: the rows go to the ranges, the table is a view of the live ones
            self._append_ranged_history(con, table, relation, where, history_version or relation_version(con, relation))
            _live_view(con, table)
            return
        if where is None:
            con.execute(f"create or replace table {table} as select * from {relation}")
        else:
            self._insert_own_rows(con, table, relation, where)
        if history_version is not None:
            self._append_history(con, table, relation, where, history_version)

    def delete_rows(self, tables: list[str], where: Mapping[str, object]) -> None:
        """Delete the rows of each existing table selected by `where`, all in one transaction (no history)."""
        clause, params = _where(where)
        with self.connect() as con:
            con.execute("begin transaction")
            try:
                for table in tables:
                    if self._exists(con, table):
                        con.execute(f"delete from {table}{clause}", params)
                        self.changed(con, table)
                con.execute("commit")
                con.execute("checkpoint")
            except Exception:
                con.execute("rollback")
                raise

    @staticmethod
    def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
        schema, name = table.split(".")
        return con.execute("select count(*) from information_schema.tables where table_catalog = 'warehouse' "
                           "and table_schema = ? and table_name = ?", [schema, name]).fetchall()[0][0] > 0

    def holds_version(self, table: str, where: Mapping[str, object] | None, version: str) -> bool:
        """True when the rows of `table` selected by `where` are exactly the published `version`."""
        return self.data_versions(table, where) == [version]

    def data_versions(self, table: str, where: Mapping[str, object] | None = None) -> list[str] | None:
        """The distinct published data versions of the rows of `table` selected by `where`, sorted ([] when the
        table does not exist; None when it has no data_version column: not published by an asset)."""
        if not self.exists():
            return []
        clause, params = _where(where)
        with self.connect(read_only=True) as con:  # one connection for the checks and the read
            if not self._exists(con, table):
                return []
            if "data_version" not in con.execute(f"select * from {table} limit 0").df().columns:
                return None
            return [v for (v,) in con.execute(f"select distinct data_version from {table}{clause} order by 1",
                                              params).fetchall()]

    @staticmethod
    def _insert_own_rows(con: duckdb.DuckDBPyConnection, table: str, relation: str, where: Mapping[str, object]) -> None:
        con.execute(f"create table if not exists {table} as select * from {relation} limit 0")
        _add_missing_columns(con, table, relation)
        clause, params = _where(where)
        con.execute(f"delete from {table}{clause}", params)
        cols = ", ".join(f'"{c}"' for c in _column_names(con, relation))
        con.execute(f"insert into {table} ({cols}) select {cols} from {relation}")

    @staticmethod
    def _append_history(con: duckdb.DuckDBPyConnection, table: str, relation: str, where: Mapping[str, object] | None,
                        version: str) -> None:
        history = "history." + table.replace(".", "_")
        con.execute("create schema if not exists history")
        con.execute(f"create table if not exists {history} as select * from {relation} limit 0")
        _add_missing_columns(con, history, relation)
        seen = dict(where or {}, data_version=version)
        clause, params = _where(seen)
        if con.execute(f"select count(*) from {history}{clause}", params).fetchall()[0][0] == 0:
            cols = ", ".join(f'"{c}"' for c in _column_names(con, relation))
            con.execute(f"insert into {history} ({cols}) select {cols} from {relation}")


    @staticmethod
    def _append_ranged_history(con: duckdb.DuckDBPyConnection, table: str, relation: str,
                               where: Mapping[str, object] | None, version: str) -> None:
        """History as version ranges (issue 45): history.<t>_versions lists each published version (seq, data_version,
        run_id, refreshed_at, scope: the `where` it replaced); history.<t>_rows holds each distinct row once, with
        valid_from / valid_to (seqs; valid_to null while the row is live). A new version inserts only the rows that
        were not live and closes the ranges of the rows it dropped, so a 1 % append stores 1 %; rows are matched by
        the hash of their values, computed when compared (a stored hash cost 8 bytes a row, a third of the rest).
        Version `seq` of a scope is the rows with valid_from <= seq < coalesce(valid_to, seq + 1) (`read_version`).
        Retention: rows closed at or before the oldest of the scope's last HISTORY_VERSIONS_KEPT versions go, unless
        a pin of their own dataset (RANGED_PINS) reads them."""
        rows, versions = ranged_tables(table)
        scope = repr(sorted((where or {}).items()))
        con.execute("create schema if not exists history")
        con.execute(f"create table if not exists {versions} (seq bigint, data_version varchar, run_id varchar, "
                    f"refreshed_at timestamp, scope varchar)")
        if Warehouse._exists(con, rows) and "row_hash" in _column_names(con, rows):  # 692a596's layout stored it
            con.execute(f"alter table {rows} drop column row_hash")
        live = con.execute(f"select data_version from {versions} where scope = ? order by seq desc limit 1",
                           [scope]).fetchall()
        if live and live[0][0] == version:
            return
        seq = con.execute(f"select coalesce(max(seq), 0) + 1 from {versions}").fetchall()[0][0]
        incoming = [c for c in _column_names(con, relation) if c not in STAMP_COLUMNS]
        con.execute(f"create table if not exists {rows} as select {_quoted(incoming)}, 0::bigint as valid_from, "
                    f"null::bigint as valid_to, ''::varchar as scope from {relation} limit 0")
        con.execute(f"create or replace temp view ranged_own as select {_quoted(incoming)} from {relation}")
        _add_missing_columns(con, rows, "ranged_own")
        types = {name: kind for name, kind, *_ in con.execute(f"describe {rows}").fetchall()
                 if name not in RANGE_COLUMNS}
        own = list(types)
        # the incoming rows in the stored columns and types, so equal rows hash equal
        con.execute("create or replace temp view ranged_incoming as select " + ", ".join(
            f'cast("{c}" as {t}) as "{c}"' if c in incoming else f'null::{t} as "{c}"' for c, t in types.items())
            + f" from {relation}")
        row_hash = f"hash({_quoted(own)})"
        # a scope's first version has no live rows: no anti-join (its hash table of every incoming row, built even
        # against no rows, ran out of memory at 100 M rows)
        if con.execute(f"select count(*) from (select 1 from {rows} where scope = ? and valid_to is null limit 1)",
                       [scope]).fetchone()[0]:
            con.execute(f"update {rows} set valid_to = ? where scope = ? and valid_to is null "
                        f"and {row_hash} not in (select {row_hash} from ranged_incoming)", [seq, scope])
            new_rows = (f" where {row_hash} not in (select {row_hash} from {rows} where scope = ? and valid_to is null)",
                        [scope])
        else:
            new_rows = ("", [])
        con.execute(f"insert into {rows} ({_quoted(own)}, valid_from, valid_to, scope) "
                    f"select {_quoted(own)}, ?, null, ? from ranged_incoming{new_rows[0]}", [seq, scope, *new_rows[1]])
        run_id, refreshed_at = con.execute(f"select any_value(run_id), any_value(refreshed_at) from {relation}"
                                           ).fetchall()[0] if {"run_id", "refreshed_at"} <= set(_column_names(
                                               con, relation)) else (None, None)
        con.execute(f"insert into {versions} values (?, ?, ?, ?, ?)", [seq, version, run_id, refreshed_at, scope])
        con.execute("drop view ranged_incoming")
        con.execute("drop view ranged_own")
        oldest = con.execute(f"select min(seq) from (select seq from {versions} where scope = ? order by seq desc "
                             f"limit {HISTORY_VERSIONS_KEPT})", [scope]).fetchall()[0][0]
        con.execute(f"delete from {rows} where scope = ? and valid_to <= ?{_unpinned(con, table, rows)}", [scope, oldest])
        con.execute(f"delete from {versions} where scope = ? and seq < ?", [scope, oldest])

    def read_version(self, table: str, version: str, where: Mapping[str, object] | None = None) -> pd.DataFrame:
        """The rows of a published version of a table with ranged history (own columns, in no particular order);
        empty when that version is not kept."""
        rows, versions = ranged_tables(table)
        scope = repr(sorted((where or {}).items()))
        with self.connect(read_only=True) as con:
            if not self._exists(con, rows):
                return pd.DataFrame()
            found = con.execute(f"select max(seq) from {versions} where scope = ? and data_version = ?",
                                [scope, version]).fetchall()[0][0]
            if found is None:
                return pd.DataFrame()
            return con.execute(f"select * exclude (valid_from, valid_to, scope) from {rows} where scope = ? "
                               f"and valid_from <= $1 and coalesce(valid_to, $1 + 1) > $1".replace("$1", "?"),
                               [scope, found, found, found]).df()


def _publishing_stage(wh: Warehouse):
    """The stage `wh` publishes from and exports to (COMPASS_PUBLISH_FROM), or None: unset, or `wh` is not the file
    COMPASS_DB names (a backup, a scratch copy, a script's --db never takes a stage's entries)."""
    url = settings.publish_from()
    if url is None or wh.path.resolve() != Path(settings.db_path()).resolve():
        return None
    from resources.stage import Stage
    return Stage(url)


def clone_file(source: Path, target: Path) -> None:
    """Copy `source` to `target` with copy_file_range(2): on a filesystem with shared extents (XFS, btrfs) the
    kernel clones the blocks instead of copying them (the replica then costs no bytes and no copy time); elsewhere
    (ext4) it copies in the kernel, as shutil does. A whole-file snapshot is what DuckDB allows: a read-only open
    needs the file free of a read-write one, and DuckDB has no incremental snapshot of a database file (see
    docs/benchmarks.md, issue 45)."""
    with open(source, "rb") as src, open(target, "wb") as dst:
        left = os.fstat(src.fileno()).st_size
        copy_range = getattr(os, "copy_file_range", None)  # Linux only
        try:
            if copy_range is None:
                raise OSError("copy_file_range is not available here")
            while left > 0:
                done = copy_range(src.fileno(), dst.fileno(), left)
                if done == 0:
                    break
                left -= done
        except OSError:  # not supported here (another kernel, another filesystem pair): a plain copy
            src.seek(0)
            dst.seek(0)
            dst.truncate()
            shutil.copyfileobj(src, dst)
            left = 0
    if left:
        raise OSError(f"copying {source} to {target} stopped {left} bytes short")


def ranged_tables(table: str) -> tuple[str, str]:
    """(history.<t>_rows, history.<t>_versions): where a table stored as ranges keeps its rows and its versions."""
    base = "history." + table.replace(".", "_")
    return base + "_rows", base + "_versions"


def _quoted(columns: Iterable[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def _unpinned(con: duckdb.DuckDBPyConnection, table: str, rows: str) -> str:
    """SQL condition (after `and`) on `rows`: no pin of the row's own dataset reads it (RANGED_PINS); empty when
    `table` has no pins."""
    if table not in RANGED_PINS or not Warehouse._exists(con, RANGED_PINS[table][0]):
        return ""
    pins, seq, key = RANGED_PINS[table]
    return (f" and not exists (select 1 from {pins} p where p.{key} = {rows}.{key} and {rows}.valid_from <= p.{seq} "
            f"and {rows}.valid_to > p.{seq})")


def _live_view(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """`table` as the view of its live ranges (valid_to null), each scope's rows stamped with its latest version.
    A table stored as a copy before issue 45 is dropped first: its rows are the live ranges already."""
    rows, versions = ranged_tables(table)
    schema, name = table.split(".")
    kind = con.execute("select table_type from information_schema.tables where table_catalog = current_database() "
                       "and table_schema = ? and table_name = ?", [schema, name]).fetchall()
    if kind and kind[0][0] == "BASE TABLE":
        con.execute(f"drop table {table}")
    con.execute(f"create or replace view {table} as select r.* exclude ({', '.join(RANGE_COLUMNS)}), v.data_version, "
                f"v.run_id, v.refreshed_at from {rows} r join (select scope, arg_max(data_version, seq) as data_version, "
                f"arg_max(run_id, seq) as run_id, arg_max(refreshed_at, seq) as refreshed_at from {versions} "
                f"group by scope) v on r.scope = v.scope where r.valid_to is null")


def _log_write(entered: float) -> None:
    """Append `pid enter exit` (epoch seconds) of an exclusive hold that ends now to COMPASS_WRITE_LOG, while the lock
    is still held; nothing when unset. One short O_APPEND write per line, so processes never interleave lines."""
    log = settings.write_log_path()
    if log is not None:
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {entered:.6f} {time.time():.6f}\n")


def write_holds(log: str | Path) -> list[tuple[float, float, int]]:
    """The exclusive holds logged to `log` (see `_log_write`): (enter, exit, pid), by enter time."""
    holds = []
    for line in Path(log).read_text().splitlines():
        pid, enter, leave = line.split()
        holds.append((float(enter), float(leave), int(pid)))
    return sorted(holds)


def overlapping_holds(holds: list[tuple[float, float, int]]) -> list[str]:
    """Pairs of exclusive holds that overlap in time (empty when the lock serialized every write)."""
    found, latest = [], None  # latest: the hold that ends last among those entered so far
    for enter, leave, pid in holds:
        if latest is not None and enter < latest[1]:
            found.append(f"pid {pid} entered at {enter:.3f} while pid {latest[2]} held it until {latest[1]:.3f}")
        if latest is None or leave > latest[1]:
            latest = (enter, leave, pid)
    return found


def _reason(exc: duckdb.Error) -> str:
    """DuckDB's message without its 'IO Error: ' prefix, on one line."""
    return " ".join(str(exc).removeprefix("IO Error: ").split())


def _typed_nulls(frame: pd.DataFrame) -> pd.DataFrame:
    """All-null object columns become strings, so DuckDB never creates a column of type NULL."""
    empty = [c for c in frame.columns if frame[c].dtype == object and frame[c].isna().all()]
    return frame.astype({c: "string" for c in empty}) if empty else frame


def _column_names(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    return [row[0] for row in con.execute(f"describe {relation}").fetchall()]


def _add_missing_columns(con: duckdb.DuckDBPyConnection, table: str, relation: str) -> None:
    """Columns of `relation` (the incoming rows) that `table` lacks are added (never renamed or dropped)."""
    existing = set(_column_names(con, table))
    types = {row[0]: row[1] for row in con.execute(f"describe {relation}").fetchall()}
    for col, dtype in types.items():
        if col not in existing:
            con.execute(f'alter table {table} add column "{col}" {dtype if dtype != "NULL" else "VARCHAR"}')


def _where(where: Mapping[str, object] | None) -> tuple[str, list]:
    if not where:
        return "", []
    return " where " + " and ".join(f'"{k}" = ?' for k in where), list(where.values())


class WarehouseResource(dg.ConfigurableResource):
    """Dagster resource wrapping the warehouse file: `path`, else COMPASS_DB, else var/warehouse.duckdb."""

    path: str = ""

    def get(self) -> Warehouse:
        """The warehouse file; in stage mode (COMPASS_STAGE, a step on a host without it) the stage's view of it."""
        if settings.stage_url():
            from resources.stage import StagedWarehouse
            return StagedWarehouse(settings.stage_url())
        return Warehouse(self.path or None)
