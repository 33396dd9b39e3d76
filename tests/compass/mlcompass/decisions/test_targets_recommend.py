"""Continuous targets (Problems 4-6) and discrete recommendation (Problem 7) vs brute force."""

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.frontier import CESFrontier
from compass.mlcompass.recommend import expand_floors, model_scores, project_to_target, recommend, screen_models
from compass.mlcompass.targets import per_type_targets, solve_target, targets_table
from compass.mlcompass.theory import optimal_profile

NAMES = ["C1", "C2", "C3"]


def test_per_type_linear_target_matches_theorem_3_1():
    rng = np.random.default_rng(11)
    done = 0
    while done < 6:
        beta, a = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        b, d, c0 = rng.uniform(1.3, 4), rng.uniform(0.2, 1), rng.uniform(0.3, 1.2)
        R, B, lam = rng.uniform(0.05, 0.5, 3), rng.uniform(0.2, 1), rng.uniform(0.02, 2)
        try:
            opt = optimal_profile(beta, a, b, c0, d, R, B, lam)
        except ValueError:
            continue
        done += 1
        t = per_type_targets({"z": pd.Series(beta, index=NAMES)}, CESFrontier(a, b, c0, d), lam, NAMES, B,
                             dict(zip(NAMES, R)))["z"]
        assert t.feasible
        np.testing.assert_allclose(t.x_star.to_numpy(), opt.x_star, atol=1e-6)
        assert abs(t.c_star - opt.c_star) < 1e-6 and abs(t.objective - opt.objective) < 1e-8


def test_mean_of_linear_utilities_equals_theorem_with_averaged_beta():
    frontier = CESFrontier(np.array([0.3, 0.3, 0.4]), 2.5, 0.9, 0.6)
    betas = {"g1": pd.Series([0.7, 0.2, 0.1], index=NAMES), "g2": pd.Series([0.1, 0.3, 0.6], index=NAMES)}
    weights = {"g1": 3.0, "g2": 1.0}
    t = solve_target(betas, frontier, 0.4, NAMES, 0.8, {"all": 0.1}, aggregation="mean", weights=weights)
    beta_bar = 0.75 * betas["g1"].to_numpy() + 0.25 * betas["g2"].to_numpy()
    opt = optimal_profile(beta_bar, frontier.a, frontier.b, frontier.c0, frontier.d, [0.1] * 3, 0.8, 0.4)
    np.testing.assert_allclose(t.x_star.to_numpy(), opt.x_star, atol=1e-6)


def test_robust_target_matches_grid_search_and_is_below_mean():
    frontier = CESFrontier(np.array([0.55, 0.45]), 2.0, 0.8, 0.5)
    names = ["C1", "C2"]
    betas = {"ethics": pd.Series([0.9, 0.1], index=names), "safety": pd.Series([0.15, 0.85], index=names)}
    lam, B, floors = 0.2, 0.9, {"C1": 0.1, "C2": 0.1}
    robust = solve_target(betas, frontier, lam, names, B, floors, aggregation="robust")
    mean = solve_target(betas, frontier, lam, names, B, floors, aggregation="mean")
    g = np.linspace(0.1, 1.0, 901)
    X = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    X = X[frontier.capability(X) <= frontier.attainable(B)]
    obj = np.minimum(X @ betas["ethics"].to_numpy(), X @ betas["safety"].to_numpy()) - lam * frontier.min_cost(X)
    assert robust.objective >= obj.max() - 1e-9
    assert robust.objective - obj.max() < 2e-3  # grid resolution
    assert robust.objective <= mean.objective + 1e-12


def test_infeasible_floors_are_flagged_not_raised():
    frontier = CESFrontier(np.array([0.5, 0.5]), 2.0, 0.5, 0.5)
    t = solve_target({"z": pd.Series([0.5, 0.5], index=["C1", "C2"])}, frontier, 0.1, ["C1", "C2"], 0.5, {"all": 0.6})
    assert not t.feasible and "budget" in t.reason and t.x_star is None
    table = targets_table({"z": t})
    assert table.loc[0, "feasible"] == False  # noqa: E712


def test_black_box_utility_target_is_feasible_and_beats_screen():
    frontier = CESFrontier(np.array([0.5, 0.5]), 1.5, 0.9, 0.5)

    def step(x):  # piecewise-constant black box (LightGBM-like)
        x = np.atleast_2d(x)
        return 0.3 + 0.4 * (x[:, 0] > 0.5) + 0.2 * (x[:, 1] > 0.4)

    t = solve_target({"z": step}, frontier, 0.3, ["C1", "C2"], 1.0, {"all": 0.05})
    assert t.feasible and t.utility == pytest.approx(0.9)
    assert frontier.capability(t.x_star.to_numpy()) <= frontier.attainable(1.0) + 1e-9
    # the least-cost corner with both steps on: x = (0.5+, 0.4+); its cost is a lower bound
    assert t.c_star >= float(frontier.min_cost(np.array([0.5, 0.4]))) - 1e-9
    assert t.c_star <= float(frontier.min_cost(np.array([0.5, 0.4]))) + 0.05


def _random_models(rng, n=12):
    ids = [f"m{i:02d}" for i in range(n)]
    measures = pd.DataFrame(rng.uniform(0, 1, (n, 3)).round(1), index=ids, columns=NAMES)
    costs = pd.Series(rng.uniform(0, 1, n).round(1), index=ids)
    return measures, costs


