"""Warehouse.replace_many: several tables in one transaction (publish_assets writes a step's tables with it)."""

import pandas as pd
import pytest

from resources.warehouse import Warehouse


def _rows(version: str, x: int) -> pd.DataFrame:
    return pd.DataFrame({"case_id": ["a"], "x": [x], "data_version": [version]})


def test_tables_land_together_and_a_republished_version_adds_no_history(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace_many([("s.t", _rows("v1", 1), {"case_id": "a"}, "v1")])
    wh.replace_many([("s.t", _rows("v1", 1), {"case_id": "a"}, "v1"), ("s.u", _rows("v1", 1), {"case_id": "a"}, "v1")])
    assert len(wh.read("history.s_t")) == 1 and len(wh.read("s.u")) == 1
    assert wh.holds_version("s.t", {"case_id": "a"}, "v1") and not wh.holds_version("s.t", {"case_id": "a"}, "v2")


def test_a_failing_table_leaves_every_table_as_it_was(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace_many([("s.t", _rows("v1", 1), {"case_id": "a"}, "v1")])
    bad = pd.DataFrame({"case_id": ["a"], "y": [2]})  # no data_version: its history lookup fails
    with pytest.raises(Exception, match="data_version"):
        wh.replace_many([("s.t", _rows("v2", 2), {"case_id": "a"}, "v2"), ("s.v", bad, {"case_id": "a"}, "v2")])
    assert wh.read("s.t")["x"].tolist() == [1] and not wh.table_exists("s.v")
    assert wh.read("history.s_t")["data_version"].tolist() == ["v1"]


def _write_partitions(db: str, case: str, n: int) -> None:
    wh = Warehouse(db)
    for i in range(n):
        wh.replace_many([("s.t", _rows(f"v{i}", i).assign(case_id=case), {"case_id": case}, f"v{i}")])


def test_concurrent_writers_hold_the_lock_one_at_a_time_and_log_it(tmp_path, monkeypatch):
    """Three processes publishing at once: COMPASS_WRITE_LOG records each exclusive hold, and no two overlap (the
    evidence the deploy check's stack test reads). Red when writers take the lock shared (LOCK_SH in
    Warehouse.connect): DuckDB's own lock then makes them wait inside each other's holds."""
    import multiprocessing

    from resources.warehouse import overlapping_holds, write_holds

    log = tmp_path / "writes.log"
    monkeypatch.setenv("COMPASS_WRITE_LOG", str(log))
    db = str(tmp_path / "w.duckdb")
    Warehouse(db).replace("s.t", _rows("v0", 0), {"case_id": "a"})  # the file exists: readers get shared locks
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_write_partitions, args=(db, case, 4)) for case in "bcd"]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
    assert [w.exitcode for w in writers] == [0, 0, 0]
    holds = write_holds(log)
    assert len(holds) == 1 + 3 * 4 and len({pid for _, _, pid in holds}) == 4
    assert overlapping_holds(holds) == []
    assert sorted(Warehouse(db).read("s.t")["case_id"]) == list("abcd")


def test_overlapping_holds_names_the_overlap():
    from resources.warehouse import overlapping_holds

    assert overlapping_holds([(0.0, 2.0, 1), (2.0, 3.0, 2)]) == []
    assert overlapping_holds([(0.0, 2.0, 1), (1.0, 1.5, 2), (1.8, 3.0, 3)]) == [
        "pid 2 entered at 1.000 while pid 1 held it until 2.000", "pid 3 entered at 1.800 while pid 1 held it until 2.000"]
