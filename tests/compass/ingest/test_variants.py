"""Effort levels, thinking modes and dated snapshots are a column of one model, not models (issue 42, item 3)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from compass.ingest.canonical import variant
from compass.ingest.resolve import Resolver, canonical_rows

DAY = dt.date(2026, 9, 3)

# raw spelling (as a source writes it) -> (model id, effort, snapshot)
SPELLINGS = {
    "kimi-k3_high": ("kimi-k3", "high", None),  # Epoch, a family outside the old mode list
    "kimi-k3_max": ("kimi-k3", "max", None),
    "claude-fable-5-max-effort": ("claude-fable-5", "max", None),  # LiveBench
    "gemini-3.7-flash-high": ("gemini-3.7-flash", "high", None),
    "claude-opus-4-7_high": ("claude-opus-4-7", "high", None),
    "claude-sonnet-5-xhigh-effort": ("claude-sonnet-5", "xhigh", None),
    "gpt-5.4-xhigh": ("gpt-5.4", "xhigh", None),
    "o3 (high)": ("o3", "high", None),  # Aider
    "claude-3-7-sonnet-20250219_32K": ("claude-3-7-sonnet", "thinking-32k", "2025-02-19"),
    "claude-opus-4-5-20251101-thinking-64k-high-effort": ("claude-opus-4-5", "high+thinking-64k", "2025-11-01"),
    "gemini-2.5-flash-preview-04-17 (16K thinking)": ("gemini-2.5-flash", "thinking-16k", "preview-04-17"),
    "qwen3-235b-a22b-no-thinking": ("qwen3-235b-a22b", "no-thinking", None),  # LMArena
    "deepseek-v4-pro-0813_max": ("deepseek-v4-pro", "max", "0813"),
    "gpt-4o-2024-08-06": ("gpt-4o", None, "2024-08-06"),
    # names, not variants
    "qwen3.8-max": ("qwen3.8-max", None, None),
    "gpt-5.1-codex-max": ("gpt-5.1-codex-max", None, None),
    "mistral-medium": ("mistral-medium", None, None),
    "kimi-k2-thinking": ("kimi-k2-thinking", None, None),
    "minimax-m1-80k": ("minimax-m1-80k", None, None),
    # context-window models of GPT-3.5 / GPT-4 (models.dev, LiteLLM, Epoch), not thinking budgets
    "gpt-4-32k": ("gpt-4-32k", None, None),
    "gpt-4-32k-0314": ("gpt-4-32k", None, "0314"),
    "gpt-3.5-turbo-16k": ("gpt-3.5-turbo-16k", None, None),
    "openai/gpt-3.5-turbo-16k": ("gpt-3.5-turbo-16k", None, None),
}


@pytest.mark.parametrize("raw", sorted(SPELLINGS))
def test_variant_names_the_model_its_effort_and_snapshot(raw):
    v = variant(raw)
    assert (v.model_id, v.effort, v.snapshot) == SPELLINGS[raw]


def test_effort_variants_of_one_source_are_one_model_whose_kept_row_says_its_effort():
    """Epoch scores kimi-k3 at three effort levels and LiveBench scores it bare: one model, one level kept per
    source whatever its score (the highest, on a tie of coverage), and the level in `effort` (fails if the variants
    become models, the column is dropped, or the best-scoring level is kept: high scores 0.92)."""
    parsed = {"benchmark_scores": pd.DataFrame({
        "raw_name": ["kimi-k3_low", "kimi-k3_max", "kimi-k3_high", "kimi-k3", "qwen3-32b_none"],
        "benchmark": "gpqa_diamond", "score": [0.80, 0.91, 0.92, 0.90, 0.60], "score_scale": "fraction",
        "stderr": None, "source": ["epoch_ai_hub", "epoch_ai_hub", "epoch_ai_hub", "livebench", "epoch_ai_hub"],
        "as_of": DAY})}
    scores = canonical_rows(parsed, Resolver())["benchmark_scores"]
    assert sorted(scores["model_id"].unique()) == ["kimi-k3", "qwen3-32b"]
    kimi = scores[scores["model_id"] == "kimi-k3"].set_index("source")
    assert kimi.loc["epoch_ai_hub", ["score", "variant", "effort"]].tolist() == [0.91, "kimi-k3_max", "max"]
    assert pd.isna(kimi.loc["livebench", "effort"])
    assert scores.loc[scores["model_id"] == "qwen3-32b", "effort"].item() == "none"


def test_a_models_cells_come_from_one_effort_setting_chosen_without_the_scores():
    """gpt-5.2 low scores best on `a`, high on `b`: the max rule would build a row no setting of the model scored
    (0.9, 0.8). Kept: the setting the model was measured at most (high, 3 benchmarks; low 2) on all of the
    source's benchmarks, and a source that only ran `low` keeps its `low` row."""
    parsed = {"benchmark_scores": pd.DataFrame({
        "raw_name": ["gpt-5.2-low", "gpt-5.2-high", "gpt-5.2-low", "gpt-5.2-high", "gpt-5.2-high", "gpt-5.2-low"],
        "benchmark": ["a", "a", "b", "b", "c", "d"], "score": [0.9, 0.5, 0.3, 0.8, 0.7, 0.6],
        "score_scale": "fraction", "stderr": None, "source": ["s"] * 5 + ["t"], "as_of": DAY})}
    scores = canonical_rows(parsed, Resolver())["benchmark_scores"].set_index(["source", "benchmark"])
    assert scores.loc["s", "effort"].unique().tolist() == ["high"]
    assert scores.loc["s", "score"].to_dict() == {"a": 0.5, "b": 0.8, "c": 0.7}
    assert scores.loc[("t", "d"), "effort"] == "low"


def test_a_source_keeps_one_snapshot_of_a_model_chosen_by_coverage_not_by_spelling():
    """Epoch scores gemini-1.5-pro as `-001-feb24` (no tag: an explicit pair), `-001` and `-002`: the spelling
    covering most of the model's benchmarks in that source (`-002`, 3) is kept wherever it has a score, not the
    undated or the string-greatest tag per benchmark (the review found mmlu from feb24 and bbh from -001)."""
    parsed = {"benchmark_scores": pd.DataFrame({
        "raw_name": ["gemini-1.5-pro-001-feb24", "gemini-1.5-pro-002", "gemini-1.5-pro-002", "gemini-1.5-pro-002",
                     "gemini-1.5-pro-001", "gemini-1.5-pro-001"],
        "benchmark": ["mmlu", "mmlu", "gpqa_diamond", "hle", "bbh", "mmlu"], "score": [0.83, 0.87, 0.57, 0.05, 0.89, 0.8],
        "score_scale": "fraction", "stderr": None, "source": "epoch_ai_hub", "as_of": DAY})}
    scores = canonical_rows(parsed, Resolver())["benchmark_scores"].set_index("benchmark")
    assert set(scores["model_id"]) == {"gemini-1.5-pro"}
    assert scores.loc[["mmlu", "gpqa_diamond", "hle"], "snapshot"].tolist() == ["002"] * 3
    assert scores.loc["bbh", "snapshot"] == "001"  # measured only there: kept, not imputed
