"""A throw-away Dagster instance + warehouse fed by the oracle fixture (real rows cut from data/)."""

import shutil
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from pipelines.definitions import defs
from pipelines.partitions import current_datasets, sync_dynamic_partitions
from pipelines.refresh import run_selection
from resources.warehouse import Warehouse

ROOT = Path(__file__).parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "oracle"
CONFIG = FIXTURE / "config.yaml"
KEYS = defs.resolve_asset_graph().materializable_asset_keys
RAW_KEYS = sorted(k for k in KEYS if k.path[0] == "raw")
ORACLE_KEYS = sorted(k for k in KEYS if k.path[0] == "oracle" and k.path[1] != "synthetic_validation")


def materialize_oracle(instance: dg.DagsterInstance, datasets: list[str] | None = None) -> list[str]:
    """Raw sources, then the oracle branch for each dataset partition (other groups are not run)."""
    run_selection(defs, instance, RAW_KEYS, None, False)
    sync_dynamic_partitions(instance)
    chosen = datasets or current_datasets(Warehouse(instance_db()))
    for dataset in chosen:
        run_selection(defs, instance, ORACLE_KEYS, dataset, False)
    return chosen


def instance_db() -> str:
    import os

    return os.environ["COMPASS_DB"]


def records() -> pd.DataFrame:
    return pd.read_csv(FIXTURE / "query_records.csv")


def write_config(tmp: Path, extra: list[tuple[str, str]]) -> Path:
    """The fixture config plus extra (table, csv text) sources appended after it."""
    lines = CONFIG.read_text().replace("path: ", f"path: {FIXTURE}/")
    for i, (table, text) in enumerate(extra):
        path = tmp / f"bad_{table}_{i}.csv"
        path.write_text(text)
        lines += f"  - {{table: {table}, path: {path}}}\n"
    out = tmp / "config_extra.yaml"
    out.write_text(lines)
    return out


@pytest.fixture
def oracle_env(tmp_path, monkeypatch):
    """Yields (instance, warehouse path) with COMPASS_CONFIG on the oracle fixture, no case studies."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    (tmp_path / "no_cases").mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("COMPASS_DB", str(tmp_path / "compass.duckdb"))
    monkeypatch.setenv("COMPASS_CONFIG", str(CONFIG))
    monkeypatch.setenv("COMPASS_CASES", str(tmp_path / "no_cases"))
    monkeypatch.setenv("COMPASS_ORACLE_N_BOOT", "10")
    monkeypatch.chdir(tmp_path)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        yield instance, tmp_path / "compass.duckdb"


@pytest.fixture(scope="module")
def materialized(tmp_path_factory):
    """One materialized fixture warehouse shared (read-only) by a module: (instance, db path, tmp dir)."""
    tmp = tmp_path_factory.mktemp("oracle_assets")
    home = tmp / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    (tmp / "no_cases").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(home))
        mp.setenv("COMPASS_DB", str(tmp / "compass.duckdb"))
        mp.setenv("COMPASS_CONFIG", str(CONFIG))
        mp.setenv("COMPASS_CASES", str(tmp / "no_cases"))
        mp.setenv("COMPASS_ORACLE_N_BOOT", "10")
        mp.chdir(tmp)
        with dg.DagsterInstance.from_config(str(home)) as instance:
            materialize_oracle(instance)
            yield instance, tmp / "compass.duckdb", tmp
