"""Steps that run where the warehouse is not (issue 44, item 2): compute and publish separated by shared storage.

A stage is shared storage named by an fsspec URL whose filesystem can create a file exclusively (`Stage._decide`): a
folder (a local disk, or a POSIX share mounted on every host: NFS and the like), s3:// (s3fs >= 2025.7:
If-None-Match, on a bucket that honours conditional writes: AWS S3 since 2024-08, MinIO, R2 ...), gs:// (gcsfs:
ifGenerationMatch=0), az:// or abfs:// (adlfs >= 2024.12: overwrite=False), and fsspec's memory:// (tests). Only the
folder and memory:// are tested here (with a folder that moves by copy and delete, as a store does): s3fs, gcsfs and
adlfs are not installed. Any other URL (http://, ftp://) is refused in one line naming it and why; setup
(`create_empty`) refuses a store that lets the same file be created exclusively twice. An entry's fate is decided by
whoever first creates decided/<entry> (the publisher's claim, or the set-aside of a step that gave up): the loser
reads the winner's decision (a create that raised anything but FileExistsError, as S3's 409 or a lost response,
reads the marker back and compares its own token), so an entry is committed or set aside, never both, on a store
whose move is a copy and a delete too; the copies between pending/, publishing/ and failed/ are bookkeeping after
the decision. Every file is written whole (in a folder a temporary file renamed into place, on a store one PUT),
ages are the files' modification times (`fs.modified`; a decided/ marker named after the retention horizon is not
even stat'ed), a failed write or exclusive create is one line naming the stage (`StageUnavailable`), and DuckDB
reads a store's Parquet through the fsspec filesystem registered with its Python client (`Stage.attach`: DuckDB's
own reader, so the column types are a local read's; no extension). Its layout:

    tables/<schema>.<table>/<data_version>/<scope>.parquet    rows a step staged, content-addressed by data version
                                                              (<scope>: hash of the rows' `where`); never rewritten
    STAGE                                                     the marker: written once, at setup (`create_empty`)
    pending/<ns>-<pid>-<n>.json                               one per staged transaction, not yet published
    publishing/<entry>                                        an entry the publisher claimed, until committed
    failed/<entry>, failed/<entry>.error                      an entry set aside (never published) and why
    decided/<entry>                                           its fate ("claimed" or "set aside", when, by whom,
                                                              the decider's token):
                                                              created once, exclusively; kept KEEP_S after its entry
    snapshot/_tables.json                                     the manifest: every table of the warehouse with its
                                                              data version and file (none for history.*), and when
                                                              each file it dropped was dropped ("retired"),
                                                              replaced whole by each export
    snapshot/<schema>.<table>/<relation_version>.parquet      the published table as exported by the warehouse host

A step in stage mode (COMPASS_STAGE on a host without the warehouse file) gets a `StagedWarehouse`: its reads go
through an in-memory DuckDB connection whose `schema.table` names are views over the published snapshot (with only
its own entries still pending applied, under NO_PUBLISH: a scoped write replaces its scope's rows, as
`Warehouse.write_relation` does; never another step's pending entry, which may never be published), and its writes (`resources.publish`: `publish_many`, `publish_staged`; `delete_rows`) stage Parquet plus one pending
entry per transaction instead, after forcing the entry's rows through the overlay's casts (a write the warehouse could
not commit fails the step, `StagedWriteRejected`), and then wait for the warehouse host to commit that entry
(`request_publish`: on the deploy profile's workers a Celery task on the host's `duckdb` queue,
pipelines.stage_publish; a process without a publisher fails the write in one line), so the data version the step reports to Dagster is in the warehouse when Dagster records it,
and the steps after it read its rows there. On the host (COMPASS_PUBLISH_FROM, for the file COMPASS_DB names only),
`Warehouse.publish_stage(entries)` commits the entries asked for in one transaction (`Stage.publish_pending`: history
and the replica as for any write; an entry is committed once, recorded in `stage.publishes` in the same transaction,
so a publisher killed mid-commit rolls back and the task, acknowledged late, is run again and commits it whole; an
entry the warehouse refuses fails the step that asked and goes to failed/ with a one-line reason). Nothing else
publishes: an entry whose step failed before its publish was asked for is never published (`publish_stage()` without
entries, by hand, publishes every pending one). Retention: `Stage.collect_garbage` (files, failed/ entries and
decided/ markers after KEEP_S) and `Stage.forget_publishes` (stage.publishes after KEEP_S).
Every write on the host exports the tables it changed to the snapshot (`Stage.export_owed`: the tables stay in
stage.unexported, written in the write's own transaction, until an export succeeds). A stage that cannot be reached is
one line naming it (`StageUnavailable`); a write it interrupts after its commit stays owed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import posixpath
import re
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path

import duckdb
import fsspec
from fsspec.implementations.local import LocalFileSystem
from fsspec.implementations.memory import MemoryFileSystem

from resources.warehouse import RANGED_HISTORY, UNEXPORTED, Warehouse, relation_version

MANIFEST = "snapshot/_tables.json"  # every table of the warehouse: its data version and exported file (`export`)
NOT_EXPORTED = ("history.", "stage.")  # listed in the manifest without a file
MARKER = "STAGE"  # a stage without it is not one (an empty folder: an unmounted share's mount point)
GC_GRACE_S = 3600  # a file no manifest or entry names is kept this long (`Stage.collect_garbage`)
GC_EVERY_S = 60  # a host process collects at most this often
KEEP_S = 7 * 86400  # failed/ entries and stage.publishes rows are kept this long (retention)
CLAIMED = "publishing"  # entries the publisher took (copied from pending/ under the writer lock), until committed
DECIDED = "decided"  # decided/<entry>: an entry's fate, created once (exclusive create) by whoever decides it first
TAKEN, SET_ASIDE = "claimed", "set aside"  # the fates: the publisher's claim, a step's (or retention's) set-aside
# The object stores whose fsspec driver creates a file exclusively (open "xb", atomic) from the release named:
# s3fs PRs 917/974 (If-None-Match, also for small files), adlfs PR 491 (overwrite=False), gcsfs (ifGenerationMatch=0).
# A folder (file://, NFS) and fsspec's memory:// always can.
EXCLUSIVE_CREATE = {"s3": ("s3fs", "2025.7.0"), "s3a": ("s3fs", "2025.7.0"), "gs": ("gcsfs", "2024.12.0"),
                    "gcs": ("gcsfs", "2024.12.0"), "az": ("adlfs", "2024.12.0"), "abfs": ("adlfs", "2024.12.0"),
                    "abfss": ("adlfs", "2024.12.0")}
CREATE_TRIES = 3  # an exclusive create whose outcome an error hid, and that left no file, is tried this often
CREATE_BACKOFF_S = 0.05  # before reading such a create back, 0.05, 0.1, 0.2 s: S3's 409 says another one is in progress
PUBLISHES = "stage.publishes"  # entry, table, version, published_at: what the warehouse committed, once each
LOG = logging.getLogger(__name__)
_collected_at = -float("inf")  # when this process last collected garbage (time.monotonic)


class StageUnavailable(RuntimeError):
    """The stage cannot be read or written (one line, naming it)."""


class StagedWriteRejected(RuntimeError):
    """A step's staged rows cannot be applied over the table as published (one line, naming the table)."""


