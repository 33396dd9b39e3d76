"""The attributes a platform team filters on (issue 48): `min_context`, `max_latency_s`, `providers`, `modalities`,
`tools` written in a scenario keep exactly the models that satisfy them, and the models left out because the
attribute is unknown are counted next to the recommendation, not only in the filter note."""

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass import decisions as dec
from compass.mlcompass.case_inputs import case_catalog_rows
from compass.mlcompass.case_study import CostSpec
from compass.mlcompass.explain import explain
from compass.mlcompass.scenarios import MODALITIES, Scenario
from tests.compass.mlcompass.decisions.test_person_weights import _inputs, assert_scenario_rejected

# 30 models in a cycle of 5: m0 m5 ... are (together_ai+openai, text, 128k, 0.4 s), m1 m6 ... (deepinfra, image+text,
# 32k, 2.5 s), m2 (no provider, unknown modality, 200k, no latency), m3 (openai, image+pdf+text, unknown context,
# 0.9 s), m4 (together_ai, text, 1M, 1.0 s). No column for tool use: no source gives it.
MODELS = pd.DataFrame({
    "model_id": [f"m{i}" for i in range(30)],
    "providers": ["openai+together_ai", "deepinfra", None, "openai", "together_ai"] * 6,
    "modality": ["text", "image+text", None, "image+pdf+text", "text"] * 6,
    "context_window": pd.array([128000, 32768, 200000, None, 1000000] * 6, dtype="Int64"),
    "latency_s": [0.4, 2.5, np.nan, 0.9, 1.0] * 6,
})


def ids(residues) -> set[str]:
    return {f"m{i}" for i in range(30) if i % 5 in residues}


def filtered(spec: dict) -> dec.DecisionInputs:
    return dec.with_filters(_inputs(Scenario.from_dict({"name": "support_bot", "lam": 0.05, **spec})), MODELS)


@pytest.mark.parametrize("spec, kept, n, unknown", [
    ({"min_context": 100000}, {0, 2, 4}, 6, "min_context_window 6"),
    ({"max_latency_s": 1}, {0, 3, 4}, 6, "max_latency_s 6"),
    ({"providers": ["Together_AI", "deepinfra"]}, {0, 1, 4}, 6, "providers 6"),
    ({"modalities": ["image", "text"]}, {1, 3}, 6, "modalities 6"),
    ({"min_context": 100000, "providers": ["openai"]}, {0}, 12, "min_context_window 6, providers 6"),  # m3, m2
])
def test_each_attribute_filter_keeps_exactly_the_models_that_satisfy_it(spec, kept, n, unknown):
    inputs = filtered(spec)
    board = dec.leaderboard_frame(inputs)
    assert set(board["model_id"]) == ids(kept)  # red when a filter is ignored
    assert board["filter_unknown"].iloc[0] == (f"{n} more models left out because an attribute a filter reads is "
                                               f"unknown ({unknown}); they may comply")


def test_tool_use_no_source_gives_leaves_every_model_out_and_says_why():
    inputs = filtered({"tools": True})
    assert dec.leaderboard_frame(inputs).empty
    assert inputs.filter_unknown == ("30 more models left out because an attribute a filter reads is unknown "
                                     "(tools 30 (every model: no source gives it)); they may comply")


def test_the_unknown_count_is_printed_next_to_the_recommendation():
    inputs = filtered({"min_context": 100000})
    lines = explain(inputs).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("recommended: "))
    assert lines[at + 1] == ("  (6 more models left out because an attribute a filter reads is unknown "
                             "(min_context_window 6); they may comply)")
    none = explain(filtered({"tools": True})).splitlines()
    assert none[-2].startswith("no recommendation") and none[-1].startswith("  (30 more models left out")


def test_top_level_keys_are_the_filters_they_name():
    top = Scenario.from_dict({"name": "s", "min_context": 8192, "max_latency_s": 2, "providers": ["Groq"],
                              "modalities": ["text", "image"], "tools": True})
    assert top.filters == {"min_context_window": 8192, "max_latency_s": 2, "providers": ["groq"],
                           "modalities": ["image", "text"], "tools": True}


@pytest.mark.parametrize("line, key, message", [
    ("min_context: -8000", "min_context", "expected a whole number of tokens > 0, got -8000"),
    ("min_context: 0.5", "min_context", "expected a whole number of tokens > 0"),
    ("max_latency_s: -1", "max_latency_s", "expected a number of seconds > 0, got -1"),
    ("modalities: [text, smell]", "modalities", f"unknown modality 'smell'; known: {list(MODALITIES)}"),
    ("modalities: text", "modalities", "expected a list of input modalities"),
    ("providers: together_ai", "providers", "expected a list of provider names, got 'together_ai'"),
    ("tools: false", "tools", "expected true (keep the models that call tools), got False"),
    ("min_context: 1000\nfilters: {min_context_window: 2000}", "min_context", "given both"),
    ("filters: {modalities: [smell]}", "filters.modalities", "unknown modality 'smell'"),
])
def test_bad_attribute_filters_name_the_key(tmp_path, line, key, message):
    assert_scenario_rejected(tmp_path, line, key, message)


def test_the_provider_shown_is_the_one_the_price_is_from():
    """provider_aggregate min: the cheapest provider of the cost column; another aggregate names how many."""
    costs = pd.DataFrame({"model_id": ["a", "a", "a", "b"], "provider": ["openai", "azure", "together_ai", "groq"],
                          "blended_usd_per_mtok": [4.0, 3.5, 5.0, 0.2]})
    ids_ = pd.Index(["a", "b", "c"])
    catalog = case_catalog_rows(costs, pd.DataFrame({"model_id": ["a", "b", "c"]}), CostSpec(), ids_)
    assert catalog["provider"].tolist()[:2] == ["azure", "groq"] and pd.isna(catalog["provider"].iloc[2])
    assert catalog["raw_cost"].tolist()[:2] == [3.5, 0.2]
    dearest = case_catalog_rows(costs, pd.DataFrame({"model_id": ["a"]}), CostSpec(provider_aggregate="max"), ids_)
    median = case_catalog_rows(costs, pd.DataFrame({"model_id": ["a"]}), CostSpec(provider_aggregate="median"), ids_)
    assert dearest["provider"].iloc[0] == "together_ai" and median["provider"].iloc[0] == "median of 3 providers"


def test_a_provider_filter_says_which_kept_models_are_priced_elsewhere():
    """`providers` chooses models, not prices: a kept model priced by another provider is named (red: not said)."""
    priced = MODELS.assign(provider=["openai", "deepinfra", None, "openai", "together_ai"] * 6)
    inputs = dec.with_filters(_inputs(Scenario.from_dict({"name": "s", "providers": ["together_ai"]})), priced)
    assert set(dec.leaderboard_frame(inputs)["model_id"]) == ids({0, 4})
    assert inputs.filter_note.endswith("; prices stay the case's: 6 kept models are priced by a provider outside "
                                       "`providers` (m0: openai, m10: openai, m15: openai, m20: openai, m25: openai, "
                                       "m5: openai)")
