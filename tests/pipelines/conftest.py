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


COMPASS_SMALL = FIXTURES / "compass_small"


def compass_small_env(root) -> dict[str, str]:
    """Environment of a compass_small folder (data/, home/, warehouse.duckdb under `root`)."""
    data = root / "data"
    return {"DAGSTER_HOME": str(root / "home"), "COMPASS_DB": str(root / "warehouse.duckdb"),
            "COMPASS_CONFIG": str(data / "config.yaml"), "COMPASS_CASES": str(data / "cases"),
            "COMPASS_SCENARIOS": str(data / "scenarios")}


@pytest.fixture(scope="session")
def compass_small_baseline(tmp_path_factory):
    """compass_small refreshed once in process, shared read-only by the modules that start from it (copy it
    before changing anything). Yields (folder, RefreshReport)."""
    from tests.pipelines.helpers import run_refresh

    root = tmp_path_factory.mktemp("compass_small")
    shutil.copytree(COMPASS_SMALL, root / "data")
    (root / "home").mkdir()
    shutil.copy(ROOT / "dagster.yaml", root / "home")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in compass_small_env(root).items():
            mp.setenv(k, v)
        with dg.DagsterInstance.from_config(str(root / "home")) as instance:
            report = run_refresh(instance)
    yield root, report