class Stage:
    """One stage: staged rows, pending entries and the published snapshot (module docstring)."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")
        refused = _without_exclusive_create(self.url)
        if refused:
            raise StageUnavailable(f"the stage {self.url} cannot be used: {refused}")
        try:  # no listings cache (s3fs, gcsfs, adlfs keep one per process, for good): other hosts write the stage
            self.fs, self.root = fsspec.core.url_to_fs(self.url, use_listings_cache=False)
        except (ImportError, ValueError, TypeError) as exc:  # a driver missing, a malformed URL
            raise StageUnavailable(f"the stage {self.url} cannot be used: {_one_line(exc)}") from None
        self.root = self.root.rstrip("/")
        # a folder on this host's filesystem (or a mount): DuckDB reads its Parquet by path, a file is written whole
        # by rename and an entry's fate by a hard link; any other filesystem (an object store) through fsspec
        self.native = "file" in _protocols(self.fs)

    def _unreachable(self, exc: BaseException) -> StageUnavailable:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return StageUnavailable(f"the stage {self.url} is unreachable: {reason}")

    def _full(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def sql_path(self, relative: str) -> str:
        """The path of a stage file as DuckDB reads it: on a connection `attach` prepared, for an object store."""
        return self._full(relative) if self.native else self.fs.unstrip_protocol(self._full(relative))

    def attach(self, con: duckdb.DuckDBPyConnection) -> None:
        """Let DuckDB read this stage's files on `con` (`sql_path`): an object store's filesystem registered with
        DuckDB's Python client (DuckDB's own Parquet reader, so the column types are those of a local read; no
        extension). Nothing for a folder."""
        if self.native:
            return
        try:
            con.register_filesystem(self.fs)
        except duckdb.InvalidInputException as exc:  # registered with this database before (a reused connection)
            if "already been registered" not in str(exc):
                raise

    def check(self, mark: bool = False) -> None:
        """StageUnavailable unless the stage's folder exists (whoever sets the stage up creates it) and holds the
        marker, which only `create_empty` writes (`mark`): an export, a publish and a reader all require it, so an
        unmounted share's empty mount point is one line naming it, never taken for a new stage. (An object store
        has no folders: there the marker is the stage, and setting it up needs none.)"""
        try:
            found = self.fs.isdir(self.root) or mark and not self.native
            marked = found and self.fs.exists(self._full(MARKER))
        except Exception as exc:  # noqa: BLE001 - any driver's error: the one line names the stage
            raise self._unreachable(exc) from None
        if not found:
            raise StageUnavailable(f"the stage {self.url} is unreachable: no such folder")
        if mark:
            self._probe_exclusive_create()
        if not marked and mark:
            self._put(MARKER, (json.dumps({"id": uuid.uuid4().hex}) + "\n").encode(), setup=True)
        elif not marked:
            raise StageUnavailable(f"the stage {self.url} is unreachable: no {MARKER} marker in it (not mounted, or "
                                   f"never set up: Stage.create_empty)")

    def identity(self) -> str:
        """The stage's id: its marker's, written once by `create_empty`. What the warehouse host and a step compare
        (pipelines.stage_publish.publish_on_host), not paths: each host may mount the share at its own path. A copy
        of the folder has the same id; a step's request then names entries the host's folder does not hold, and
        `publish_pending` refuses it in one line."""
        self.check()
        try:
            marker = self._read_json(MARKER)
        except OSError as exc:
            raise self._unreachable(exc) from None
        except ValueError:
            marker = None
        if not isinstance(marker, dict) or not isinstance(marker.get("id"), str):
            raise StageUnavailable(f"the stage {self.url} has a {MARKER} marker without an id (made by hand?): remove "
                                   f"it and set the stage up again (Stage.create_empty, on the warehouse host)")
        return marker["id"]

    def create_empty(self) -> None:
        """Set the stage up, once, in its existing folder (the deployment's setup): the marker (nothing else writes
        it) and, unless there is one, an empty manifest. The warehouse host's first export then exports every table
        of its warehouse (`export`). Refused in one line when the store does not honour an exclusive create (a
        bucket that ignores conditional writes): entries could then be both committed and set aside."""
        self.check(mark=True)
        if self.fs.exists(self._full(MANIFEST)):
            return
        with contextlib.closing(duckdb.connect()) as con:
            self.export(con, [])

    def _probe_exclusive_create(self) -> None:
        """StageUnavailable (one line) unless creating a file exclusively twice fails the second time: a bucket
        that ignores conditional writes would let a claim and a set-aside both win."""
        probe = f"{DECIDED}/.probe-{uuid.uuid4().hex}"
        try:
            twice = (self._create_exclusive(probe, f"probe {uuid.uuid4().hex}\n".encode(), setup=True)
                     and self._create_exclusive(probe, f"again {uuid.uuid4().hex}\n".encode(), setup=True))
            self.fs.rm(self._full(probe))
        except OSError as exc:
            raise self._unreachable(exc) from None
        if twice:
            raise StageUnavailable(f"the stage {self.url} cannot be used: an exclusive create of {probe} succeeded "
                                   f"twice (a store without conditional writes cannot decide an entry's fate)")

    # ---- files ---------------------------------------------------------------------------------------------------

    def _folder_for(self, target: str, setup: bool = False) -> None:
        """Make `target`'s folder (nothing on an object store), never the stage's own: a stage that went away is not
        recreated."""
        if not setup and not self.fs.isdir(self.root):
            raise StageUnavailable(f"the stage {self.url} is unreachable: no such folder")
        self.fs.makedirs(posixpath.dirname(target), exist_ok=True)

    def _put(self, relative: str, data: bytes | Callable[[str], object], setup: bool = False) -> None:
        """Write a file whole, or not at all: `data`, or what `data(local_path)` writes into a local file. In a folder
        a temporary file moved into place by rename; on an object store one PUT (atomic), a local file uploaded."""
        target = self._full(relative)
        try:
            self._folder_for(target, setup)
            if self.native:  # os.replace: a rename, never shutil.move's copy and delete
                tmp = f"{posixpath.dirname(target)}/.tmp-{uuid.uuid4().hex}"
                try:
                    self._write_local(tmp, data)
                    os.replace(tmp, target)
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)
            elif isinstance(data, bytes):
                self.fs.pipe_file(target, data)
            else:
                with tempfile.TemporaryDirectory(prefix="compass-stage-") as folder:
                    tmp = f"{folder}/{posixpath.basename(target)}"
                    data(tmp)
                    self.fs.put_file(tmp, target)
        except OSError as exc:
            raise StageUnavailable(f"the stage {self.url} cannot write {relative}: {_one_line(exc)}") from None

    def _write_local(self, path: str, data: bytes | Callable[[str], object]) -> None:
        if isinstance(data, bytes):
            self.fs.pipe_file(path, data)
        else:
            data(path)

    def _create_exclusive(self, relative: str, data: bytes, setup: bool = False) -> bool:
        """Create a file holding `data` (unique: it holds a token of this call, `_decision`) unless it exists,
        atomically: True when this call created it, False when it was there. In a folder a hard link of a complete
        temporary file (atomic and exclusive on a local disk and on NFS, where O_EXCL was not always: the file never
        appears empty); elsewhere the filesystem's exclusive create (open "xb": S3 If-None-Match, GCS
        ifGenerationMatch=0, Azure's overwrite=False), whole at its close. Any other error (S3 answers a lost create
        with a 409, or a 412 s3fs raises as a plain OSError; a response may be lost after the create succeeded) is
        settled by reading the file back after a pause (CREATE_BACKOFF_S, doubling: a 409 means another create of
        it is in progress): `data` (this call created it), other bytes (another did), none (tried again,
        CREATE_TRIES times in all, then StageUnavailable in one line)."""
        target = self._full(relative)
        self._folder_for(target, setup)
        for attempt in range(CREATE_TRIES):
            try:
                self._create_once(target, data)
                return True
            except FileExistsError:
                return False
            except OSError as exc:
                failure = exc
            time.sleep(CREATE_BACKOFF_S * 2 ** attempt)
            try:
                found = self.fs.cat_file(target)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise self._unreachable(exc) from None
            return found == data
        raise StageUnavailable(f"the stage {self.url} cannot create {relative} exclusively: {_one_line(failure)}")

    def _create_once(self, target: str, data: bytes) -> None:
        if not self.native:
            with self.fs.open(target, "xb") as f:
                f.write(data)
            return
        tmp = f"{posixpath.dirname(target)}/.tmp-{uuid.uuid4().hex}"
        try:
            self.fs.pipe_file(tmp, data)
            os.link(tmp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def write_parquet(self, con: duckdb.DuckDBPyConnection, relation: str, relative: str) -> None:
        """`relation`'s rows as Parquet at `relative`, unless that path exists in a folder (content-addressed: same
        rows); a file reused there is touched (`os.utime`; written when it vanished meanwhile, to retention), so
        retention (`collect_garbage`, by age) does not take it before its entry names it. On an object store a file
        written less than GC_GRACE_S / 2 ago is reused as it is (retention keeps it for at least that long again);
        an older one is written again (one PUT, whole: a time is a PUT's, and a check then a touch could create it
        empty), which a reader of that path at that moment may see change under it (same data version, maybe not
        the same bytes): a rewrite only every half hour per reused path, not per write."""
        if self.native:
            with contextlib.suppress(FileNotFoundError):
                os.utime(self._full(relative))
                return
        elif time.time() - self._modified(relative, missing=0.0) < GC_GRACE_S / 2:
            return
        self._put(relative, lambda tmp: con.execute(f"copy (select * from {relation}) to '{tmp}' (format parquet)"))

    def _write_json(self, relative: str, value: object) -> None:
        self._put(relative, json.dumps(value).encode())

    def _read_json(self, relative: str) -> object:
        with self.fs.open(self._full(relative), "r") as f:
            return json.load(f)

    def _names(self, folder: str, suffix: str = ".json") -> list[str]:
        try:
            if not self.fs.isdir(self._full(folder)):
                return []
            return sorted(posixpath.basename(p) for p in self.fs.ls(self._full(folder), detail=False)
                          if p.endswith(suffix) and not posixpath.basename(p).startswith("."))
        except Exception as exc:  # noqa: BLE001
            raise self._unreachable(exc) from None

    # ---- pending transactions and the snapshot --------------------------------------------------------------------

    def add_pending(self, writes: list[dict]) -> str:
        """One staged transaction: its entry appears whole or not at all (`_put`), after its Parquet files."""
        name = f"{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        self._write_json(f"pending/{name}", {"writes": writes})
        return name

    def pending(self) -> list[tuple[str, dict]]:
        """The pending transactions, oldest first."""
        self.check()
        found = []
        for name in self._names("pending"):
            try:
                found.append((name, self._read_json(f"pending/{name}")))
            except FileNotFoundError:  # published and removed meanwhile
                continue
        return found

    def snapshot(self) -> dict[str, str | None]:
        """Every table of the warehouse -> the Parquet file (for DuckDB) holding it as last exported, or None for a
        table that is not exported (history.*): from the manifest, after checking it names only files that exist.
        StageUnavailable (one line) when the manifest is missing or names a file that is not there."""
        self.check()
        try:
            manifest = self._read_json(MANIFEST)
        except FileNotFoundError:
            raise StageUnavailable(f"the stage {self.url} has no snapshot manifest ({MANIFEST}): the warehouse host "
                                   f"has exported nothing to it") from None
        except (OSError, ValueError) as exc:
            raise self._unreachable(exc) from None
        paths = {table: listed["path"] for table, listed in manifest["tables"].items()}
        present = self._files("snapshot")
        missing = sorted(path for path in paths.values() if path is not None and path not in present)
        if missing:
            raise StageUnavailable(f"the stage {self.url} has an inconsistent snapshot: {MANIFEST} lists {missing[0]}, "
                                   f"which is not there ({len(missing)} missing)")
        return {table: None if path is None else self.sql_path(path) for table, path in paths.items()}

    def _files(self, folder: str) -> set[str]:
        """Every file below `folder` (relative to the stage), temporary ones aside."""
        try:
            if not self.fs.isdir(self._full(folder)):
                return set()
            found = self.fs.find(self._full(folder))
        except Exception as exc:  # noqa: BLE001
            raise self._unreachable(exc) from None
        return {path.removeprefix(self.root + "/") for path in found if not posixpath.basename(path).startswith(".")}

    def export(self, con: duckdb.DuckDBPyConnection, tables: Iterable[str]) -> None:
        """The current rows of `tables` to the snapshot, from the warehouse host's open connection, then the manifest
        (one file, replaced whole): every table of the warehouse with its data version (`relation_version`) and its
        file; unchanged content keeps its file; a dropped table leaves the manifest. The first export to a stage
        whose manifest lists nothing exports every table (those written before publishing was switched on). History and
        the stage's own tables are listed without a file (not exported): a step in stage mode that reads one fails
        naming it, instead of reading nothing. A file the manifest stops naming is listed in "retired" with the time it
        was dropped (retention's grace period counts from then: a step may have bound it), until it is gone."""
        try:
            self.check()
            try:
                manifest = self._read_json(MANIFEST)
            except FileNotFoundError:
                manifest = {"tables": {}}
            listed, retired = manifest["tables"], manifest.get("retired", {})
            if not listed:
                tables = _all_tables(con)
            present = set(_all_tables(con))
            was = {table: entry["path"] for table, entry in listed.items()}
            for table in sorted(set(tables) | set(listed)):
                if table not in present:
                    listed.pop(table, None)
                elif table.startswith(NOT_EXPORTED):
                    listed[table] = {"version": None, "path": None}
                elif table in tables:
                    version = relation_version(con, table)
                    relative = f"snapshot/{table}/{version}.parquet"
                    self.write_parquet(con, table, relative)
                    listed[table] = {"version": version, "path": relative}
            for table in present - set(listed):  # history.* a write just created
                if table.startswith(NOT_EXPORTED):
                    listed[table] = {"version": None, "path": None}
            named = {entry["path"] for entry in listed.values()}
            now = time.time()
            retired.update({path: now for path in was.values() if path is not None and path not in named})
            files = self._files("snapshot")
            retired = {path: at for path, at in sorted(retired.items()) if path in files and path not in named}
            self._write_json(MANIFEST, {"tables": dict(sorted(listed.items())), "retired": retired})
        except StageUnavailable:
            raise
        except (OSError, duckdb.IOException) as exc:
            raise self._unreachable(exc) from None

    # ---- the publisher (warehouse host) ---------------------------------------------------------------------------

    def publish_pending(self, wh: Warehouse, names: list[str] | None = None) -> int:
        """Commit the pending transactions `names` (a step's request; None: every pending one, oldest first) to `wh`
        in one transaction, then drop the entries: the number of entries committed. Under the writer lock, each entry
        is first claimed by creating decided/<e> exclusively, then copied from pending/<e> to publishing/<e>: a step
        that gives up on its request sets its entry aside by creating decided/<e> too, so exactly one of them wins and
        an entry is never both committed and in failed/. An entry found in publishing/, or decided for a claim and
        still in pending/ (a publisher killed after its claim), is taken as claimed. An
        entry already committed (listed in stage.publishes: a publisher killed after its commit, a request delivered
        twice) is not applied again; a staged write whose data version the scope already holds writes nothing. A
        requested entry the warehouse refuses fails the request (StagedWriteRejected, the entries set aside to
        failed/); without a request, a refused entry is set aside and the rest are published."""
        self.check()
        if names is not None and not names or names is None and not self._names("pending") + self._names(CLAIMED):
            return 0
        with wh.connect() as con:
            self.attach(con)
            con.execute(f"create table if not exists {PUBLISHES} (entry varchar, \"table\" varchar, "
                        f"version varchar, published_at timestamp)")
            done = {e for (e,) in con.execute(f"select distinct entry from {PUBLISHES}").fetchall()}
            listed = {folder: self._names(folder) for folder in ("pending", CLAIMED)}  # (`_waiting`, by folder)
            wanted = list(dict.fromkeys(listed["pending"] + listed[CLAIMED] if names is None else names))  # (an
            # entry in both folders: a publisher killed between its copy to publishing/ and the delete from pending/)
            claimed = self._claim([name for name in wanted if name not in done])
            entries = sorted((name, entry) for name in claimed if (entry := self._entry(CLAIMED, name)))
            gone = sorted(set(names or ()) - done - {name for name, _ in entries})
            if gone:
                aside = set(self._names("failed")) | {name for name in gone if self._fate(name) == SET_ASIDE}
                if set(gone) <= aside:
                    raise RuntimeError(f"staged entries {', '.join(gone)} of the stage {self.url} were set aside "
                                       f"(failed/) before this publish: not published")
                raise StageUnavailable(f"the stage {self.url} lost staged entries {', '.join(gone)}: neither pending "
                                       f"nor published within {KEEP_S // 86400} days (staged to a copy of this "
                                       f"folder, its STAGE marker copied too? removed by hand? or a request "
                                       f"delivered after stage.publishes forgot its entry)")
            todo = entries
            set_aside = set()
            try:
                self._commit_entries(wh, con, todo)
            except _Rejected as rejected:
                if names is not None:  # the step that asked fails; its entries never publish
                    for name, entry in todo:
                        self._set_aside(name, entry, rejected.__cause__, CLAIMED)
                    raise StagedWriteRejected(f"staged entries {', '.join(n for n, _ in todo)} not published to "
                                              f"{wh.path}: {_one_line(rejected.__cause__)}") from None
                for name, entry in todo:  # each in a transaction of its own, the bad ones aside
                    try:
                        self._commit_entries(wh, con, [(name, entry)])
                    except _Rejected as alone:
                        self._set_aside(name, entry, alone.__cause__, CLAIMED)
                        set_aside.add(name)
            con.execute("checkpoint")
            self.export_owed(wh, con)  # before the entries go: a stage-mode reader never misses their rows
            for name, _ in todo:
                if name not in set_aside:
                    with contextlib.suppress(FileNotFoundError):
                        self.fs.rm(self._full(f"{CLAIMED}/{name}"))
            for folder, found in listed.items():  # committed before (a publisher killed before it removed them)
                for name in set(found) & done:
                    with contextlib.suppress(FileNotFoundError):
                        self.fs.rm(self._full(f"{folder}/{name}"))
        return len(todo) - len(set_aside)

    def _claim(self, names: list[str]) -> list[str]:
        """Of `names`, those this publisher now holds in publishing/: decided for it (`_decide`: its claim came first,
        or that of a publisher killed after it; a step's set-aside that came first wins, and the entry is not taken)
        and copied there from pending/, or there already (claimed before, not set aside by retention since)."""
        there = set(self._names(CLAIMED))
        taken = []
        for name in names:
            if name in there:
                if self._fate(name) != SET_ASIDE:
                    with contextlib.suppress(FileNotFoundError):  # its claim's copy left there by a killed publisher
                        self.fs.rm(self._full(f"pending/{name}"))
                    taken.append(name)
                continue
            entry = self._entry("pending", name)
            if not entry or self._decide(name, TAKEN) != TAKEN:
                continue
            self._write_json(f"{CLAIMED}/{name}", entry)  # a new file: its age counts from the claim (`collect_garbage`)
            with contextlib.suppress(FileNotFoundError):
                self.fs.rm(self._full(f"pending/{name}"))
            taken.append(name)
        return taken

    def _decide(self, name: str, fate: str) -> str:
        """The fate of the entry `name`: `fate` when this call decided it, by creating decided/<name> first (an
        exclusive create: of the publisher's claim and a step's set-aside exactly one wins, in a folder as on an
        object store, whose move is a copy and a delete), else the fate decided before."""
        for _ in range(CREATE_TRIES):
            if self._create_exclusive(f"{DECIDED}/{name}", _decision(fate)):
                return fate
            decided = self._fate(name)
            if decided:
                return decided  # (None: its marker went meanwhile, by hand or by retention)
        raise StageUnavailable(f"the stage {self.url} cannot decide {DECIDED}/{name}: it exists and vanishes, "
                               f"{CREATE_TRIES} times")

    def _fate(self, name: str) -> str | None:
        """The fate decided for the entry `name` (TAKEN or SET_ASIDE), None while undecided."""
        try:
            decision = self._read_json(f"{DECIDED}/{name}")
        except FileNotFoundError:
            return None
        except ValueError:
            decision = None
        if not isinstance(decision, dict) or decision.get("fate") not in (TAKEN, SET_ASIDE):
            raise StageUnavailable(f"the stage {self.url} has an unreadable {DECIDED}/{name} (made by hand?)")
        return decision["fate"]

    def _commit_entries(self, wh: Warehouse, con: duckdb.DuckDBPyConnection, entries: list[tuple[str, dict]]) -> None:
        """Commit `entries` in one transaction, or none of them: StageUnavailable when the stage failed, _Rejected
        when the warehouse refused a write."""
        con.execute("begin transaction")
        try:
            for name, entry in entries:
                for write in entry["writes"]:
                    _commit(wh, con, self, write)
                    con.execute(f"insert into {PUBLISHES} values (?, ?, ?, now()::timestamp)",
                                [name, write["table"], write.get("data_version")])
            con.execute("commit")
        except Exception as exc:
            con.execute("rollback")
            if isinstance(exc, StageUnavailable):
                raise
            if isinstance(exc, (OSError, duckdb.IOException)):
                raise self._unreachable(exc) from None
            raise _Rejected() from exc

    def _set_aside(self, name: str, entry: dict, exc: BaseException | str | None, folder: str = "pending",
                   overrule: bool = False) -> None:
        """Set aside an entry that will not be published (refused by the warehouse, its publish failed, abandoned):
        its fate decided (`_decide`), it is copied from `folder` to failed/ with a one-line reason naming it and its
        runs next to it, and dropped from `folder`. FileNotFoundError when the publisher claimed it first (it is being
        committed), unless `overrule` or the entry is in publishing/: the writer lock's holder (the publisher that
        claimed it and saw it refused, retention once its publisher died) replaces the claim."""
        runs = sorted({w.get("run_id") or "?" for w in entry["writes"]})
        line = f"staged entry {name} (run {', '.join(runs)}) not published: {_one_line(exc)}"
        if overrule or folder == CLAIMED:
            self._put(f"{DECIDED}/{name}", _decision(SET_ASIDE))
        elif self._decide(name, SET_ASIDE) != SET_ASIDE:
            raise FileNotFoundError(f"{folder}/{name} was claimed by the publisher first")
        self._write_json(f"failed/{name}", entry)
        self._put(f"failed/{name}.error", (line + "\n").encode())
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._full(f"{folder}/{name}"))
        LOG.error(line)

    def export_owed(self, wh: Warehouse, con: duckdb.DuckDBPyConnection) -> None:
        """Export the tables written on `con` and every table an earlier export left owed (stage.unexported), then
        clear them; a failed export leaves them owed for the next exclusive connection."""
        owed = set(wh._touched) | {t for (t,) in con.execute(f'select distinct "table" from {UNEXPORTED}').fetchall()}
        if not owed:
            return
        self.export(con, owed)
        wh._touched.clear()
        con.execute(f"delete from {UNEXPORTED}")
        con.execute("checkpoint")
        global _collected_at
        if time.monotonic() - _collected_at > GC_EVERY_S:
            _collected_at = time.monotonic()
            waiting = self._waiting()
            committed = _best_effort(self, lambda: self._committed(wh, con, waiting)) or set()
            _best_effort(self, lambda: self.collect_garbage(committed=committed))
            _best_effort(self, lambda: self.forget_publishes(wh, con, waiting=waiting))

    def _waiting(self) -> list[str]:
        """The entries in pending/ and publishing/ (not yet committed, or committed and not yet dropped)."""
        return [*self._names("pending"), *self._names(CLAIMED)]

    @staticmethod
    def _committed(wh: Warehouse, con: duckdb.DuckDBPyConnection, names: list[str]) -> set[str]:
        """Those of `names` stage.publishes lists: committed."""
        if not wh._exists(con, PUBLISHES):
            return set()
        return {e for (e,) in con.execute(f"select distinct entry from {PUBLISHES} where list_contains(?::varchar[], "
                                          f"entry)", [names]).fetchall()}

    def collect_garbage(self, grace_s: float = GC_GRACE_S, keep_s: float = KEEP_S,
                        committed: Collection[str] = ()) -> list[str]:
        """Retention (on the warehouse host, under the warehouse lock, at most every GC_EVERY_S after an export): a
        snapshot file `grace_s` after the manifest stopped naming it (its "retired" time: a step in stage mode may
        still read the snapshot it bound), and a staged file no pending or failed entry names once it is `grace_s` old
        (written or reused: a step may stage a file whose entry it has not written yet), go; a pending entry that old
        was abandoned (its step failed before asking for its publish) and goes to failed/ with a one-line reason, one
        in publishing/ that long after its claim too (and one in pending/ its publisher claimed before it died); an
        entry `committed` (listed in stage.publishes: its publisher killed after the commit) is dropped instead, never
        set aside. An entry in failed/ goes with its reason `keep_s` (KEEP_S) after it was set aside, and then its
        staged files as any other unnamed file; a decided/ marker `keep_s` after it was written once no folder holds
        its entry. Ages are the files' modification times (`fs.modified`: an object's last PUT). The stage's paths
        removed, sorted (the staged and snapshot files only)."""
        old = time.time() - grace_s
        there = set(self._names(CLAIMED))
        for folder in ("pending", CLAIMED):
            for name in self._names(folder):
                if folder == "pending" and name in there:  # its claim's copy (a publisher killed before the delete)
                    with contextlib.suppress(FileNotFoundError):
                        self.fs.rm(self._full(f"pending/{name}"))
                    continue
                entry = self._entry(folder, name)
                if not entry or self._modified(f"{folder}/{name}") >= old:
                    continue
                with contextlib.suppress(FileNotFoundError):  # claimed or set aside meanwhile
                    if name in committed:
                        self.fs.rm(self._full(f"{folder}/{name}"))
                        continue
                    claimed = folder == CLAIMED or self._fate(name) == TAKEN  # its publisher died (we hold the lock)
                    reason = "its publisher died and none came" if claimed else "no publish asked for"
                    self._set_aside(name, entry, f"abandoned: {reason} within {grace_s:.0f} s", folder, overrule=claimed)
        for name in self._names("failed"):  # set aside when its reason was written (the entry may be older)
            aside = max(self._modified(f"failed/{name}"), self._modified(f"failed/{name}.error", missing=0.0))
            if aside < time.time() - keep_s:
                for relative in (f"failed/{name}.error", f"failed/{name}"):  # the reason first: a kill in between
                    with contextlib.suppress(FileNotFoundError):  # leaves the entry (taken next time), no lone reason
                        self.fs.rm(self._full(relative))
        held = {*self._names("pending"), *self._names(CLAIMED), *self._names("failed")}
        horizon = time.time() - keep_s
        for name in self._names(DECIDED):  # a decision outlives its entry by keep_s: a late set-aside still loses
            if name in held or _named_at(name) >= horizon:  # decided after its entry was named: young, no stat
                continue
            if self._modified(f"{DECIDED}/{name}") < horizon:
                with contextlib.suppress(FileNotFoundError):
                    self.fs.rm(self._full(f"{DECIDED}/{name}"))
        try:
            manifest = self._read_json(MANIFEST)
        except FileNotFoundError:
            return []
        retired = manifest.get("retired", {})
        named = {listed["path"] for listed in manifest["tables"].values()} | {
            write["path"] for folder in ("pending", CLAIMED, "failed") for name in self._names(folder)
            for write in self._entry(folder, name).get("writes", ()) if "path" in write}
        def aged(path: str) -> bool:
            return max(retired.get(path, 0.0), self._modified(path)) < old

        removed = []
        for path in sorted(path for path in self._files("snapshot") | self._files("tables")
                           if path != MANIFEST and path not in named and aged(path)):
            if aged(path):  # read again just before: a step may have reused it since the listing's ages were read
                with contextlib.suppress(FileNotFoundError):
                    self.fs.rm(self._full(path))
                removed.append(path)
        if self.native:  # the folders emptied (an object store has none)
            for folder in sorted({posixpath.dirname(self._full(p)) for p in removed}, reverse=True):
                while folder != self.root and not self.fs.ls(folder, detail=False):
                    self.fs.rmdir(folder)
                    folder = posixpath.dirname(folder)
        return removed

    def forget_publishes(self, wh: Warehouse, con: duckdb.DuckDBPyConnection, keep_s: float = KEEP_S,
                         waiting: list[str] | None = None) -> int:
        """Retention of stage.publishes (on the host's exclusive connection `con`): the records of entries committed
        more than `keep_s` ago go, unless the entry is still in pending/ or publishing/ (its record is what keeps a
        publish of it from applying it again). A request for a forgotten entry fails as "lost" instead of answering
        0: it would have to come `keep_s` late (a step waits WAIT_S, the broker redelivers within its visibility
        timeout). `waiting`: the entries in pending/ and publishing/ if listed already. The number of records
        removed."""
        if not wh._exists(con, PUBLISHES):
            return 0
        still = self._waiting() if waiting is None else waiting
        return con.execute(f"delete from {PUBLISHES} where published_at < now()::timestamp - to_seconds(?) "
                           f"and not list_contains(?::varchar[], entry)", [keep_s, still]).fetchall()[0][0]

    def _modified(self, relative: str, missing: float | None = None) -> float:
        """When the file was last written; `missing` (None: now) when it is not there."""
        try:
            return self.fs.modified(self._full(relative)).timestamp()
        except FileNotFoundError:
            return time.time() if missing is None else missing

    def _entry(self, folder: str, name: str) -> dict:
        try:
            return self._read_json(f"{folder}/{name}")
        except FileNotFoundError:
            return {}

    def rows(self, write: Mapping) -> str:
        """SQL relation of a staged write's rows, stamped with the run that staged them (the file may be an earlier
        run's: same data version, same rows)."""
        source = f"read_parquet('{self.sql_path(write['path'])}')"
        if write.get("run_id") is None:
            return source
        return (f"(select * replace ({_literal(write['run_id'])} as run_id, "
                f"cast({_literal(write['refreshed_at'])} as {write['refreshed_type']}) as refreshed_at) from {source})")


