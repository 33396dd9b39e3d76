"""Scenario specs, deployment-aware leaderboards (§4.6) and policy values (Table 5) vs direct computation."""

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.policy_values import observed_winners, policy_selections, policy_values
from compass.mlcompass.scenarios import LEADERBOARD_COLUMNS, Scenario, leaderboard, paper_scenarios

NAMES = ["C1", "C2"]
BETAS = {"ethics": pd.Series([0.9, 0.1], index=NAMES), "safety": pd.Series([0.2, 0.8], index=NAMES)}


def _toy():
    """Hand-made 4-model market (synthetic)."""
    measures = pd.DataFrame(
        {"C1": [1.0, 0.6, 0.3, 0.8], "C2": [0.3, 0.7, 0.9, 0.8]}, index=["chatty", "balanced", "safe", "premium"]
    )
    costs = pd.Series({"chatty": 0.1, "balanced": 0.3, "safe": 0.2, "premium": 1.0})
    return measures, costs


def test_paper_scenarios_and_lambda_rules():
    scen = {s.name: s for s in paper_scenarios()}
    assert list(scen) == ["pure_capability", "cost_aware_low", "cost_aware_high", "constrained_single", "constrained_all"]
    assert [scen[n].resolve_lambda("prism") for n in scen] == [0.0, 0.05, 0.5, 0.05, 0.05]
    assert [scen[n].resolve_lambda("healthbench") for n in scen] == [0.0, 0.5, 5.0, 0.5, 0.5]
    assert scen["constrained_single"].floors == {"C2": 0.5} and scen["constrained_all"].floors == {"all": 0.33}
    with pytest.raises(ValueError, match="dataset"):
        scen["cost_aware_low"].resolve_lambda(None)


def test_scenario_yaml_roundtrip(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: clinic\nlam: 0.5\nbudget: 0.4\nfloors: {all: 0.33}\nraw_floors: {gpqa_diamond: 0.5}\n"
        "context_weights: {ethics: 2, safety: 1}\naggregation: robust\n"
    )
    s = Scenario.from_yaml(path)
    assert s == Scenario("clinic", 0.5, 0.4, {"all": 0.33}, {"gpqa_diamond": 0.5}, {"ethics": 2.0, "safety": 1.0}, "robust")
    with pytest.raises(ValueError, match="unknown scenario key"):
        Scenario.from_dict({"name": "x", "lambda": 1})
    with pytest.raises(ValueError, match="aggregation"):
        Scenario.from_dict({"name": "x", "aggregation": "median"})


def test_leaderboard_matches_direct_computation_and_names_binding_constraints():
    measures, costs = _toy()
    s = Scenario("t", lam=0.2, budget=0.5, floors={"C2": 0.5})
    board = leaderboard(measures, costs, BETAS, s)
    assert list(board.columns) == LEADERBOARD_COLUMNS
    # direct: mean utility = 0.55 C1 + 0.45 C2; feasible = cost <= 0.5 and C2 >= 0.5 -> balanced, safe
    u = 0.55 * measures["C1"] + 0.45 * measures["C2"]
    score = u - 0.2 * costs
    assert board["model_id"].tolist() == ["balanced", "safe"]
    np.testing.assert_allclose(board["score"], score[["balanced", "safe"]])
    np.testing.assert_allclose(board["utility"], u[["balanced", "safe"]])
    assert board["rank"].tolist() == [1, 2]
    # premium (score 0.6) is cut by the budget, chatty (score 0.665) by the C2 floor
    assert score["premium"] > score["balanced"] and score["chatty"] > score["balanced"]
    assert board.loc[0, "binding"] == "budget;floor:C2"
    assert board.attrs["feasible"] and board.attrs["lam"] == 0.2


def test_leaderboard_unconstrained_binding_none_and_robust_below_mean():
    measures, costs = _toy()
    mean_board = leaderboard(measures, costs, BETAS, Scenario("m", lam=0.05))
    robust_board = leaderboard(measures, costs, BETAS, Scenario("r", lam=0.05, aggregation="robust"))
    assert (mean_board["binding"] == "none").all() and len(mean_board) == 4
    merged = mean_board.merge(robust_board, on="model_id", suffixes=("_mean", "_robust"))
    assert (merged["score_robust"] <= merged["score_mean"] + 1e-12).all()
    worst = np.minimum(measures @ BETAS["ethics"], measures @ BETAS["safety"]) - 0.05 * costs
    np.testing.assert_allclose(robust_board.set_index("model_id")["score"], worst[robust_board["model_id"]])


