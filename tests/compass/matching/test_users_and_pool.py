"""Table 5 parsing, users A1-A4 and their feasible sets (spec-004 §4.1 oracles), bad user files, costs."""

import numpy as np
import pytest
import yaml

from compass.ingest.errors import IngestError
from compass.matching.costs import TokenModel
from compass.matching.pool import parse_value, read_pool
from compass.matching.users import User
from tests.paths import ROOT

ZOO = read_pool(ROOT / "data" / "matching" / "openai_zoo.csv")
COLUMNS = list(ZOO.metadata.columns)
FEASIBLE = {  # spec-004 §4.1, counted on Table 5 with "-" infeasible
    "a1": {"GPT-4.1-Nano", "GPT-5-Nano"},
    "a2": {"GPT-4.1", "o4-mini", "GPT-4.1-Mini", "GPT-4.1-Nano", "GPT-4o-Mini", "GPT-4o", "GPT-5-Mini", "GPT-5-Nano",
           "GPT-5", "o3"},
    "a3": {"GPT-5-Mini", "GPT-5-Nano"},
    "a4": {"GPT-4.1-Mini", "GPT-4.1-Nano", "GPT-4o-Mini", "GPT-5-Mini", "GPT-5-Nano"},
}


def shipped(name):
    path = ROOT / "users" / f"{name}.yaml"
    return User.from_dict(yaml.safe_load(path.read_text()), str(path), COLUMNS)


def test_table5_cells():
    assert [parse_value(v) for v in ("128k", "2M", "-", "0.4")][:2] == [128e3, 2e6]
    assert np.isnan(parse_value("-")) and parse_value("24-Jun") == pytest.approx(2024 + 5 / 12)
    assert ZOO.size == 25 and ZOO.metadata.shape[1] == 34
    gpt4 = ZOO.models.index("GPT-4")
    assert ZOO.cost_proxy[gpt4] == 90 and ZOO.reasoning.sum() == 9


@pytest.mark.parametrize("name", sorted(FEASIBLE))
def test_shipped_users_have_the_spec_feasible_sets(name):
    user = shipped(name)
    assert {ZOO.models[i] for i in np.flatnonzero(user.feasible(ZOO))} == FEASIBLE[name]
    assert (user.budget_usd, user.rounds, user.seeds) == (0.05, 10, (42, 43, 44, 45, 46))


def test_a_missing_value_never_meets_a_constraint():
    user = User.from_dict({"name": "u", "pool": "p", "constraints": {"rl_free": {"min": 0}}}, "u.yaml", COLUMNS)
    known = ~ZOO.metadata["rl_free"].isna().to_numpy()
    assert (user.feasible(ZOO) == known).all() and known.sum() == 4


@pytest.mark.parametrize("spec,key,words", [
    ({"constraints": {"price": {"max": 1}}}, "constraints.price", "unknown column"),
    ({"constraints": {"output_price": {"max": "cheap"}}}, "constraints.output_price", "expected true/false"),
    ({"constraints": {"output_price": {"below": 1}}}, "constraints.output_price", "expected true/false"),
    ({"constraints": {"text_in": "yes"}}, "constraints.text_in", "expected true/false"),
    ({"constraints": {"text_in": True}, "budget": 1}, "budget", "unknown key"),
    ({"constraints": {"text_in": True}, "budget_usd": -1}, "budget_usd", "> 0"),
    ({"constraints": {"text_in": True}, "rounds": 2.5}, "rounds", "whole number"),
    ({"constraints": {"text_in": True}, "seeds": 0}, "seeds", "a count >= 1"),
    ({"constraints": {"text_in": True}, "heavy_seeds": [1.5]}, "heavy_seeds", "whole numbers"),
    ({"constraints": {"text_in": True}, "seeds": [3, -1]}, "seeds", "whole numbers >= 0"),
    ({"constraints": {"text_in": True}, "judge_noise": 0.5}, "judge_noise", "[0, 0.5)"),
    ({"constraints": {"rl_tier5": {"min": 1}}}, "constraints.rl_tier5", "did you mean rl_t5"),
])
def test_bad_user_files_name_file_and_key(spec, key, words):
    with pytest.raises(IngestError) as err:
        User.from_dict({"name": "u", "pool": "openai_zoo", **spec}, "users/u.yaml", COLUMNS)
    assert err.value.file == "users/u.yaml" and err.value.column == key and words in str(err.value)


def test_call_costs_from_prices_and_matharena_tokens():
    tokens = TokenModel.from_matharena(ROOT / "data" / "matching" / "matharena_tokens.csv")
    # median output tokens per AIME problem: thinking 11,640 (R1 11,490 / Qwen-14B 11,789), non-thinking 2,318
    assert tokens.reasoning_factor == pytest.approx(((11490.0 + 11789.2) / 2) / 2318.3)
    cost = tokens.call_cost(ZOO)
    gpt4, gpt5 = ZOO.models.index("GPT-4"), ZOO.models.index("GPT-5")
    assert cost[gpt4] == pytest.approx((150 * 30 + 500 * 60) / 1e6)
    assert cost[gpt5] == pytest.approx((150 * 1.25 + 500 * tokens.reasoning_factor * 10) / 1e6)
    aime = TokenModel.from_matharena(ROOT / "data" / "matching" / "matharena_tokens.csv", absolute=True)
    assert aime.tok_out * aime.reasoning_factor == pytest.approx((11490.0 + 11789.2) / 2)


def test_seeds_as_a_count_and_heavy_seeds_under_compass_heavy(tmp_path, monkeypatch):
    from resources.matching import load_user

    user = User.from_dict({"name": "u", "pool": "openai_zoo", "constraints": {"text_in": True}, "seeds": 3,
                           "heavy_seeds": 50, "judge_noise": 0.2}, "u.yaml", COLUMNS)
    assert user.seeds == (42, 43, 44) and user.heavy_seeds == tuple(range(42, 92)) and user.judge_noise == 0.2
    path = tmp_path / "u.yaml"
    path.write_text("pool: openai_zoo\nconstraints: {text_in: true}\nseeds: 3\nheavy_seeds: 50\n")
    assert len(load_user(path)[0].seeds) == 3
    monkeypatch.setenv("COMPASS_HEAVY", "1")
    assert len(load_user(path)[0].seeds) == 50