def _commit(wh: Warehouse, con: duckdb.DuckDBPyConnection, stage: Stage, write: Mapping) -> None:
    """Apply one staged write (or delete) inside the publisher's transaction, as the step would have in place."""
    table, where = write["table"], write["where"]
    if write["kind"] == "delete":
        if wh._exists(con, table):
            con.execute(f"delete from {table} where {_scope(where)}")
            wh.changed(con, table)
        return
    version = write.get("data_version")
    if version is not None and table not in RANGED_HISTORY and wh._exists(con, table) and [v for (v,) in con.execute(
            f"select distinct data_version from {table} where {_scope(where) if where else 'true'}").fetchall()] \
            == [version]:
        return  # re-publishing a version the warehouse holds: nothing to write
    con.execute(f"create or replace temp view staged_rows as select * from {stage.rows(write)}")
    wh.write_relation(con, table, "staged_rows", where, version if write["history"] else None)
    con.execute("drop view staged_rows")


# ---- stage mode ------------------------------------------------------------------------------------------------

# How a step in stage mode has the warehouse host commit what it staged: (stage url, entry names) -> entries committed,
# raising when they were not. pipelines.celery_app sets it on every worker (a task on the host's `duckdb` queue, waited
# for); unset, a stage-mode write fails (`require_publisher`); NO_PUBLISH (tests, by hand): entries stay pending until
# `Warehouse.publish_stage` on the host, and only the StagedWarehouse that staged them reads them meanwhile.
_publisher: Callable[[str, list[str]], int] | None = None


