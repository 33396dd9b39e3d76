"""Build-script rules: canonical ids and the seeded LiveCodeBench expansion."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from compass.ingest.canonical import canonical_id  # noqa: E402
from build_data.record_sources import read_livecodebench  # noqa: E402

CASES = {
    "gpt-4o-2024-08-06": "gpt-4o",
    "chutes/gpt-oss-120b_high": "gpt-oss-120b",
    "claude-opus-4-5-20251101-thinking-64k-high-effort": "claude-opus-4-5",
    "claude-3-7-sonnet-20250219_32K": "claude-3-7-sonnet",
    "gemini-2.5-flash-lite-preview-09-2025-no-thinking": "gemini-2.5-flash-lite",
    "Meta-Llama-3_1-8B-Instruct_5shots": "llama-3.1-8b-instruct",
    "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo": "llama-3.3-70b-instruct",
    "Qwen1.5-7B-Chat@together": "qwen1.5-7b-chat",
    "qwen2-5-72b-instruct": "qwen2.5-72b-instruct",
    "mistral-medium": "mistral-medium",  # an effort word that is a model name outside mode families
    "mistral-large-2407": "mistral-large-2407",  # YYMM version tags are kept
    "MiniMax-M1-80k": "minimax-m1-80k",
    "kimi-k2-thinking": "kimi-k2-thinking",  # separate weights, not a mode
    "gpt-3.5-turbo-0125": "gpt-3.5-turbo-0125",  # pinned: LiveCodeBench evaluates 0301 and 0125
    "gpt-3.5-turbo-1106": "gpt-3.5-turbo",
    "claude-4-1-opus-20250805-thinking-32k": "claude-opus-4-1",  # old order, dated, thinking budget
    # mid-2026 LiveBench spellings (table_2026_06_25)
    "claude-fable-5-max-effort": "claude-fable-5",
    "claude-opus-5-max-effort": "claude-opus-5",
    "gpt-5.6-sol-max": "gpt-5.6-sol",
    "gpt-5.1-codex-max": "gpt-5.1-codex-max",  # a model, not an effort level
    "gpt-5.1-codex-max-high": "gpt-5.1-codex-max",
    "muse-spark-1.2-xhigh": "muse-spark-1.2",
    "gpt-5.5-pro-pre-release_xhigh": "gpt-5.5-pro-pre-release",  # a pre-release checkpoint stays distinct
}


@pytest.mark.parametrize("raw_name", sorted(CASES))
def test_canonical_id_rules(raw_name):
    assert canonical_id(raw_name) == CASES[raw_name]


def test_canonical_ids_are_fixed_points(tables):
    ids = tables["models"]["model_id"]
    assert (ids.map(canonical_id) == ids).all()


def test_canonical_id_rejects_empty_name():
    with pytest.raises(ValueError, match="empty model name"):
        canonical_id("  ")


def test_livecodebench_expansion_is_seeded(raw):
    a, _ = read_livecodebench(raw, seed=1)
    b, _ = read_livecodebench(raw, seed=1)
    c, _ = read_livecodebench(raw, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert not a["correct"].equals(c["correct"])
    cell_means = lambda df: df.groupby(["raw_name", "query_id"])["correct"].mean()  # noqa: E731
    pd.testing.assert_series_equal(cell_means(a), cell_means(c))

