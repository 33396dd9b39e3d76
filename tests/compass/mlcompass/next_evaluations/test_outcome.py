"""The outcome-evaluation candidate (`next_evaluations_outcome`, eqs. (O1)-(O3)): valued from the bootstrap's draws of
every model's score conditioned on a simulated noisy observation of one, never from the point score. Synthetic draws.

Mutations applied by hand, each red: the draws of the model replaced by their mean (the point utility) before
conditioning; the observation simulated around the point score (y = mu_m + s z) instead of the predictive
distribution; the price without the query count; the other models' means held fixed (beta_n = 0 for n != m: the
correlated-leader test red, value 0.017 vs 0.0009)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from compass.mlcompass.next_evaluations_outcome import outcome_costs, outcome_noise_sd, outcome_values

MODELS = pd.Index(["lead", "second", "far"])


def _draws(sd_second: float, b: int = 400, seed: int = 0) -> np.ndarray:
    """B draws: 'lead' known to 0.001 at 1.0, 'second' N(0.97, sd_second), 'far' at 0.5."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((b, 3))
    z = (z - z.mean(axis=0)) / z.std(axis=0)
    return np.array([1.0, 0.97, 0.5]) + z * np.array([0.001, sd_second, 0.01])


def _value(draws: np.ndarray, noise: float, model: str = "second") -> float:
    costs = pd.Series(1.0, index=MODELS)
    return float(outcome_values(draws, MODELS, costs, noise).set_index("model_id").loc[model, "value"])


@pytest.mark.parametrize("noise", [0.01, 0.03, 0.05])
def test_value_is_the_normal_normal_preposterior_for_gaussian_draws(noise):
    """(O3) on Gaussian draws = tau f(-|mu_m - M| / tau), tau^2 = sigma^4 / (sigma^2 + s^2): the value comes from the
    draws' spread, shrunk by the observation's noise (red with the draws replaced by their mean: value 0; red with
    y simulated around the point score: far below at s << sigma)."""
    sigma, gap = 0.05, 0.03
    tau = sigma ** 2 / np.sqrt(sigma ** 2 + noise ** 2)
    closed = tau * (-gap / tau * norm.cdf(-gap / tau) + norm.pdf(-gap / tau))
    assert _value(_draws(sigma), noise) == pytest.approx(closed, rel=0.12)


def test_more_spread_in_the_draws_is_worth_more_and_noise_washes_it_out():
    sharp, wide = _draws(0.02, b=200), _draws(0.06, b=200)
    assert _value(wide, 0.02) > 2 * _value(sharp, 0.02)
    sigma = wide[:, 1].std(ddof=1)  # s -> 0: perfect information about S(second), tau = sigma
    perfect = sigma * (-0.03 / sigma * norm.cdf(-0.03 / sigma) + norm.pdf(-0.03 / sigma))
    assert _value(wide, 1e-4) == pytest.approx(perfect, rel=0.05)
    assert _value(wide, 5.0) < 0.02 * perfect
    assert _value(wide, 0.02, model="far") < 1e-6  # 'far' cannot reach the lead


def test_a_model_that_moves_with_the_leader_is_conditioned_jointly_not_against_a_fixed_leader():
    """Draws of 'second' and 'lead' correlated 0.9 (a shared utility refit): observing 'second' mostly moves both, so
    the value is far below the one with the leader held fixed (tau f(-gap / tau), 'second' alone), and near the
    closed form for the difference S(second) - S(lead), whose sd is sqrt(2 (1 - 0.9)) sigma."""
    rng = np.random.default_rng(1)
    shared, own = rng.standard_normal((400, 1)), rng.standard_normal((400, 3))
    z = np.sqrt(0.9) * shared + np.sqrt(0.1) * own
    z = (z - z.mean(axis=0)) / z.std(axis=0)
    sigma, gap, noise = 0.05, 0.005, 0.01
    draws = np.array([1.0, 0.995, 0.5]) + z * np.array([sigma, sigma, 0.001])
    tau = sigma ** 2 / np.sqrt(sigma ** 2 + noise ** 2)
    held_fixed = tau * (-gap / tau * norm.cdf(-gap / tau) + norm.pdf(-gap / tau))
    out = outcome_values(draws, MODELS, pd.Series(1.0, index=MODELS), noise).set_index("model_id")
    assert out.loc["second", "value"] < 0.25 * held_fixed
    c = np.cov(draws[:, :2], rowvar=False)
    t = (c[1, 1] - c[0, 1]) / np.sqrt(c[1, 1] + noise ** 2)  # sd of the shift of mu_second - mu_lead
    assert out.loc["second", "value"] == pytest.approx(t * (-gap / t * norm.cdf(-gap / t) + norm.pdf(-gap / t)),
                                                       rel=0.1)


def test_the_pick_if_high_or_low_follows_the_observation():
    out = outcome_values(_draws(0.06), MODELS, pd.Series(1.0, index=MODELS), 0.01).set_index("model_id")
    assert out.loc["second", ["pick_if_high", "pick_if_low"]].tolist() == ["second", "lead"]
    assert out.loc["lead", ["pick_if_high", "pick_if_low"]].tolist() == ["lead", "lead"]