def NO_PUBLISH(url: str, names: list[str]) -> int:  # noqa: N802 - a constant: the publisher that leaves entries pending
    """The publisher that asks for nothing: entries stay pending until `publish_stage` on the host publishes them."""
    return 0


def set_publisher(publisher: Callable[[str, list[str]], int] | None) -> None:
    global _publisher
    _publisher = publisher


def require_publisher(stage: Stage) -> None:
    """RuntimeError (one line) unless this process can have the host publish a staged write: else the step would
    succeed and Dagster record data versions that never reach the warehouse (nothing else publishes a stage)."""
    if _publisher is None:
        raise RuntimeError(f"stage mode ({stage.url}) needs the warehouse host's publish task: run steps on workers "
                           f"started with -A pipelines.celery_app")


def request_publish(stage: Stage, name: str) -> bool:
    """Have the warehouse host commit the staged transaction `name` before the step goes on (so the data version the
    step reports to Dagster is in the warehouse when Dagster records it); its error fails the step. False when the
    entry stays pending (NO_PUBLISH)."""
    require_publisher(stage)
    if _publisher is NO_PUBLISH:
        return False
    try:
        _publisher(stage.url, [name])
    except BaseException as exc:  # the step fails: its entry must not stay in every stage-mode reader's overlay
        entry = stage._entry("pending", name)
        if entry:
            with contextlib.suppress(Exception):  # the stage itself may be what failed
                stage._set_aside(name, entry, f"its publish failed: {_one_line(exc) or type(exc).__name__}")
        raise
    return True


