"""Matched, never guessed (compass/ingest/names.py), on near-miss spellings from the real snapshots against the
embedded catalog as it was before them (tests/fixtures/live_catalog): the rules resolve dated snapshots and effort suffixes; a name they do not resolve is held back
when a catalog model is offered as a candidate (compass/ingest/review.py), enters as new only from a quality source
and when none is offered."""

import pandas as pd
import pytest

from compass.ingest.aliases import alias_key, alias_lookup
from compass.ingest.load import MATCH_THRESHOLD
from compass.ingest.names import match_names
from compass.ingest.review import review_score
from tests.paths import FIXTURES

CATALOG = FIXTURES / "live_catalog"  # the embedded catalog before the mid-2026 rebuild


@pytest.fixture(scope="module")
def lookup():
    return alias_lookup(pd.read_parquet(CATALOG / "model_aliases.parquet"),
                        pd.read_parquet(CATALOG / "models.parquet")["model_id"])


def test_rules_resolve_dated_snapshots_and_effort_suffixes(lookup):
    names = ["gpt-4o-2024-08-06", "claude-opus-4-5-20251101-thinking-64k-high-effort", "openai/gpt-4o"]
    out = match_names(names, lookup, {}, set(names), MATCH_THRESHOLD).set_index("raw_name")
    assert (out["status"] == "matched").all()
    assert out.loc["gpt-4o-2024-08-06", "model_id"] == "gpt-4o"
    assert out.loc["claude-opus-4-5-20251101-thinking-64k-high-effort", "model_id"] == "claude-opus-4-5"


def test_near_misses_are_held_back_with_candidates_never_merged(lookup):
    near = ["xai/grok-4.20-0309-non-reasoning", "gemini-3.5-flsh", "xai/grok-code-fast"]
    out = match_names(near, lookup, {}, set(near), MATCH_THRESHOLD).set_index("raw_name")
    assert (out["status"] == "pending").all() and out["model_id"].isna().all()
    assert out.loc["xai/grok-4.20-0309-non-reasoning", "best_candidate"] == "grok-4.20-beta-0309-non-reasoning"
    assert out.loc["xai/grok-code-fast", "best_candidate"] == "grok-code-fast-1"
    assert out.loc["gemini-3.5-flsh", "best_candidate"] == "gemini-3.5-flash"
    assert out["similarity"].ge(MATCH_THRESHOLD).all()


def test_another_tier_is_not_offered_as_a_candidate(lookup):
    """Issue 42's fixture: flash-lite is not flash. The old queue held it back as a near miss of gemini-3.5-flash."""
    out = match_names(["gemini-3.5-flash-lite-high"], lookup, {}, {"gemini-3.5-flash-lite-high"}, MATCH_THRESHOLD)
    assert out.iloc[0][["status", "model_id", "best_candidate"]].tolist() == ["new", "gemini-3.5-flash-lite", None]


def test_a_new_version_is_a_new_model_and_only_a_quality_source_brings_it_in(lookup):
    names = ["gpt-5.6-sol-xhigh", "claude-opus-5-high-effort", "claude-sonnet-5-5"]
    scored = {"gpt-5.6-sol-xhigh", "claude-opus-5-high-effort"}
    out = match_names(names, lookup, {}, scored, MATCH_THRESHOLD).set_index("raw_name")
    assert out.loc["gpt-5.6-sol-xhigh", ["status", "model_id"]].tolist() == ["new", "gpt-5.6-sol"]
    assert out.loc["claude-opus-5-high-effort", ["status", "model_id"]].tolist() == ["new", "claude-opus-5"]
    assert out.loc["claude-sonnet-5-5", "status"] in ("unmatched", "pending")  # a price list only
    assert out.loc["claude-sonnet-5-5", "model_id"] is None
    assert review_score("claude-opus-5", "claude-opus-4-5") == 0 < review_score("grok-code-fast", "grok-code-fast-1")


def test_a_confirmed_line_wins_and_may_name_a_new_id(lookup):
    confirmed = {alias_key("xai/grok-4.20-0309-non-reasoning"): "grok-4.20-beta-0309-non-reasoning",
                 alias_key("kimi-k3"): "kimi-k3"}
    out = match_names(["xai/grok-4.20-0309-non-reasoning", "kimi-k3"], lookup, confirmed, set(), MATCH_THRESHOLD)
    assert out.set_index("raw_name")["model_id"].to_dict() == {
        "xai/grok-4.20-0309-non-reasoning": "grok-4.20-beta-0309-non-reasoning", "kimi-k3": "kimi-k3"}
    assert set(out["status"]) == {"confirmed"}


def test_a_batch_brings_a_model_in_once_and_holds_its_other_spellings(lookup):
    """Two effort levels of a new model are one model (issue 42: the level is a column); a spelling the rules do
    not resolve waits for a person with the new model as its candidate."""
    names = ["muse-spark-1.1-high", "muse-spark-1.1-xhigh", "muse-sprak-1.1"]
    out = match_names(names, lookup, {}, set(names), MATCH_THRESHOLD).set_index("raw_name")
    levels = out.loc[["muse-spark-1.1-high", "muse-spark-1.1-xhigh"]]
    assert set(levels["model_id"]) == {"muse-spark-1.1"} and sorted(levels["status"]) == ["matched", "new"]
    assert out.loc["muse-sprak-1.1", ["status", "best_candidate"]].tolist() == ["pending", "muse-spark-1.1"]
