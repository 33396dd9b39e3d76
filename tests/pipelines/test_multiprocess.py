"""The multiprocess executor with 4 workers: no DuckDB lock error, same tables as an in-process run."""

import shutil
from pathlib import Path

import dagster as dg
import pandas as pd

from tests.paths import FIXTURES, ROOT
from tests.pipelines.conftest import compass_small_env
from tests.pipelines.helpers import run_refresh, snapshot

FIXTURE = FIXTURES / "compass_small"
VOLATILE = ["run_id", "refreshed_at"]  # differ between any two runs by construction


def content(db: Path) -> dict:
    return {t: f.drop(columns=[c for c in VOLATILE if c in f.columns]) for t, f in snapshot(db).items()}


def test_multiprocess_matches_in_process(tmp_path, monkeypatch, compass_small_baseline):
    baseline, first = compass_small_baseline
    assert not first.failed, first.failed
    serial = content(baseline / "warehouse.duckdb")
    root = tmp_path / "parallel"
    (root / "home").mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", root / "home")
    shutil.copytree(FIXTURE, root / "data")
    for k, v in compass_small_env(root).items():
        monkeypatch.setenv(k, v)
    with dg.DagsterInstance.from_config(str(root / "home")) as instance:
        report = run_refresh(instance, multiprocess=True)
    assert not report.failed, report.failed
    parallel = content(root / "warehouse.duckdb")
    assert serial.keys() == parallel.keys()
    assert "compass.leaderboards" in serial and len(serial["compass.leaderboards"]) > 0
    for table in serial:
        if table.startswith("history."):
            continue  # history rows are the same versions; their stamps differ
        a = serial[table].sort_values(list(serial[table].columns)).reset_index(drop=True)
        b = parallel[table].sort_values(list(parallel[table].columns)).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9, obj=table)