def test_leaderboard_raw_floor_and_infeasible_scenario():
    measures, costs = _toy()
    raw = pd.DataFrame({"gpqa_diamond": [0.4, 0.6, np.nan, 0.7]}, index=measures.index)
    board = leaderboard(measures, costs, BETAS, Scenario("g", lam=0.0, raw_floors={"gpqa_diamond": 0.5}), raw_scores=raw)
    assert set(board["model_id"]) == {"balanced", "premium"}
    infeasible = leaderboard(measures, costs, BETAS, Scenario("none", lam=0.1, budget=0.05))
    assert infeasible.empty and list(infeasible.columns) == LEADERBOARD_COLUMNS
    assert infeasible.attrs["feasible"] is False and "no available model" in infeasible.attrs["reason"]


def test_leaderboard_ties_go_to_lower_cost():
    measures = pd.DataFrame({"C1": [0.5, 0.5], "C2": [0.5, 0.5]}, index=["pricey", "cheap"])
    costs = pd.Series({"pricey": 0.9, "cheap": 0.1})
    board = leaderboard(measures, costs, BETAS, Scenario("pure", lam=0.0))
    assert board["model_id"].tolist() == ["cheap", "pricey"]


def _interactions():
    rows = [("ethics", "chatty")] * 5 + [("ethics", "premium")] * 3 + [("safety", "premium")] * 4 + [("safety", "safe")] * 2
    return pd.DataFrame(rows, columns=["group", "model_id"])


def test_observed_winners_respect_feasibility():
    inter = _interactions()
    assert observed_winners(inter, "most_selected", ["chatty", "premium", "safe"]) == {"ethics": "chatty", "safety": "premium"}
    assert observed_winners(inter, "most_selected", ["chatty", "safe"]) == {"ethics": "chatty", "safety": "safe"}
    scored = inter.assign(score=[1, 1, 1, 1, 1, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.9, 0.9])
    assert observed_winners(scored, "highest_mean", ["chatty", "premium", "safe"], outcome_col="score") == {
        "ethics": "chatty", "safety": "safe"}


def test_policy_values_hand_computed():
    measures, costs = _toy()
    raw = pd.DataFrame({"mmlu": [0.5, 0.6, 0.7, 0.9], "mteb": [0.9, 0.1, 0.2, 0.3]}, index=measures.index)
    lam = 0.2
    s = Scenario("cost_aware", lam=lam)
    sel = policy_selections(measures, costs, BETAS, s, _interactions(), "most_selected", raw_scores=raw)
    table = sel.set_index(["policy", "group"])["model_id"]
    u = pd.DataFrame({g: measures @ b for g, b in BETAS.items()})
    obj = u.sub(lam * costs, axis=0)
    assert table["mlc_per_type", "ethics"] == obj["ethics"].idxmax()
    assert table["mlc_per_type", "safety"] == obj["safety"].idxmax()
    assert table["mlc_mean", "all"] == obj.mean(axis=1).idxmax()
    assert table["mlc_robust", "all"] == obj.min(axis=1).idxmax()
    assert table["actual_mean", "all"] == "premium"  # 7 of 14 selections overall
    assert table["baseline:mmlu", "all"] == "premium" and table["baseline:mteb", "all"] == "chatty"
    assert table["baseline:cost", "all"] == "chatty"

    values = policy_values(measures, costs, BETAS, s, _interactions(), "most_selected", raw_scores=raw).set_index("policy")
    per_type = [obj.at[table["mlc_per_type", g], g] for g in BETAS]
    assert values.at["mlc_per_type", "value"] == pytest.approx(np.mean(per_type))
    assert values.at["mlc_per_type", "sd"] == pytest.approx(np.std(per_type, ddof=1))
    actual = [obj.at["chatty", "ethics"], obj.at["premium", "safety"]]
    assert values.at["actual_per_type", "value"] == pytest.approx(np.mean(actual))
    single = obj.mean(axis=1)
    assert values.at["mlc_mean", "value"] == pytest.approx(single.max())
    assert values.at["actual_mean", "value"] == pytest.approx(single["premium"])
    rules = [single["premium"], single["chatty"], single["chatty"]]
    assert values.at["baselines", "value"] == pytest.approx(np.mean(rules))
    assert values.at["baselines", "sd"] == pytest.approx(np.std(rules, ddof=1))
    # Without selection costs, MLC (mean) is selected on the evaluated metric itself, so it wins among
    # single-model policies by construction (not a finding); per-type dominates at lam = 0
    assert values.at["mlc_mean", "value"] >= max(values.at["actual_mean", "value"], values.at["mlc_robust", "value"])
    pure = policy_values(measures, costs, BETAS, Scenario("pure", lam=0.0), _interactions(), "most_selected",
                         raw_scores=raw).set_index("policy")["value"]
    assert pure["mlc_per_type"] >= pure.drop("mlc_per_type").max() - 1e-12


