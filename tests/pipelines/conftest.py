"""A throw-away Dagster instance + warehouse per test, fed by a small real-data config."""

import shutil

import dagster as dg
import pytest

from tests.paths import FIXTURES, ROOT

TINY_CONFIG = FIXTURES / "tiny" / "config.yaml"


@pytest.fixture
def pipeline_env(tmp_path, monkeypatch):
    """Yields (instance, warehouse path); COMPASS_CONFIG defaults to the tiny fixture."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    db = tmp_path / "warehouse.duckdb"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("COMPASS_DB", str(db))
    monkeypatch.setenv("COMPASS_CONFIG", str(TINY_CONFIG))
    (tmp_path / "no_cases").mkdir()
    monkeypatch.setenv("COMPASS_CASES", str(tmp_path / "no_cases"))  # the shipped cases need the full data
    monkeypatch.chdir(tmp_path)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        yield instance, db