class _Rejected(Exception):
    """The warehouse refused a staged entry (its cause: why)."""


class StagedWarehouse(Warehouse):
    """The warehouse as a step on a host without it sees it (module docstring): reads from the stage's snapshot with
    this object's own entries still pending applied (NO_PUBLISH only: with a publisher each is committed before its
    write returns), writes staged. Never another step's pending entry: it may never be published (its step killed,
    its publish refused). Never opens, locks or creates a warehouse file."""

    def __init__(self, url: str):
        super().__init__(Path(tempfile.gettempdir()) / "compass-stage" / hashlib.sha256(url.encode()).hexdigest()[:12]
                         / "warehouse.duckdb")  # a path no file is ever made at (`Warehouse` needs one)
        self.stage = Stage(url)
        self._writes: list[dict] | None = None
        # the snapshot, read once (binding ~60 Parquet views costs enough per connection), again after each write this
        # object had published, and when one of its own pending entries (NO_PUBLISH) was published meanwhile
        self._snapshot: dict[str, str | None] | None = None
        self._own: list[tuple[str, dict]] = []

    def exists(self) -> bool:
        self.stage.check()
        return True

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._session is not None:
            if not read_only:
                raise RuntimeError(f"write to the stage {self.stage.url} inside Warehouse.reading()")
            yield self._session
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect()
        try:
            self.stage.attach(con)
            con.execute("attach ':memory:' as warehouse")
            con.execute("use warehouse")
            if self._own:  # listed before the snapshot is read: an entry published meanwhile is applied twice (the
                pending = {*self.stage._names("pending"), *self.stage._names(CLAIMED)}  # same rows), never missed
                if any(name not in pending for name, _ in self._own):
                    self._own, self._snapshot = [(n, e) for n, e in self._own if n in pending], None
            if self._snapshot is None:
                self._snapshot = self.stage.snapshot()
            _create_views(con, self.stage, self._own, self._snapshot)
            self._writes = []
            yield con
            _no_tables_in_place(con, self.stage)
            if self._writes:
                _check_applies(self.stage, self._own, self._snapshot, self._writes)
                self._staged(self.stage.add_pending(self._writes), self._writes)
        finally:
            self._writes = None
            con.close()

    def write_relation(self, con: duckdb.DuckDBPyConnection, table: str, relation: str,
                       where: Mapping[str, object] | None, history_version: str | None) -> None:
        """Stage the relation's rows as Parquet (named by their data version and scope) and note the write; the
        pending entry is written when the connection closes without an error (one entry per transaction)."""
        if self._writes is None:
            raise RuntimeError(f"write to {table} outside a connection of the stage {self.stage.url}")
        require_publisher(self.stage)
        columns = {name: kind for name, kind, *_ in con.execute(f"describe {relation}").fetchall()}
        data_version = history_version
        if data_version is None and "data_version" in columns:
            data_version = con.execute(f"select any_value(data_version) from {relation}").fetchall()[0][0]
        content = data_version or relation_version(con, relation)
        scope = hashlib.sha256(json.dumps(where or {}, sort_keys=True, default=str).encode()).hexdigest()[:16]
        path = f"tables/{table}/{content}/{scope}.parquet"
        write = {"kind": "write", "table": table, "where": dict(where) if where else None, "path": path,
                 "data_version": data_version, "history": history_version is not None}
        if {"run_id", "refreshed_at"} <= columns.keys():
            run_id, refreshed_at = con.execute(f"select any_value(run_id), any_value(refreshed_at)::varchar "
                                               f"from {relation}").fetchall()[0]
            if run_id is not None:
                write.update(run_id=run_id, refreshed_at=refreshed_at, refreshed_type=columns["refreshed_at"])
        try:
            self.stage.write_parquet(con, relation, path)
        except (OSError, duckdb.IOException) as exc:
            raise self.stage._unreachable(exc) from None
        self._writes.append(write)

    def delete_rows(self, tables: list[str], where: Mapping[str, object]) -> None:
        require_publisher(self.stage)
        self.stage.check()
        writes = [{"kind": "delete", "table": t, "where": dict(where)} for t in tables]
        self._staged(self.stage.add_pending(writes), writes)

    def _staged(self, name: str, writes: list[dict]) -> None:
        """After the entry `name` is written: the host commits it (read from the snapshot again), or it stays pending
        (NO_PUBLISH) and this object reads it over the snapshot."""
        if request_publish(self.stage, name):
            self._snapshot = None
        else:
            self._own.append((name, {"writes": writes}))

    def publish_replica(self) -> Path:
        raise RuntimeError(f"stage mode ({self.stage.url}): the replica is published on the warehouse host")


