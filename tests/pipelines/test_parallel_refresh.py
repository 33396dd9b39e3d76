"""Issue 33: a tick's runs side by side (`compass run --jobs N`) give the serial refresh's answer; and the multiprocess
executor (`compass run --multiprocess`: each step in a process of its own, 4 at once) gives the in-process one's.

The session's compass_small baseline is refreshed with the default job count (one worker per core) and the
in-process executor: its runs overlapped in time. One serial cold refresh (`jobs=1`, one run at a time) of the same
inputs with the multiprocess executor must publish every table with the same data versions and the same rows
(no DuckDB lock error). One refresh serves both comparisons (a serial in-process refresh cost another ~30 s).
Breaking the warehouse's write serialization (writers under the shared lock, no retry) makes the parallel
baseline's overlapping writes fail, and the first test red.
"""

import shutil
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.definitions import defs
from pipelines.refresh import refresh
from pipelines.run_pool import default_jobs
from resources.warehouse import Warehouse
from tests.paths import FIXTURES, ROOT
from tests.pipelines.conftest import compass_small_env
from tests.pipelines.helpers import SOURCE_KEYS, snapshot

VOLATILE = ["run_id", "refreshed_at"]  # differ between any two runs by construction


def published_versions(db) -> dict[str, list[str]]:
    """Every table of the warehouse -> its distinct published data versions (None: a table without them)."""
    wh = Warehouse(db)
    tables = wh.query("select table_schema || '.' || table_name as t from information_schema.tables "
                      "where table_catalog = 'warehouse' order by 1")["t"]
    with wh.reading():
        return {table: wh.data_versions(table) for table in tables}


def content(db: Path) -> dict:
    return {t: f.drop(columns=[c for c in VOLATILE if c in f.columns]) for t, f in snapshot(db).items()}


def overlapping_runs(instance: dg.DagsterInstance) -> int:
    """How many pairs of the instance's runs were executing at the same time."""
    spans = sorted((r.start_time, r.end_time) for r in instance.get_run_records() if r.start_time and r.end_time)
    return sum(1 for i, (_, end) in enumerate(spans) for start, _ in spans[i + 1:] if start < end)


@pytest.fixture(scope="module")
def serial_multiprocess(tmp_path_factory):
    """A serial cold refresh of compass_small with the multiprocess executor: (warehouse, report, how many pairs of
    its runs overlapped)."""
    root = tmp_path_factory.mktemp("serial")
    (root / "home").mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", root / "home")
    shutil.copytree(FIXTURES / "compass_small", root / "data")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in compass_small_env(root).items():
            mp.setenv(name, value)
        with dg.DagsterInstance.from_config(str(root / "home")) as instance:
            report = refresh(defs, instance, SOURCE_KEYS, multiprocess=True, jobs=1)
            overlaps = overlapping_runs(instance)
    return root / "warehouse.duckdb", report, overlaps


@pytest.mark.skipif(default_jobs() < 2, reason="one core: the default refresh is the serial one")
def test_parallel_cold_run_publishes_every_table_with_the_serial_data_versions(compass_small_baseline,
                                                                               serial_multiprocess):
    baseline, parallel_report = compass_small_baseline
    with dg.DagsterInstance.from_config(str(baseline / "home")) as instance:
        assert overlapping_runs(instance) > 0  # the baseline did run side by side
    db, serial_report, overlaps = serial_multiprocess
    assert overlaps == 0
    serial, parallel = published_versions(db), published_versions(baseline / "warehouse.duckdb")
    assert "compass.leaderboards" in serial and serial["compass.leaderboards"]
    assert serial.keys() == parallel.keys()
    for table in serial:
        assert serial[table] == parallel[table], table
    assert not serial_report.failed and not parallel_report.failed, parallel_report.errors
    assert sorted(serial_report.materialized) == sorted(parallel_report.materialized)


def test_multiprocess_matches_in_process(compass_small_baseline, serial_multiprocess):
    baseline, first = compass_small_baseline
    assert not first.failed, first.failed
    db, report, _ = serial_multiprocess
    assert not report.failed, report.failed
    serial, multiprocess = content(baseline / "warehouse.duckdb"), content(db)
    assert serial.keys() == multiprocess.keys()
    assert "compass.leaderboards" in serial and len(serial["compass.leaderboards"]) > 0
    for table in serial:
        if table.startswith("history."):
            continue  # history rows are the same versions; their stamps differ
        a = serial[table].sort_values(list(serial[table].columns)).reset_index(drop=True)
        b = multiprocess[table].sort_values(list(multiprocess[table].columns)).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9, obj=table)


def test_jobs_must_be_a_whole_number_of_at_least_one(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--jobs", "0"])
    assert exit_.value.code == 2
    assert "argument -j/--jobs: must be a whole number >= 1, got '0'" in capsys.readouterr().err
