"""Warehouse connections reuse this process's in-memory DuckDB databases (resources.warehouse `_database`, `_release`):
a reused one must hold nothing of the file between blocks (another process writes it in between and is read), carry no
state of an earlier block (a setting, a temporary table, an unfinished transaction), and never cross a fork."""

import multiprocessing
import re
import subprocess
import sys

import duckdb
import pandas as pd
import pytest

from resources import warehouse
from resources.warehouse import Warehouse
from tests.paths import ROOT


@pytest.fixture
def wh(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("s.t", pd.DataFrame({"x": [1]}))
    return wh


def _database_of(wh: Warehouse):
    with wh.connect(read_only=True) as con:
        return con


def test_a_reused_database_lets_go_of_the_file_and_reads_another_process_s_write(wh):
    first = _database_of(wh)
    # read-write from another process while this one keeps the database: red when `_release` keeps the file attached
    # (DuckDB's own lock refuses the writer)
    subprocess.run([sys.executable, "-c", "import duckdb, sys; con = duckdb.connect(sys.argv[1]); "
                    "con.execute('update s.t set x = 2'); con.close()", str(wh.path)], check=True, timeout=60)
    with wh.connect(read_only=True) as con:
        assert con is first
        assert con.execute("select x from s.t").fetchall() == [(2,)]


@pytest.mark.parametrize("change", ["set memory_limit = '123MB'", "set preserve_insertion_order = false",
                                    "create temp table leftover as select 1 as x"])
def test_a_database_an_earlier_block_changed_is_not_reused(wh, change):
    """Red when `_release` keeps a database without checking it is as it was made."""
    with wh.connect(read_only=True) as con:
        changed = con
        con.execute(change)
    state = ("select current_setting('memory_limit'), current_setting('preserve_insertion_order'), "
             "(select count(*) from duckdb_tables() where temporary)")
    with wh.connect(read_only=True) as con:
        assert con is not changed
        assert con.execute(state).fetchone() == duckdb.connect().execute(state).fetchone()


def test_an_unfinished_write_is_rolled_back_not_carried_into_the_next_block(wh):
    with pytest.raises(RuntimeError), wh.connect() as con:
        failed = con
        con.execute("begin transaction")
        con.execute("insert into s.t values (3)")
        raise RuntimeError("the step fails")
    with wh.connect() as con:
        assert con is not failed
        con.execute("insert into s.t values (4)")
    assert sorted(wh.read("s.t")["x"]) == [1, 4]


def _child_reads(db, out) -> None:
    out.put((len(warehouse._IDLE), Warehouse(db).read("s.t")["x"].tolist()))


def test_a_forked_child_starts_without_its_parent_s_databases(wh):
    """Red without the fork hook (`os.register_at_fork(before=_close_idle)`): the child would pop its parent's
    database, whose DuckDB threads it does not have."""
    _database_of(wh)
    assert warehouse._IDLE
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_child_reads, args=(wh.path, out))
    child.start()
    idle, rows = out.get(timeout=60)
    child.join(timeout=60)
    assert (idle, rows, child.exitcode) == (0, [1], 0)


def test_every_setting_the_code_changes_on_a_connection_is_checked_before_reuse():
    """A `set <name>` anywhere in the application that `_release` does not check would leak into the next block."""
    pattern = re.compile(r"""execute\(f?["']set (\w+)""", re.IGNORECASE)
    found = {name.lower() for folder in ("assets", "resources", "pipelines")
             for path in (ROOT / folder).rglob("*.py") for name in pattern.findall(path.read_text())}
    assert found and found <= set(warehouse._SETTINGS_CHANGED_HERE), found - set(warehouse._SETTINGS_CHANGED_HERE)
