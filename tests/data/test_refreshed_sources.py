"""The embedded default carries the newest usable upstream versions (issue 36 item 6), parsed by the
same connectors the pipeline runs: its rows equal the connector's parse of the snapshot file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from compass.ingest.connectors import CONNECTORS
from compass.ingest.connectors.local import local_payload
from compass.ingest.resolve import Resolver, canonical_rows

SNAPSHOTS = Path("/work/shared/data/snapshots")


def test_default_livebench_rows_are_the_connectors_parse_of_the_newest_release(tables):
    if not SNAPSHOTS.is_dir():
        pytest.skip("shared snapshots not available")
    table = SNAPSHOTS / "livebench" / "2026-08-22" / "table_2026_06_25.csv"
    parsed = CONNECTORS["livebench"].parse(local_payload(CONNECTORS["livebench"], table))
    parsed = canonical_rows(parsed, Resolver())["benchmark_scores"]
    ours = tables["benchmark_scores"].query("source == 'livebench'")
    merged = ours.merge(parsed, on=["model_id", "benchmark"], suffixes=("", "_parsed"), how="outer", indicator=True)
    assert (merged["_merge"] == "both").all(), merged.loc[merged["_merge"] != "both", ["model_id", "benchmark"]].head()
    assert (merged["score"] == merged["score_parsed"]).all() and (merged["variant"] == merged["variant_parsed"]).all()
    assert set(ours["as_of"]) == {dt.date(2026, 6, 25)}


def test_default_catalog_holds_mid_2026_models_with_prices(tables):
    models, costs = tables["models"].set_index("model_id"), tables["model_costs"]
    for model in ("gpt-5.5", "claude-opus-5", "claude-fable-5", "gpt-5.6-sol", "gemini-3.7-flash"):
        assert model in models.index, model
        assert (costs["model_id"] == model).any(), f"{model} has no price"
    assert models.loc["claude-fable-5", "organization"] == "Anthropic"
    epoch = tables["benchmark_scores"].query("source == 'epoch_ai_hub'")
    assert set(epoch["as_of"]) == {dt.date(2026, 5, 14), dt.date(2026, 9, 3)}  # the 2026-05-14 export + 2026-09 update
    assert pd.Timestamp(models["release_date"].dropna().max()) >= pd.Timestamp("2026-06-01")
