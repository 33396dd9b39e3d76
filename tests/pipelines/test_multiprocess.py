"""The multiprocess executor with 4 workers: no DuckDB lock error, same tables as an in-process run."""

import shutil
from pathlib import Path

import dagster as dg
import pandas as pd

from tests.paths import FIXTURES, ROOT
from tests.pipelines.helpers import run_refresh, snapshot

FIXTURE = FIXTURES / "compass_small"
VOLATILE = ["run_id", "refreshed_at"]  # differ between any two runs by construction


def materialize(root: Path, multiprocess: bool, monkeypatch) -> dict:
    home = root / "home"
    home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", home)
    for k, v in {"DAGSTER_HOME": home, "COMPASS_DB": root / "c.duckdb", "COMPASS_CONFIG": FIXTURE / "config.yaml",
                 "COMPASS_CASES": FIXTURE / "cases", "COMPASS_SCENARIOS": FIXTURE / "scenarios"}.items():
        monkeypatch.setenv(k, str(v))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        report = run_refresh(instance, multiprocess=multiprocess)
    assert not report.failed, report.failed
    return {t: f.drop(columns=[c for c in VOLATILE if c in f.columns]) for t, f in snapshot(root / "c.duckdb").items()}


def test_multiprocess_matches_in_process(tmp_path, monkeypatch):
    serial = materialize(tmp_path / "serial", False, monkeypatch)
    parallel = materialize(tmp_path / "parallel", True, monkeypatch)
    assert serial.keys() == parallel.keys()
    assert "compass.leaderboards" in serial and len(serial["compass.leaderboards"]) > 0
    for table in serial:
        if table.startswith("history."):
            continue  # history rows are the same versions; their stamps differ
        a = serial[table].sort_values(list(serial[table].columns)).reset_index(drop=True)
        b = parallel[table].sort_values(list(parallel[table].columns)).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9, obj=table)
