"""A throw-away Dagster instance + warehouse fed by the oracle fixture (real rows cut from data/)."""

from pathlib import Path

import dagster as dg
import pandas as pd

from assets.datasets import DATASET_PRICES, DATASET_RECORDS
from pipelines.definitions import defs
from tests.paths import FIXTURES
from tests.pipelines.helpers import (
    branch_fixtures,
    config_with_extra,
    materialize_branch,
)

FIXTURE = FIXTURES / "oracle"
CONFIG = FIXTURE / "config.yaml"
KEYS = defs.resolve_asset_graph().materializable_asset_keys
# The dataset extracts the oracle partitions read, then the oracle partitions themselves.
ORACLE_KEYS = [DATASET_RECORDS, DATASET_PRICES] + sorted(k for k in KEYS if k.path[0] == "oracle" and k.path[1] != "synthetic_validation")


def materialize_oracle(instance: dg.DagsterInstance, datasets: list[str] | None = None,
                       raw_tables: list[str] | None = None) -> list[str]:
    """Raw sources (all, or `raw_tables`), then the oracle branch for each dataset partition."""
    return materialize_branch(instance, ORACLE_KEYS, datasets, raw_tables)


def records() -> pd.DataFrame:
    return pd.read_csv(FIXTURE / "query_records.csv")


def write_config(tmp: Path, extra: list[tuple[str, str]]) -> Path:
    """The fixture config plus extra (table, csv text) sources appended after it."""
    return config_with_extra(CONFIG, tmp, extra)


ENV = {"COMPASS_ORACLE_N_BOOT": "10"}


baseline, materialized, oracle_env = branch_fixtures("oracle", CONFIG, ENV, lambda instance: materialize_oracle(instance))
