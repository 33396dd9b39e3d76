"""A throw-away Dagster instance + warehouse fed by the cascade fixture (real mmlu rows cut from data/)."""

import os
import shutil
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from pipelines.definitions import defs
from pipelines.partitions import sync_dynamic_partitions
from pipelines.refresh import run_selection
from tests.pipeline.helpers import config_with_extra

ROOT = Path(__file__).parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "cascade"
CONFIG = FIXTURE / "config.yaml"
KEYS = defs.resolve_asset_graph().materializable_asset_keys
RAW_KEYS = sorted(k for k in KEYS if k.path[0] == "raw")
CASCADE_KEYS = sorted(k for k in KEYS if k.path[0] == "cascade" and k.path[1] != "failfast_synthetic")
LLAMA = ["llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "llama-3.1-8b-instruct"]


def materialize_cascade(instance: dg.DagsterInstance, datasets: list[str], raw_tables: list[str] | None = None) -> None:
    """Raw sources (all, or `raw_tables`), then the cascade branch for each dataset partition."""
    raw = RAW_KEYS if raw_tables is None else [dg.AssetKey(["raw", t]) for t in raw_tables]
    run_selection(defs, instance, raw, None, False)
    sync_dynamic_partitions(instance)
    for dataset in datasets:
        run_selection(defs, instance, CASCADE_KEYS, dataset, False)


def records() -> pd.DataFrame:
    return pd.read_csv(FIXTURE / "query_records.csv", dtype={"query_id": str})


def write_config(tmp: Path, extra: list[tuple[str, str]]) -> Path:
    """The fixture config plus extra (table, csv text) sources appended after it."""
    return config_with_extra(CONFIG, tmp, extra)


def _environment(mp: pytest.MonkeyPatch, tmp: Path) -> None:
    mp.setenv("DAGSTER_HOME", str(tmp / "dagster_home"))
    mp.setenv("COMPASS_DB", str(tmp / "compass.duckdb"))
    mp.setenv("COMPASS_CONFIG", str(CONFIG))
    mp.setenv("COMPASS_CASES", str(tmp / "no_cases"))  # empty: no ML Compass case partitions
    mp.delenv("COMPASS_HEAVY", raising=False)
    mp.chdir(tmp)


@pytest.fixture(scope="session")
def baseline(tmp_path_factory) -> Path:
    """A folder holding a Dagster home and warehouse with the fixture's cascade branch materialized once."""
    tmp = tmp_path_factory.mktemp("cascade_baseline")
    (tmp / "dagster_home").mkdir()
    shutil.copy(ROOT / "dagster.yaml", tmp / "dagster_home" / "dagster.yaml")
    (tmp / "no_cases").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        _environment(mp, tmp)
        with dg.DagsterInstance.from_config(str(tmp / "dagster_home")) as instance:
            materialize_cascade(instance, ["mmlu"])
    return tmp


@pytest.fixture(scope="module")
def materialized(baseline):
    """The baseline, read-only: (instance, db path)."""
    with pytest.MonkeyPatch.context() as mp:
        _environment(mp, baseline)
        with dg.DagsterInstance.from_config(str(baseline / "dagster_home")) as instance:
            yield instance, baseline / "compass.duckdb"


@pytest.fixture
def cascade_env(baseline, tmp_path, monkeypatch):
    """A private copy of the baseline (instance, warehouse path) that a test may modify."""
    work = tmp_path / "copy"
    shutil.copytree(baseline, work)
    _environment(monkeypatch, work)
    with dg.DagsterInstance.from_config(str(work / "dagster_home")) as instance:
        yield instance, work / "compass.duckdb"


def db_env() -> str:
    return os.environ["COMPASS_DB"]
