"""Warehouse connections reuse this process's in-memory DuckDB databases (resources.warehouse `_database`, `_release`):
a reused one must hold nothing of the file between blocks (another process writes it in between and is read), carry no
state of an earlier block (a setting, a temporary table, an unfinished transaction), and never cross a fork."""

import multiprocessing
import subprocess
import sys

import duckdb
import pandas as pd
import pytest

from resources import warehouse
from resources.warehouse import Warehouse


@pytest.fixture
def wh(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("s.t", pd.DataFrame({"x": [1]}))
    warehouse._close_idle()
    return wh


def _database_of(wh: Warehouse):
    with wh.connect(read_only=True) as con:
        return con


def test_a_reused_database_lets_go_of_the_file_and_reads_another_process_s_write(wh):
    first = _database_of(wh)
    # read-write from another process while this one keeps the database: red when `_release` keeps the file attached
    # (DuckDB's own lock refuses the writer)
    _write_from_another_process(wh)
    with wh.connect(read_only=True) as con:
        assert con is first
        assert con.execute("select x from s.t").fetchall() == [(2,)]


# (what a block leaves on its database, a query showing it in the next block: as on a new database unless reused)
_LEFT_STATE = {
    "setting": ("set memory_limit = '123MB'", "select current_setting('memory_limit')"),
    "threads": ("set threads = 1", "select current_setting('threads')"),
    "time zone": ("set TimeZone = 'Asia/Tokyo'", "select current_setting('TimeZone')"),
    "pragma": ("pragma default_null_order = 'nulls_first'", "select current_setting('default_null_order')"),
    "variable": ("set variable v = 1", "select getvariable('v')"),
    "prepared": ("prepare p as select 1", "select count(*) from duckdb_prepared_statements()"),
    "temp table": ("create temp table leftover as select 1 as x", "select count(*) from duckdb_tables() where temporary"),
    "temp sequence": ("create temp sequence q", "select count(*) from duckdb_sequences() where temporary"),
    "other file": ("attach '{other}' as other", "select count(*) from duckdb_databases() where database_name = 'other'"),
}


@pytest.mark.parametrize("left", _LEFT_STATE)
def test_a_database_an_earlier_block_changed_is_not_reused(wh, tmp_path, left):
    """Red when `_release` keeps a database without looking at its state (the settings, variables, prepared statements,
    temporary objects, attached files; 7 of these 9 passed the earlier check of three
    named settings and temporary tables and views)."""
    change, witness = _LEFT_STATE[left]
    with wh.connect(read_only=True) as con:
        changed = con
        con.execute(change.format(other=tmp_path / "other.duckdb"))
    with wh.connect(read_only=True) as con:
        assert con is not changed
        assert con.execute(witness).fetchall() == duckdb.connect().execute(witness).fetchall()


def test_a_registered_filesystem_does_not_stay_for_the_next_publish(wh):
    """`Stage.attach` registers a non-local stage's filesystem on the connection; registering it again on a reused
    database failed 'Filesystem with name memory has already been registered'."""
    fsspec = pytest.importorskip("fsspec")
    for _ in range(2):
        with wh.connect() as con:
            con.register_filesystem(fsspec.filesystem("memory"))


def test_a_cursor_left_in_a_transaction_does_not_keep_the_file(wh):
    """A cursor with an open transaction keeps DuckDB's own file lock while its database is kept: red without the
    connection count in `_STATE_SQL` (another process's writer is refused)."""
    with wh.connect(read_only=True) as con:
        cursor = con.cursor()
        cursor.execute("begin")
        cursor.execute("select count(*) from warehouse.s.t").fetchall()
    _write_from_another_process(wh)


def _write_from_another_process(wh):
    subprocess.run([sys.executable, "-c", "import duckdb, sys; con = duckdb.connect(sys.argv[1]); "
                    "con.execute('update s.t set x = 2'); con.close()", str(wh.path)], check=True, timeout=60)


def test_a_failed_block_s_database_is_closed_even_when_it_looks_as_made(wh):
    """A block that raised after a plain read leaves nothing `_STATE_SQL` sees: red when `_release` is told the block
    ended (`_release(con, made_at, True)`)."""
    with pytest.raises(RuntimeError), wh.connect(read_only=True) as con:
        failed = con
        con.execute("select * from s.t").fetchall()
        raise RuntimeError("the step fails")
    with wh.connect(read_only=True) as con:
        assert con is not failed


def test_an_unfinished_write_is_rolled_back(wh):
    with pytest.raises(RuntimeError), wh.connect() as con:
        con.execute("begin transaction")
        con.execute("insert into s.t values (3)")
        raise RuntimeError("the step fails")
    with wh.connect() as con:
        con.execute("insert into s.t values (4)")
    assert sorted(wh.read("s.t")["x"]) == [1, 4]


def test_a_database_is_not_kept_once_the_process_grew(wh, monkeypatch):
    """DuckDB's allocator keeps what a block freed until its database closes (hundreds of MB after a large read): red
    when `_release` ignores the growth of resident memory since the database was made."""
    monkeypatch.setattr(warehouse, "_RSS_GROWTH_KEPT", 8 << 20)
    with wh.connect(read_only=True) as con:
        grown = con
        con.execute("select count(distinct i::varchar) from range(1000000) r(i)").fetchall()
    assert not warehouse._IDLE
    with wh.connect(read_only=True) as con:
        assert con is not grown


def test_at_most_one_database_is_kept(wh):
    with wh.connect(read_only=True), wh.connect(read_only=True):
        pass
    assert len(warehouse._IDLE) == 1


def test_an_interrupt_during_the_release_still_lets_go_of_the_hold(wh, monkeypatch, tmp_path):
    """Ctrl-C in the detach's checkpoint (a RuntimeError 'Query interrupted' or KeyboardInterrupt): red when the hold
    count and the write log are not in a `finally` around `_release` (publish_stage then returned 0 for good)."""
    log = tmp_path / "writes.log"
    monkeypatch.setenv("COMPASS_WRITE_LOG", str(log))

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), wh.connect() as con:
        monkeypatch.setattr(warehouse, "_resident_bytes", interrupted)  # read in `_release` after the detach
    assert not any(warehouse._HELD.values())
    assert len(warehouse.write_holds(log)) == 1
    with pytest.raises(duckdb.ConnectionException):
        con.execute("select 1")


def _child_reads(db, out) -> None:
    out.put((len(warehouse._IDLE), Warehouse(db).read("s.t")["x"].tolist()))


def test_a_forked_child_starts_without_its_parent_s_databases(wh):
    """The fork hook (`os.register_at_fork(before=_close_idle)`) ran: the child has no idle database of its parent's
    and opens its own (red without the hook). What a child would meet in an inherited database is not tested here."""
    _database_of(wh)
    assert warehouse._IDLE
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_child_reads, args=(wh.path, out))
    child.start()
    idle, rows = out.get(timeout=60)
    child.join(timeout=60)
    assert (idle, rows, child.exitcode) == (0, [1], 0)
