"""The alias table resolves every spelling of a model to one canonical id."""

from __future__ import annotations

import pytest

from compass.ingest.aliases import alias_key, alias_lookup

SAME_MODEL = {
    "gpt-4o": ["gpt-4o-2024-08-06", "GPT-4O-2024-08-06", "openai/gpt-4o", "gpt-4o-2024-05-13", "gpt-4o"],
    "llama-3.1-70b-instruct": [
        "Meta-Llama-3_1-70B-Instruct_5shots",  # MMLU-Pro
        "meta-llama/Llama-3.1-70B-Instruct",  # HF v2
        "llama3.1-70b",  # rational cascades (instruct model via API)
        "llama-3.1-70b-instruct",  # LMArena
        "Llama-3.1-70B-Instruct",  # Epoch
    ],
    "llama-3-70b-instruct": ["Meta-Llama-3-70B-Instruct", "meta-llama/Meta-Llama-3-70B-Instruct", "llama-3-70b-instruct"],
    "claude-3-5-sonnet": ["claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022"],
    # (LiveBench's old-order `claude-4-1-opus-...` left with its 2026-01-08 release; the rule is in test_build_rules)
    "claude-opus-4-1": ["claude-opus-4-1-20250805", "claude-opus-4-1-20250805-thinking-16k", "claude-opus-4-1-20250805_16K"],
    "claude-fable-5": ["claude-fable-5-max-effort", "claude-fable-5", "anthropic/claude-fable-5"],
    "o3-mini": ["o3-mini-2025-01-31_high", "o3-mini", "o3-mini-high"],
    "qwen2.5-coder-32b-instruct": ["qwen2.5-32b-coder-instruct", "Qwen2.5-Coder-32B-Instruct"],
    "gemini-1.5-pro": ["gemini-1.5-pro-002_5shots", "gemini-1.5-pro-002", "Gemini-Pro-1.5 (n=1)"],
    "command-r": ["c4ai-command-r-v01_5shots", "CohereForAI/c4ai-command-r-v01", "Command-R"],
    "deepseek-coder-33b-instruct": ["DSCoder-33b-Ins", "deepseek-ai/deepseek-coder-33b-instruct"],
}


@pytest.fixture(scope="module")
def lookup(tables):
    return alias_lookup(tables["model_aliases"], tables["models"]["model_id"])


@pytest.mark.parametrize("model_id", sorted(SAME_MODEL))
def test_spellings_resolve_to_one_id(lookup, model_id):
    resolved = {name: lookup.get(alias_key(name)) for name in SAME_MODEL[model_id]}
    assert set(resolved.values()) == {model_id}, resolved


def test_base_and_instruct_stay_distinct(lookup):
    assert lookup[alias_key("Meta-Llama-3_1-70B_5shots")] == "llama-3.1-70b"
    assert lookup[alias_key("Meta-Llama-3_1-70B-Instruct_5shots")] == "llama-3.1-70b-instruct"
    assert lookup[alias_key("mistral-large-2407")] != lookup[alias_key("mistral-large-2411")]


def test_no_alias_key_maps_to_two_ids(tables):
    a, ids = tables["model_aliases"], tables["models"]["model_id"]
    keys = list(a["alias"].map(alias_key)) + list(ids.map(alias_key))
    targets = list(a["model_id"]) + list(ids)
    seen: dict[str, str] = {}
    for k, m in zip(keys, targets):
        assert seen.setdefault(k, m) == m, f"alias_key {k!r} -> {seen[k]} and {m}"


def test_every_alias_round_trips(tables, lookup):
    a = tables["model_aliases"]
    assert (a["alias"].map(lambda s: lookup[alias_key(s)]) == a["model_id"]).all()
    assert a["alias"].is_unique


def test_raw_names_of_record_sources_are_aliases(tables):
    aliases = set(tables["model_aliases"]["alias"])
    for name in ("DeepSeek-Coder-V2_5shots", "llama3.2-1b", "Qwen1.5-72B-Chat-greedy", "GPT-4-Turbo-1106"):
        assert name in aliases


def test_one_spelling_per_organization(tables):
    """`google` / `Google DeepMind` and `deepseek` / `DeepSeek` used to be different organisations."""
    from compass.ingest.organizations import canonical_organization, organization_key

    orgs = tables["models"]["organization"].dropna().unique()
    assert all(canonical_organization(o) == o for o in orgs)
    keys = [organization_key(o) for o in orgs]
    assert len(keys) == len(set(keys))
    by_id = tables["models"].set_index("model_id")["organization"]
    assert by_id["gemini-2.5-pro"] == by_id["gemma-2-27b-it"] == "Google"
    assert by_id["deepseek-r1"] == by_id["deepseek-v3"] == "DeepSeek"
