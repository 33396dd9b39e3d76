"""A throw-away Dagster instance + warehouse fed by the cascade fixture (real mmlu rows cut from data/)."""

import os
import shutil
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from assets.datasets import DATASET_RECORDS
from pipelines.definitions import defs
from pipelines.partitions import sync_dynamic_partitions
from pipelines.refresh import run_selection
from tests.pipelines.helpers import config_with_extra, throwaway_instance
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "cascade"
CONFIG = FIXTURE / "config.yaml"
KEYS = defs.resolve_asset_graph().materializable_asset_keys
RAW_KEYS = sorted(k for k in KEYS if k.path[0] == "raw")
# The dataset extract the cascade partitions read, then the cascade partitions themselves.
CASCADE_KEYS = [DATASET_RECORDS] + sorted(k for k in KEYS if k.path[0] == "cascade" and k.path[1] != "failfast_synthetic")
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


ENV = {"COMPASS_HEAVY": None}  # the light study


@pytest.fixture(scope="session")
def baseline(tmp_path_factory) -> Path:
    """A folder holding a Dagster home and warehouse with the fixture's cascade branch materialized once."""
    tmp = tmp_path_factory.mktemp("cascade_baseline")
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, tmp, CONFIG, ENV) as instance:
        materialize_cascade(instance, ["mmlu"])
    return tmp


@pytest.fixture(scope="module")
def materialized(baseline):
    """The baseline, read-only: (instance, db path)."""
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, baseline, CONFIG, ENV) as instance:
        yield instance, baseline / "warehouse.duckdb"


@pytest.fixture
def cascade_env(baseline, tmp_path, monkeypatch):
    """A private copy of the baseline (instance, warehouse path) that a test may modify."""
    work = tmp_path / "copy"
    shutil.copytree(baseline, work)
    with throwaway_instance(monkeypatch, work, CONFIG, ENV) as instance:
        yield instance, work / "warehouse.duckdb"


def db_env() -> str:
    return os.environ["COMPASS_DB"]