def _no_tables_in_place(con: duckdb.DuckDBPyConnection, stage: Stage) -> None:
    """RuntimeError when SQL on a stage-mode connection created a table (not `write_relation`): it would vanish."""
    made = [t for (t,) in con.execute("select table_schema || '.' || table_name from information_schema.tables "
                                       "where table_catalog = 'warehouse' and table_type = 'BASE TABLE'").fetchall()]
    if made:
        raise RuntimeError(f"stage mode ({stage.url}): {', '.join(sorted(made))} written by SQL, not staged; "
                           f"write through Warehouse.write_relation")


def _check_applies(stage: Stage, entries: list[tuple[str, dict]], snapshot: Mapping[str, str | None],
                   writes: list[dict]) -> None:
    """StagedWriteRejected unless every table `writes` touch reads whole over the snapshot with `entries` (the
    writer's own pending ones) and `writes` applied: every value is cast to its column's type here, as the publisher's commit would."""
    with contextlib.closing(duckdb.connect()) as con:
        stage.attach(con)
        con.execute("attach ':memory:' as warehouse")
        con.execute("use warehouse")
        _create_views(con, stage, [*entries, ("new", {"writes": writes})], snapshot)
        for table in sorted({w["table"] for w in writes if w["kind"] == "write"}):
            try:
                con.execute(f"select count(hash(columns(*))) from {table}").fetchall()
            except duckdb.IOException as exc:
                raise stage._unreachable(exc) from None
            except duckdb.Error as exc:
                reason = " ".join(str(exc).split())[:300]
                raise StagedWriteRejected(f"{table}: rows staged to {stage.url} do not fit the published table: "
                                          f"{reason}") from None


