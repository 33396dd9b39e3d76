"""A throw-away Dagster instance + warehouse fed by the cascade fixture (real mmlu rows cut from data/)."""

from pathlib import Path

import dagster as dg
import pandas as pd

from assets.datasets import DATASET_RECORDS
from pipelines.definitions import defs
from tests.paths import FIXTURES
from tests.pipelines.helpers import (
    branch_fixtures,
    config_with_extra,
    materialize_branch,
)

FIXTURE = FIXTURES / "cascade"
CONFIG = FIXTURE / "config.yaml"
KEYS = defs.resolve_asset_graph().materializable_asset_keys
# The dataset extract the cascade partitions read, then the cascade partitions themselves.
CASCADE_KEYS = [DATASET_RECORDS] + sorted(k for k in KEYS if k.path[0] == "cascade" and k.path[1] != "failfast_synthetic")
LLAMA = ["llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "llama-3.1-8b-instruct"]


def materialize_cascade(instance: dg.DagsterInstance, datasets: list[str] | None = None,
                       raw_tables: list[str] | None = None) -> list[str]:
    """Raw sources (all, or `raw_tables`), then the cascade branch for each dataset partition."""
    return materialize_branch(instance, CASCADE_KEYS, datasets, raw_tables)


def records() -> pd.DataFrame:
    return pd.read_csv(FIXTURE / "query_records.csv", dtype={"query_id": str})


def write_config(tmp: Path, extra: list[tuple[str, str]]) -> Path:
    """The fixture config plus extra (table, csv text) sources appended after it."""
    return config_with_extra(CONFIG, tmp, extra)


ENV = {"COMPASS_HEAVY": None}  # the light study


baseline, materialized, cascade_env = branch_fixtures("cascade", CONFIG, ENV, lambda instance: materialize_cascade(instance, ["mmlu"]))
