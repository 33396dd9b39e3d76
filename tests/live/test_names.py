"""Matched, never guessed (compass/ingest/names.py), on near-miss spellings from the real snapshots against the
embedded catalog as it was before them (tests/fixtures/live_catalog): the rules resolve dated snapshots and effort suffixes; a name they do not resolve is held back
when a catalog model is similar, enters as new only from a quality source and below the threshold."""

import pandas as pd
import pytest

from compass.ingest.aliases import alias_key, alias_lookup
from compass.ingest.names import match_names, similarity
from tests.paths import FIXTURES

CATALOG = FIXTURES / "live_catalog"  # the embedded catalog before the mid-2026 rebuild


@pytest.fixture(scope="module")
def lookup():
    return alias_lookup(pd.read_parquet(CATALOG / "model_aliases.parquet"),
                        pd.read_parquet(CATALOG / "models.parquet")["model_id"])


def test_rules_resolve_dated_snapshots_and_effort_suffixes(lookup):
    names = ["gpt-4o-2024-08-06", "claude-opus-4-5-20251101-thinking-64k-high-effort", "openai/gpt-4o"]
    out = match_names(names, lookup, {}, set(names), 0.85).set_index("raw_name")
    assert (out["status"] == "matched").all()
    assert out.loc["gpt-4o-2024-08-06", "model_id"] == "gpt-4o"
    assert out.loc["claude-opus-4-5-20251101-thinking-64k-high-effort", "model_id"] == "claude-opus-4-5"


def test_near_misses_are_held_back_with_candidates_never_merged(lookup):
    near = ["xai/grok-4.20-0309-non-reasoning", "gemini-3.5-flash-lite-high", "xai/grok-code-fast"]
    out = match_names(near, lookup, {}, set(near), 0.85).set_index("raw_name")
    assert (out["status"] == "pending").all() and out["model_id"].isna().all()
    assert out.loc["xai/grok-4.20-0309-non-reasoning", "best_candidate"] == "grok-4.20-beta-0309-non-reasoning"
    assert out.loc["xai/grok-code-fast", "best_candidate"] == "grok-code-fast-1"
    assert out["similarity"].ge(0.85).all()


def test_a_new_version_is_a_new_model_and_only_a_quality_source_brings_it_in(lookup):
    names = ["gpt-5.6-sol-xhigh", "claude-opus-5-high-effort", "claude-sonnet-5-5"]
    out = match_names(names, lookup, {}, {"gpt-5.6-sol-xhigh", "claude-opus-5-high-effort"}, 0.85).set_index("raw_name")
    assert out.loc["gpt-5.6-sol-xhigh", ["status", "model_id"]].tolist() == ["new", "gpt-5.6-sol"]
    assert out.loc["claude-opus-5-high-effort", ["status", "model_id"]].tolist() == ["new", "claude-opus-5"]
    assert out.loc["claude-sonnet-5-5", "status"] in ("unmatched", "pending")  # a price list only
    assert out.loc["claude-sonnet-5-5", "model_id"] is None
    assert similarity("claude-opus-5", "claude-opus-4-5") < 0.5 < similarity("grok-code-fast", "grok-code-fast-1")


def test_a_confirmed_line_wins_and_may_name_a_new_id(lookup):
    confirmed = {alias_key("xai/grok-4.20-0309-non-reasoning"): "grok-4.20-beta-0309-non-reasoning",
                 alias_key("kimi-k3"): "kimi-k3"}
    out = match_names(["xai/grok-4.20-0309-non-reasoning", "kimi-k3"], lookup, confirmed, set(), 0.85)
    assert out.set_index("raw_name")["model_id"].to_dict() == {
        "xai/grok-4.20-0309-non-reasoning": "grok-4.20-beta-0309-non-reasoning", "kimi-k3": "kimi-k3"}
    assert set(out["status"]) == {"confirmed"}


def test_a_batch_brings_a_model_in_once_and_holds_its_other_spellings(lookup):
    """Two effort levels of a new model are one model (issue 42: the level is a column); a spelling the rules do
    not resolve waits for a person with the new model as its candidate."""
    names = ["muse-spark-1.1-high", "muse-spark-1.1-xhigh", "muse-spark-1.1-exp"]
    out = match_names(names, lookup, {}, set(names), 0.85).set_index("raw_name")
    levels = out.loc[["muse-spark-1.1-high", "muse-spark-1.1-xhigh"]]
    assert set(levels["model_id"]) == {"muse-spark-1.1"} and sorted(levels["status"]) == ["matched", "new"]
    assert out.loc["muse-spark-1.1-exp", ["status", "best_candidate"]].tolist() == ["pending", "muse-spark-1.1"]
