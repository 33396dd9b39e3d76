"""Governance filters in scenarios: models must pass every filter; an unknown attribute never passes."""

from datetime import date

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass import decisions as dec
from compass.mlcompass.scenarios import Scenario, filter_models
from tests.compass.mlcompass.decisions.test_person_weights import _inputs, assert_scenario_rejected

MODELS = pd.DataFrame({
    "model_id": [f"m{i}" for i in range(30)],
    "organization": (["OpenAI", "Meta AI", "Qwen", None, "mistral"] * 6),
    "open_weights": ([False, True, True, np.nan, True] * 6),
    "context_window": ([128000, 8192, 131072, 32768, np.nan] * 6),
    "release_date": pd.to_datetime(["2024-05-13", "2025-04-05", "2025-09-01", None, "2024-12-01"] * 6),
})


def test_filter_models_excludes_failing_and_unknown_and_counts_them():
    kept, counts = filter_models(MODELS, {"open_weights": True, "organizations_exclude": ["qwen"]})
    assert set(kept) == {f"m{i}" for i in range(30) if i % 5 in (1, 4)}
    assert counts == {"open_weights": (6, 6), "organizations_exclude": (6, 6)}
    kept, counts = filter_models(MODELS, {"min_context_window": 100000, "released_after": date(2025, 1, 1)})
    assert set(kept) == {f"m{i}" for i in range(30) if i % 5 == 2}
    assert counts["min_context_window"] == (12, 6) and counts["released_after"] == (12, 6)
    kept, _ = filter_models(MODELS, {"organizations_include": ["openai", "meta ai"]})
    assert set(kept) == {f"m{i}" for i in range(30) if i % 5 in (0, 1)}


def test_latency_is_a_second_constraint_and_unknown_latency_never_passes():
    latency = MODELS.assign(latency_s=([0.4, 2.5, np.nan, 0.9, 1.0] * 6))
    kept, counts = filter_models(latency, {"max_latency_s": 1})
    assert set(kept) == {f"m{i}" for i in range(30) if i % 5 in (0, 3, 4)}
    assert counts == {"max_latency_s": (6, 6)}
    kept, counts = filter_models(MODELS, {"max_latency_s": 1.5})  # no latency data at all: nothing passes
    assert kept.empty and counts == {"max_latency_s": (0, 30)}


def test_every_leaderboard_model_satisfies_the_filters():
    scenario = Scenario.from_dict({"name": "open_recent", "lam": 0.1, "filters": {
        "open_weights": True, "organizations_exclude": ["Mistral"], "released_after": "2025-01-01"}})
    inputs = dec.with_filters(_inputs(scenario), MODELS)
    board = dec.leaderboard_frame(inputs)
    attrs = MODELS.set_index("model_id").loc[board["model_id"]]
    assert len(board) == 12 and attrs["open_weights"].astype(bool).all()
    assert (attrs["release_date"] > "2025-01-01").all() and "mistral" not in set(attrs["organization"].str.lower())
    assert inputs.filter_note.startswith("filters keep 12 of 30 models (open_weights: 6 excluded, 6 more")
    # which models a filter dropped for an unknown attribute, by name (issue 42); mutation: names left out: red
    unknown = sorted(MODELS.loc[MODELS["open_weights"].isna(), "model_id"])
    assert f"6 more with the attribute unknown ({', '.join(unknown[:dec.MAX_GROUPS_NAMED])}" in inputs.filter_note
    recs = dec.recommendations_frame(inputs, dec.targets_frame(inputs)[0])
    assert set(recs["model_id"].dropna()) <= set(board["model_id"])


def test_a_filter_no_model_passes_gives_an_empty_leaderboard_not_a_crash():
    scenario = Scenario.from_dict({"name": "none", "filters": {"organizations_include": ["nobody"]}})
    inputs = dec.with_filters(_inputs(scenario), MODELS)
    assert dec.leaderboard_frame(inputs).empty
    assert dec.recommendations_frame(inputs, dec.targets_frame(inputs)[0])["model_id"].isna().all()


@pytest.mark.parametrize("filters, key, message", [
    ({"open_weight": True}, "filters.open_weight", "unknown filter 'open_weight'"),
    ({"open_weights": "yes"}, "filters.open_weights", "expected true or false, got 'yes'"),
    ({"organizations_exclude": "openai"}, "filters.organizations_exclude", "expected a list of organization names"),
    ({"organizations_include": [1, 2]}, "filters.organizations_include", "expected a list of organization names"),
    ({"min_context_window": -5}, "filters.min_context_window", "expected a whole number of tokens > 0, got -5"),
    ({"min_context_window": True}, "filters.min_context_window", "expected a whole number of tokens > 0"),
    ({"released_after": "last year"}, "filters.released_after", "expected a date YYYY-MM-DD, got 'last year'"),
    ({"max_latency_s": 0}, "filters.max_latency_s", "expected a number of seconds > 0, got 0"),
    ({"max_latency_s": ".5"}, "filters.max_latency_s", "expected a number of seconds > 0, got '.5'"),
    ({"max_latency_s": -1.5}, "filters.max_latency_s", "expected a number of seconds > 0, got -1.5"),
])
def test_bad_filters_name_file_key_and_value(tmp_path, filters, key, message):
    assert_scenario_rejected(tmp_path, f"filters: {filters!r}".replace("True", "true"), key, message)