def _create_views(con: duckdb.DuckDBPyConnection, stage: Stage, entries: list[tuple[str, dict]],
                  snapshot: Mapping[str, str | None]) -> None:
    """Every published table as a view over the snapshot with `entries` (pending transactions) applied in order."""
    relations = {table: f"read_parquet('{path}')" if path is not None else _not_exported(stage, table)
                 for table, path in snapshot.items()}
    step = 0
    for _, entry in entries:
        for write in entry["writes"]:
            table, where, base = write["table"], write["where"], relations.get(write["table"])
            if write["kind"] == "delete":
                if base is not None:
                    relations[table] = f"(select * from {base} where not ({_scope(where)}))"
                continue
            incoming = stage.rows(write)
            if where is None or base is None:
                relations[table] = incoming
                continue
            step += 1  # materialize the two sides' columns once: the merge casts the incoming rows to the table's
            con.execute(f"create temp view stage_base_{step} as select * from {base}")
            con.execute(f"create temp view stage_incoming_{step} as select * from {incoming}")
            relations[table] = _replaced(con, f"stage_base_{step}", f"stage_incoming_{step}", where)
    for table, relation in relations.items():
        schema = table.split(".")[0]
        con.execute(f"create schema if not exists {schema}")
        con.execute(f"create view {table} as select * from {relation}")