def _brute_force(measures, costs, betas, lam, budget, floors, agg):
    best = None
    for m in measures.index:
        if costs[m] > budget or any(measures.at[m, k] < v for k, v in expand_floors(floors, NAMES).items()):
            continue
        us = [float(measures.loc[m] @ b) for b in betas.values()]
        u = min(us) if agg == "robust" else float(np.mean(us))
        key = (round(u - lam * costs[m], 12), -costs[m], [-ord(ch) for ch in m])
        if best is None or key > best[0]:
            best = (key, m)
    return None if best is None else best[1]


def test_recommendation_equals_exhaustive_argmax_with_low_cost_ties():
    rng = np.random.default_rng(21)
    for trial in range(40):
        measures, costs = _random_models(rng)
        betas = {g: pd.Series(rng.dirichlet(np.ones(3)).round(2), index=NAMES) for g in ("a", "b")}
        lam = [0.0, 0.1, 1.0][trial % 3]
        budget = rng.choice([1.0, 0.6])
        floors = [{}, {"C2": 0.5}, {"all": 0.3}][trial % 3]
        for agg in ("mean", "robust"):
            rec = recommend(measures, costs, betas, lam, budget, floors, aggregation=agg)
            expected = _brute_force(measures, costs, betas, lam, budget, floors, agg)
            assert rec.model_id == expected
            assert rec.feasible == (expected is not None)
        # duplicate the best model at a higher cost: the cheaper copy must still win
        rec = recommend(measures, costs, betas, 0.0, 1.0, {})
        dup_m = measures.loc[[rec.model_id]].rename(index=lambda s: "a_dup")
        dup_c = pd.Series({"a_dup": costs[rec.model_id] + 0.05})
        again = recommend(pd.concat([measures, dup_m]), pd.concat([costs, dup_c]), betas, 0.0)
        assert again.model_id == rec.model_id


def test_projection_equals_brute_force_nearest_feasible():
    rng = np.random.default_rng(5)
    for _ in range(20):
        measures, costs = _random_models(rng)
        x_star, c_star = pd.Series(rng.uniform(0, 1, 3), index=NAMES), float(rng.uniform(0, 1))
        rec = project_to_target(measures, costs, x_star, c_star, budget=0.7, floors={"C1": 0.2})
        ok = (costs <= 0.7) & (measures["C1"] >= 0.2)
        dist = np.sqrt(((measures[ok] - x_star) ** 2).sum(axis=1) + (costs[ok] - c_star) ** 2)
        assert rec.model_id == dist.idxmin()
        assert rec.distance == pytest.approx(dist.min())


def test_raw_benchmark_floors_screen_and_missing_scores_are_infeasible():
    measures = pd.DataFrame({"C1": [0.9, 0.5, 0.2], "C2": [0.1, 0.6, 0.9]}, index=["a", "b", "c"])
    costs = pd.Series({"a": 0.2, "b": 0.9, "c": 0.1})
    raw = pd.DataFrame({"gpqa_diamond": [0.55, np.nan, 0.3]}, index=["a", "b", "c"])
    screen = screen_models(measures, costs, budget=0.5, floors={"C2": 0.2}, raw_scores=raw,
                           raw_floors={"gpqa_diamond": 0.5}).set_index("model_id")
    assert screen.loc["a", "reason"] == "floor:C2"
    assert screen.loc["b", "reason"] == "budget;raw_missing:gpqa_diamond"
    assert screen.loc["c", "reason"] == "raw_floor:gpqa_diamond"
    rec = recommend(measures, costs, {"z": pd.Series({"C1": 0.5, "C2": 0.5})}, 0.1, 0.5, {"C2": 0.2},
                    raw_scores=raw, raw_floors={"gpqa_diamond": 0.5})
    assert rec.model_id is None and not rec.feasible and "no available model" in rec.reason
    with pytest.raises(ValueError, match="raw_scores"):
        screen_models(measures, costs, raw_floors={"gpqa_diamond": 0.5})
    with pytest.raises(ValueError, match="unknown internal measure"):
        screen_models(measures, costs, floors={"C9": 0.5})


def test_model_scores_columns_and_values():
    measures = pd.DataFrame({"C1": [1.0, 0.0], "C2": [0.0, 1.0]}, index=["x", "y"])
    costs = pd.Series({"x": 0.5, "y": 0.1})
    s = model_scores(measures, costs, {"g": pd.Series({"C1": 0.6, "C2": 0.4})}, lam=0.5)
    assert list(s.columns) == ["model_id", "utility", "cost", "score"]
    # both score 0.35: the tie goes to the cheaper model y
    assert s["model_id"].tolist() == ["y", "x"]
    np.testing.assert_allclose(s["score"], [0.4 - 0.05, 0.6 - 0.25])


def test_ties_go_to_the_lower_cost_at_lam_zero():
    """A step utility (LightGBM-like) is flat above C1 = 0.2: at lam = 0 every x with C1 >= 0.2 ties, and the
    target must be the cheapest of them, the same as with an infinitesimal lam (it was 0.199 vs 0.058)."""
    frontier = CESFrontier(np.array([0.5, 0.5]), 2.0, 1.0, 0.6)

    def step(x):
        return (np.atleast_2d(x)[:, 0] >= 0.2).astype(float)

    at_zero = solve_target({"g": step}, frontier, 0.0, ["C1", "C2"], n_screen=1024, n_starts=0)
    tiny = solve_target({"g": step}, frontier, 1e-9, ["C1", "C2"], n_screen=1024, n_starts=0)
    assert at_zero.utility == tiny.utility == 1.0
    assert at_zero.c_star == pytest.approx(tiny.c_star, abs=1e-12)
    assert at_zero.x_star["C1"] >= 0.2  # the cheapest point of a 1,024-point screen: within 25% of the optimum
    assert at_zero.c_star <= 1.25 * float(frontier.min_cost(np.array([[0.2, 0.0]]))[0])