def test_price_is_queries_times_the_workloads_tokens_at_the_models_prices_and_unpriced_is_no_candidate():
    prices = pd.DataFrame({"input_usd_per_mtok": [2.0, np.nan], "output_usd_per_mtok": [10.0, np.nan]},
                          index=["a", "b"])
    usd = outcome_costs(prices, {"input_tokens": 141, "output_tokens": 16}, n_queries=1000)
    assert usd["a"] == pytest.approx(1000 * (141 * 2.0 + 16 * 10.0) / 1e6)  # $0.44
    assert np.isnan(usd["b"])
    out = outcome_values(_draws(0.05)[:, :2], MODELS[:2], pd.Series([1.0, np.nan], index=MODELS[:2]), 0.01)
    assert out["model_id"].tolist() == ["lead"]


def test_noise_sd_of_a_rate_and_of_the_min_over_contexts():
    assert outcome_noise_sd(1000) == pytest.approx(0.5 / np.sqrt(1000))
    assert outcome_noise_sd(1000, "robust", 4) == pytest.approx(0.5 * np.sqrt(4 / 1000))
    with pytest.raises(ValueError):
        outcome_noise_sd(0)


def test_outcome_rows_join_the_table_ranked_with_the_cells_outside_the_greedy_batch_and_are_printed():
    """Three models, one unmeasured cell each: the outcome rows (kind 'outcome') are ranked with the cells by value,
    never in a greedy batch, and `compass next-evals` prints the one worth most with its price."""
    from compass.mlcompass.next_evaluations_decision import next_evaluations_table, short_list
    from pipelines.next_evals_cli import report

    draws = _draws(0.06, b=200)
    cols = ["a", "b"]
    completed = pd.DataFrame([[0.9, 0.8], [0.85, 0.7], [0.3, 0.2]], index=MODELS, columns=cols)
    sd = pd.DataFrame([[0.0, 0.1], [0.0, 0.1], [0.0, 0.1]], index=MODELS, columns=cols)
    gradient = pd.DataFrame(0.5, index=MODELS, columns=cols)
    usd = pd.DataFrame(2.0, index=MODELS, columns=cols)
    outcomes = outcome_values(draws, MODELS, pd.Series([0.5, 0.4, 0.1], index=MODELS), outcome_noise_sd(1000))
    table = next_evaluations_table(draws, completed, sd, gradient, usd, k_max=3, n_nodes=32, outcomes=outcomes)
    assert table["kind"].value_counts().to_dict() == {"cell": 3, "outcome": 3}
    assert list(table["rank_all"]) == list(range(1, 7)) and table["expected_reduction"].is_monotonic_decreasing
    for kind in ("cell", "outcome"):  # rank keeps its meaning among the cells; the outcome rows have their own
        assert sorted(table.loc[table["kind"] == kind, "rank"]) == [1, 2, 3]
    outcome = table[table["kind"] == "outcome"].set_index("model_id")
    assert (outcome[["greedy_step", "greedy_step_per_usd"]] == 0).all().all()
    assert outcome.loc["second", "expected_reduction"] > table.loc[table["kind"] == "cell", "expected_reduction"].max()
    chosen, _ = short_list(table, 5)
    assert set(chosen["kind"]) == {"cell"}
    text = report("c", "s", table.assign(pick="lead", pick_p_rank1=0.6, pick_rank_lo=1, pick_rank_hi=2), 5, None)
    assert "outcome directly" in text and "second" in text.split("outcome directly")[1] and "$0.40" in text


def test_value_se_is_the_spread_of_the_value_over_independent_draw_sets():
    """`value_se` (the jackknife over the B draws) against the sd of the value over 80 independent sets of 60 draws
    of 20 models correlated 0.6 (red with the jackknife's (B - 1) / B factor dropped to 1 / B: 8x too small)."""
    models = pd.Index([f"m{i}" for i in range(20)])
    mu, chol = np.linspace(0.8, 0.6, 20), np.linalg.cholesky(0.6 + 0.4 * np.eye(20))
    values, ses = [], []
    for seed in range(80):
        draws = mu + 0.1 * np.random.default_rng(seed).standard_normal((60, 20)) @ chol.T
        out = outcome_values(draws, models, pd.Series(1.0, index=models), 0.0158).set_index("model_id")
        values.append(out.loc["m2", "value"])
        ses.append(out.loc["m2", "value_se"])
    assert np.mean(ses) == pytest.approx(np.std(values, ddof=1), rel=0.3)


def test_a_free_cell_beside_outcome_rows_is_ranked_last_per_usd_not_an_error():
    """A cell priced $0 has no value per USD (NaN): beside outcome rows it is ranked last per USD, as `cell_values`
    ranks it alone (review of issue 49: the joint ranking raised IntCastingNaNError)."""
    from compass.mlcompass.next_evaluations_decision import next_evaluations_table

    draws = _draws(0.06, b=200)
    cols = ["a", "b"]
    completed = pd.DataFrame([[0.9, 0.8], [0.85, 0.7], [0.3, 0.2]], index=MODELS, columns=cols)
    sd = pd.DataFrame([[0.0, 0.1], [0.0, 0.1], [0.0, 0.1]], index=MODELS, columns=cols)
    usd = pd.DataFrame(2.0, index=MODELS, columns=cols)
    usd.loc["second", "b"] = 0.0  # the one cell with value
    outcomes = outcome_values(draws, MODELS, pd.Series([0.5, 0.4, 0.1], index=MODELS), outcome_noise_sd(1000))
    table = next_evaluations_table(draws, completed, sd, pd.DataFrame(0.5, index=MODELS, columns=cols), usd,
                                   k_max=3, n_nodes=32, outcomes=outcomes)
    free = table[(table["kind"] == "cell") & (table["cost_usd"] == 0)]
    assert len(free) == 1 and free["expected_reduction"].item() > 0 and free["rank_per_usd"].item() == 3 and free["rank_all_per_usd"].item() == len(table)
