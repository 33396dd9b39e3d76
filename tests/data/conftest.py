"""Fixtures for the embedded default data tests: the Parquet tables in data/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

DATA = Path(__file__).resolve().parents[2] / "data"
RAW = Path("/work/shared/data/raw")
TABLES = ("models", "model_aliases", "benchmark_scores", "model_costs", "interactions", "query_records")


@pytest.fixture(scope="session")
def tables() -> dict[str, pd.DataFrame]:
    missing = [t for t in TABLES if not (DATA / f"{t}.parquet").exists()]
    if missing:
        pytest.fail(f"data/ lacks {missing}; run scripts/build_default_data.py")
    return {t: pd.read_parquet(DATA / f"{t}.parquet") for t in TABLES}


@pytest.fixture(scope="session")
def raw() -> Path:
    if not RAW.is_dir():
        pytest.skip("shared raw data not available")
    return RAW