def _not_exported(stage: Stage, table: str) -> str:
    """SQL relation that fails, naming `table`, when read: a table the manifest lists without a file."""
    reason = f"{table} is in the warehouse but not exported to the stage {stage.url} (history stays there)"
    return f"(select error({_literal(reason)}) as not_exported)"


def _replaced(con: duckdb.DuckDBPyConnection, base: str, incoming: str, where: Mapping[str, object]) -> str:
    """SQL of `base` with the rows selected by `where` replaced by `incoming`, as `Warehouse._insert_own_rows` does:
    the incoming rows cast to the table's column types, its new columns added (null in the other rows)."""
    have = {n: t for n, t, *_ in con.execute(f"describe {base}").fetchall()}
    new = {n: t for n, t, *_ in con.execute(f"describe {incoming}").fetchall()}
    added = [n for n in new if n not in have]
    kept = ", ".join([f'"{n}"' for n in have] + [f'null::{_type(new[n])} as "{n}"' for n in added])
    moved = ", ".join([f'cast("{n}" as {t}) as "{n}"' if n in new else f'null::{t} as "{n}"' for n, t in have.items()]
                      + [f'"{n}"' for n in added])
    return (f"(select {kept} from {base} where not ({_scope(where)}) "
            f"union all select {moved} from {incoming})")


def _type(kind: str) -> str:
    return "varchar" if kind == "NULL" else kind


def _scope(where: Mapping[str, object] | None) -> str:
    """SQL condition: the row is one of the rows selected by `where` (equality; a null never matches, as in the
    warehouse's `delete ... where`)."""
    if not where:
        return "true"
    return "coalesce(" + " and ".join(f'"{k}" = {_literal(v)}' for k, v in where.items()) + ", false)"


def _all_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every table and view of the warehouse open on `con`, as schema.table."""
    return [t for (t,) in con.execute("select table_schema || '.' || table_name from information_schema.tables "
                                      "where table_catalog = current_database()").fetchall()]


def _decision(fate: str) -> bytes:
    """The content of a decided/ marker: the fate, when and by whom, and a token of this decision (so that the
    decider that reads it back after an error knows it is its own: `Stage._create_exclusive`)."""
    return json.dumps({"fate": fate, "at": time.time(), "by": f"{socket.gethostname()}:{os.getpid()}",
                       "token": uuid.uuid4().hex}).encode()


def _named_at(name: str) -> float:
    """When the entry `name` was named (`add_pending`: its first part is time.time_ns()); 0 for another name."""
    stamp = name.split("-", 1)[0]
    return int(stamp) / 1e9 if stamp.isdigit() else 0.0


def _protocols(fs: fsspec.AbstractFileSystem | type) -> tuple[str, ...]:
    return (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)


def _without_exclusive_create(url: str) -> str | None:
    """Why the filesystem of `url` cannot hold a stage, or None: it must create a file exclusively (`Stage._decide`),
    which a folder and fsspec's memory:// do, and the object stores of EXCLUSIVE_CREATE with their driver's release
    that does."""
    protocol = fsspec.core.split_protocol(url)[0] or "file"
    if protocol in EXCLUSIVE_CREATE:
        package, first = EXCLUSIVE_CREATE[protocol]
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return f"{protocol}:// needs {package} >= {first} (not installed)"
        if _release(version) < _release(first):
            return f"{protocol}:// needs {package} >= {first} for an exclusive create, not {version}"
        return None
    try:
        kind = fsspec.get_filesystem_class(protocol)
    except (ImportError, ValueError):
        kind = None
    if kind is not None and issubclass(kind, (LocalFileSystem, MemoryFileSystem)):
        return None
    return (f"{protocol}:// cannot create a file exclusively (an entry's fate is decided by whoever creates "
            f"{DECIDED}/<entry> first): a stage is a folder (local or NFS), s3:// (s3fs >= 2025.7), gs:// (gcsfs) "
            f"or az:// (adlfs)")


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def _best_effort(stage: Stage, step: Callable[[], object]) -> object:
    """`step()` of the retention after a write (committed and exported already): any error is one warning naming the
    stage, and the write succeeds; None then."""
    try:
        return step()
    except Exception as exc:  # noqa: BLE001 - any driver's or file's error
        LOG.warning("retention of the stage %s skipped: %s", stage.url, _one_line(exc) or type(exc).__name__)
        return None


def _one_line(exc: BaseException | None) -> str:
    return " ".join(str(exc).split())[:300]


def _literal(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"

