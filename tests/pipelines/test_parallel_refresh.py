"""Issue 33: a tick's runs side by side (`compass run --jobs N`) give the serial refresh's answer.

The session's compass_small baseline is refreshed with the default job count (one worker per core): its runs
overlapped in time. A serial cold refresh (`jobs=1`) of the same inputs must publish every table with the same
data versions. Breaking the warehouse's write serialization (writers under the shared lock, no retry) makes the
parallel baseline's overlapping writes fail, and this test red.
"""

import shutil

import dagster as dg
import pytest

from pipelines.cli import main
from pipelines.definitions import defs
from pipelines.refresh import refresh
from pipelines.run_pool import default_jobs
from resources.warehouse import Warehouse
from tests.paths import FIXTURES, ROOT
from tests.pipelines.conftest import compass_small_env
from tests.pipelines.helpers import SOURCE_KEYS


def published_versions(db) -> dict[str, list[str]]:
    """Every table of the warehouse -> its distinct published data versions (None: a table without them)."""
    wh = Warehouse(db)
    tables = wh.query("select table_schema || '.' || table_name as t from information_schema.tables "
                      "where table_catalog = 'warehouse' order by 1")["t"]
    with wh.reading():
        return {table: wh.data_versions(table) for table in tables}


def overlapping_runs(instance: dg.DagsterInstance) -> int:
    """How many pairs of the instance's runs were executing at the same time."""
    spans = sorted((r.start_time, r.end_time) for r in instance.get_run_records() if r.start_time and r.end_time)
    return sum(1 for i, (_, end) in enumerate(spans) for start, _ in spans[i + 1:] if start < end)


@pytest.mark.skipif(default_jobs() < 2, reason="one core: the default refresh is the serial one")
def test_parallel_cold_run_publishes_every_table_with_the_serial_data_versions(
        compass_small_baseline, tmp_path, monkeypatch):
    baseline, parallel_report = compass_small_baseline
    with dg.DagsterInstance.from_config(str(baseline / "home")) as instance:
        assert overlapping_runs(instance) > 0  # the baseline did run side by side
    root = tmp_path / "serial"
    (root / "home").mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", root / "home")
    shutil.copytree(FIXTURES / "compass_small", root / "data")
    for name, value in compass_small_env(root).items():
        monkeypatch.setenv(name, value)
    with dg.DagsterInstance.from_config(str(root / "home")) as instance:
        serial_report = refresh(defs, instance, SOURCE_KEYS, jobs=1)
        assert overlapping_runs(instance) == 0
    serial, parallel = published_versions(root / "warehouse.duckdb"), published_versions(baseline / "warehouse.duckdb")
    assert "compass.leaderboards" in serial and serial["compass.leaderboards"]
    assert serial.keys() == parallel.keys()
    for table in serial:
        assert serial[table] == parallel[table], table
    assert not serial_report.failed and not parallel_report.failed, parallel_report.errors
    assert sorted(serial_report.materialized) == sorted(parallel_report.materialized)


def test_jobs_must_be_a_whole_number_of_at_least_one(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--jobs", "0"])
    assert exit_.value.code == 2
    assert "argument -j/--jobs: must be a whole number >= 1, got '0'" in capsys.readouterr().err