def test_policy_values_with_tier_costs_for_selection_evaluates_actual_cost():
    measures, costs = _toy()
    tier_costs = pd.Series({"chatty": 0.1, "balanced": 0.1, "safe": 0.1, "premium": 0.1})
    s = Scenario("c", lam=0.5)
    sel = policy_selections(measures, costs, BETAS, s, _interactions(), "most_selected", selection_costs=tier_costs)
    # with flat selection costs the mean policy picks the highest mean utility model (premium)...
    assert sel.set_index(["policy", "group"]).at[("mlc_mean", "all"), "model_id"] == "premium"
    values = policy_values(measures, costs, BETAS, s, _interactions(), "most_selected",
                           selection_costs=tier_costs).set_index("policy")
    # ...but it is evaluated at its actual cost 1.0
    expected = float((measures.loc["premium"] @ BETAS["ethics"] + measures.loc["premium"] @ BETAS["safety"]) / 2 - 0.5)
    assert values.at["mlc_mean", "value"] == pytest.approx(expected)
    # The actual-cost variant selects on the evaluated objective: the best single model, here not premium, so
    # under the paper's protocol MLC (mean) can lose to it and to the observed winner.
    obj = pd.DataFrame({g: measures @ b for g, b in BETAS.items()}).sub(0.5 * costs, axis=0)
    assert sel.set_index(["policy", "group"]).at[("mlc_mean_actual_cost", "all"), "model_id"] == obj.mean(axis=1).idxmax()
    assert values.at["mlc_mean_actual_cost", "value"] == pytest.approx(obj.mean(axis=1).max())
    assert values.at["mlc_mean", "value"] < values.at["mlc_mean_actual_cost", "value"] - 0.1
    per_type = [obj[g].max() for g in BETAS]
    assert values.at["mlc_per_type_actual_cost", "value"] == pytest.approx(np.mean(per_type))


def test_stacked_leaderboards_and_scenario_targets():
    from compass.mlcompass.frontier import CESFrontier
    from compass.mlcompass.scenarios import leaderboards, scenario_targets

    measures, costs = _toy()
    scenarios = [Scenario("pure", lam=0.0), Scenario("none", lam=0.1, budget=0.05)]
    stacked = leaderboards(measures, costs, BETAS, scenarios)
    assert stacked.groupby("scenario").size().to_dict() == {"none": 1, "pure": 4}
    assert not stacked.loc[stacked["scenario"] == "none", "feasible"].any()
    frontier = CESFrontier(np.array([0.5, 0.5]), 2.0, 0.8, 0.5)
    t = scenario_targets(BETAS, frontier, Scenario("c", lam=0.2, floors={"all": 0.1}), NAMES).set_index("group")
    assert list(t.index) == ["ethics", "safety", "mean", "robust"] and t["feasible"].all()
    assert t.at["robust", "objective"] <= t.at["mean", "objective"] + 1e-12
    # the per-type optimum is at least as good for its own type as the pooled targets
    for g, beta in BETAS.items():
        for pooled in ("mean", "robust"):
            x = t.loc[pooled, ["x_C1", "x_C2"]].to_numpy(dtype=float)
            assert t.at[g, "objective"] >= float(x @ beta.to_numpy()) - 0.2 * t.at[pooled, "c_star"] - 1e-9


def test_tier_cost_ties_go_to_the_lower_actual_cost_not_the_model_id():
    # Two models with equal utility in every context and the same tier (so the same selection cost): the paper
    # picks the lower actual cost (§5.6); "a-pricey" precedes "b-cheap" alphabetically, so an id tie-break
    # would pick the expensive one.
    measures = pd.DataFrame({"C1": [0.7, 0.7, 0.2], "C2": [0.6, 0.6, 0.2]}, index=["a-pricey", "b-cheap", "c-weak"])
    costs = pd.Series({"a-pricey": 0.9, "b-cheap": 0.2, "c-weak": 0.0})
    tier_costs = pd.Series({"a-pricey": 0.5, "b-cheap": 0.5, "c-weak": 0.0})
    for lam in (0.0, 0.05):
        sel = policy_selections(measures, costs, BETAS, Scenario("s", lam=lam), _interactions(), "most_selected",
                                selection_costs=tier_costs).set_index(["policy", "group"])["model_id"]
        for policy in ("mlc_per_type", "mlc_mean", "mlc_robust"):
            picked = sel[policy] if policy != "mlc_per_type" else sel[policy].loc[list(BETAS)]
            assert set(np.atleast_1d(picked)) == {"b-cheap"}, (lam, policy, picked)
        values = policy_values(measures, costs, BETAS, Scenario("s", lam=lam), _interactions(), "most_selected",
                               selection_costs=tier_costs).set_index("policy")["value"]
        u = np.mean([measures.loc["b-cheap"] @ b for b in BETAS.values()])
        assert values["mlc_mean"] == pytest.approx(u - lam * 0.2)
