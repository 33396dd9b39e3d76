"""Connector rows -> canonical rows: spellings resolve to one id, one variant chosen without its score and the
undated price win."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from compass.ingest.resolve import Resolver, canonical_rows

DAY = dt.date(2026, 7, 1)


def test_canonical_rows_keep_one_variant_whatever_its_score_and_the_undated_price():
    parsed = {
        "benchmark_scores": pd.DataFrame({
            "raw_name": ["claude-fable-5-max-effort", "claude-fable-5-xhigh-effort", "gpt-5.6-sol-max"],
            "benchmark": "livebench_global", "score": [0.80, 0.83, 0.81], "score_scale": "fraction",
            "stderr": None, "source": "livebench", "as_of": DAY}),
        "model_costs": pd.DataFrame({
            "raw_name": ["gpt-5.6-sol-2026-07-09", "gpt-5.6-sol", "openai/gpt-5.6-sol-2026-06-01"],
            "provider": "openai", "input_usd_per_mtok": [4.0, 5.0, 3.0], "output_usd_per_mtok": [20.0, 20.0, 20.0],
            "throughput_tps": None, "latency_s": None, "source": "litellm", "as_of": DAY}),
    }
    out = canonical_rows(parsed, Resolver({"gpt-5.6-sol-max": "gpt-5.6-sol-max-pinned"}))
    scores = out["benchmark_scores"].set_index("model_id")
    fable = scores.loc["claude-fable-5"]
    assert (fable["score"], fable["variant"]) == (0.80, "claude-fable-5-max-effort")  # max effort, not the best score
    assert "gpt-5.6-sol-max-pinned" in scores.index  # an explicit pair wins over the rules
    costs = out["model_costs"]
    assert len(costs) == 1 and costs.iloc[0]["variant"] == "gpt-5.6-sol"
    assert costs.iloc[0]["blended_usd_per_mtok"] == (3 * 5.0 + 20.0) / 4
