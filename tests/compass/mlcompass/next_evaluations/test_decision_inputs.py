"""The posterior of a published decision turned into `next_evaluations` inputs (issue 49 items 1, 3): the chain-rule
gradient (G) through fixed loadings, the what-if picks and the answered cells. Synthetic data generated here.

Mutations applied by hand, each red: `measure_slopes` returning the pooled slope for every model, or its own
slopes unshrunk; `score_gradient`
without the 1 / sd_j of the standardization; `what_if` shifting the wrong way (sign of g dropped); `answered`
keeping cells still missing; `short_list` ignoring the budget; `short_list` reporting P(wrong) for a set that is
not a greedy prefix."""

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.next_evaluations_decision import answered, measure_slopes, score_gradient, short_list, what_if


def test_slopes_recover_each_models_own_utility_slope():
    rng = np.random.default_rng(0)
    b, n, k = 200, 5, 2
    measures = rng.normal(0.5, 0.1, (b, n, k))
    true = rng.normal(0, 1, (n, k))
    scores = (measures * true).sum(axis=2) + rng.normal(0, 0.001, (b, n))
    assert measure_slopes(scores, measures) == pytest.approx(true, abs=0.02)


def test_noisy_own_slopes_are_shrunk_toward_the_pooled_one():
    """The published regime (review of issue 49): B = 60 replicates, a model's own slope explaining about 5 % of its
    score's variance, models' true slopes close to one another. The shrunk slopes are nearer the truth than each
    model's own least-squares slope by a wide margin (red with the shrinkage skipped)."""
    rng = np.random.default_rng(3)
    b, n, k = 60, 64, 2
    measures = rng.normal(0.5, 0.05, (b, n, k))
    true = np.array([0.2, 0.3]) + rng.normal(0, 0.02, (n, k))
    scores = (measures * true).sum(axis=2) + rng.normal(0, 0.07, (b, n))
    own = np.stack([np.linalg.lstsq(measures[:, m] - measures[:, m].mean(0), scores[:, m] - scores[:, m].mean(),
                                    rcond=None)[0] for m in range(n)])
    shrunk = measure_slopes(scores, measures)
    assert np.mean((shrunk - true) ** 2) < 0.2 * np.mean((own - true) ** 2)


def test_gradient_is_the_chain_rule_through_the_fixed_affine_map():
    """Measures an exact affine function of the raw row (C known): g_mj = sum_f a_mf C_jf / sd_j, and the
    gradient predicts a finite move of a cell's score."""
    rng = np.random.default_rng(1)
    x = pd.DataFrame(rng.normal(0, [1.0, 3.0, 0.5], (40, 3)), columns=["a", "b", "c"])
    z = (x - x.mean()) / x.std()
    c = np.array([[0.5, 0.0], [0.2, 0.4], [0.0, -0.3]])
    measures = pd.DataFrame(0.1 + z.to_numpy() @ c, columns=["C1", "C2"])
    slopes = rng.normal(0, 1, (40, 2))
    g = score_gradient(x, measures, slopes)
    expected = slopes @ c.T / x.std().to_numpy()[None, :]
    assert g.to_numpy() == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_what_if_moves_the_pick_only_when_the_shift_crosses_the_leader():
    mu = np.array([1.0, 0.95, 0.5])
    models = pd.Index(["lead", "second", "far"])
    cells = pd.DataFrame({"model_id": ["second", "lead", "far", "second"], "gradient": [1.0, 1.0, 1.0, -1.0],
                          "tau": [0.1, 0.1, 0.01, 0.1]})
    out = what_if(mu, models, cells)
    assert out["pick_now"].eq("lead").all()
    assert out["pick_if_high"].tolist() == ["second", "lead", "lead", "lead"]
    assert out["pick_if_low"].tolist() == ["lead", "second", "lead", "second"]  # a negative g: low raises the score


def test_answered_keeps_only_cells_now_measured():
    previous = pd.DataFrame({"model_id": ["m1", "m2", "gone"], "benchmark": ["b"] * 3, "predicted": [0.5, 0.6, 0.7]})
    observed = pd.DataFrame({"b": [0.8, np.nan]}, index=["m1", "m2"])
    out = answered(previous, observed)
    assert out[["model_id", "measured"]].values.tolist() == [["m1", 0.8]]


def test_short_list_takes_the_greedy_prefix_and_under_a_budget_skips_what_does_not_fit():
    table = pd.DataFrame({"model_id": list("abcd"), "benchmark": "b", "cost_usd": [5.0, 50.0, 3.0, 1.0],
                          "greedy_step": [1, 2, 3, 0], "p_wrong_after": [0.5, 0.4, 0.3, np.nan],
                          "greedy_step_per_usd": [2, 3, 1, 0], "p_wrong_after_per_usd": [0.45, 0.35, 0.6, np.nan]})
    chosen, wrong = short_list(table, k=2)
    assert list(chosen["model_id"]) == ["a", "b"] and wrong == 0.4
    chosen, wrong = short_list(table, k=5, budget=10.0)  # c ($3), a ($5); b ($50) skipped; d adds nothing
    assert list(chosen["model_id"]) == ["c", "a"] and wrong == 0.45
    chosen, wrong = short_list(table, k=5, budget=7.0)  # c, then a does not fit: not the greedy prefix after c
    assert list(chosen["model_id"]) == ["c"] and wrong == 0.6
    chosen, wrong = short_list(table.assign(greedy_step_per_usd=[1, 2, 3, 0]), k=5, budget=10.0)  # a, (b), c
    assert list(chosen["model_id"]) == ["a", "c"] and wrong is None  # not a greedy prefix: not computed
