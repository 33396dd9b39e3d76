"""Tests of the §4.3.2 PGM fit, eq. 18 / eq. 23 oracles and the §4.4 LogNormal cost fit.

All data here are synthetic draws from compass.oracle.synthetic with known truth.
"""

import itertools

import numpy as np
import pytest
from scipy import special, stats

from compass.oracle.pgm import (PGMFit, fit_pgm, kshot_oracle, lognormal_cost_fit, pgm_oracle,
                                pgm_posthoc)
from compass.oracle.synthetic import generate, generate_counts

N, L, T = 300, 8, 4


def _naive_oracle(k, g):
    return float((k / g).max(axis=1).mean())  # eq. 5, max of sample means


@pytest.mark.parametrize("generations, max_err", [(1, 0.12), (2, 0.06)])
def test_pgm_oracle_beats_naive_max_of_means(generations, max_err):
    # The paper's claim (§4.3.2, eq. 18 vs eq. 5): the PGM plug-in oracle is far
    # less biased than the max of sample means when G is small.
    pgm_err, naive_err = [], []
    for seed in range(3):
        data = generate_counts(N, L, generations, n_topics=T, seed=seed)
        fit = fit_pgm(data.k, generations, n_topics=T, seed=seed)
        pgm_err.append(abs(pgm_oracle(fit) - data.true_oracle))
        naive_err.append(abs(_naive_oracle(data.k, generations) - data.true_oracle))
    assert all(p < n for p, n in zip(pgm_err, naive_err)), (pgm_err, naive_err)
    # measured (N=300, L=8): G=1 PGM +0.08 vs naive +0.45; G=2 PGM +0.03 vs naive +0.31
    assert np.mean(pgm_err) < 0.3 * np.mean(naive_err)
    assert np.mean(pgm_err) < max_err


def test_observed_topics_recover_true_p_with_many_generations():
    data = generate_counts(200, 6, 200, n_topics=3, seed=4)
    fit = fit_pgm(data.k, 200, topics=data.topics)
    assert np.abs(fit.p_hat - data.true_p).max() < 0.12
    assert np.sqrt(np.mean((fit.p_hat - data.true_p) ** 2)) < 0.03
    assert pgm_oracle(fit) == pytest.approx(data.true_oracle, abs=0.01)


@pytest.mark.parametrize("latent", [True, False])
def test_objective_non_decreasing_and_equals_log_likelihood(latent):
    data = generate_counts(N, L, 2, n_topics=T, seed=7)
    g = np.full(data.k.shape, 2)
    g[0, 0] = 0  # a missing cell must simply drop out
    k = np.minimum(data.k, g)
    fit = fit_pgm(k, g, topics=None if latent else data.topics, n_topics=T if latent else None, seed=0)
    trace = fit.elbo_trace
    assert len(trace) >= 3
    assert np.all(np.diff(trace) >= -1e-8 * np.abs(trace).max())
    assert trace[-1] > trace[0] + 1.0
    # brute-force log likelihood at the returned parameters
    s = 1 - fit.difficulty
    pi = s[:, None, None] * fit.aptitude[None]  # [N, T, L]
    cell = stats.binom.logpmf(k[:, None, :], g[:, None, :], pi).sum(axis=2)  # [N, T]
    if latent:
        expected = special.logsumexp(cell + np.log(fit.topic_weights), axis=1).sum()
        posterior = np.exp(cell + np.log(fit.topic_weights) - special.logsumexp(
            cell + np.log(fit.topic_weights), axis=1, keepdims=True))
        np.testing.assert_allclose(fit.topic_posteriors, posterior, atol=1e-9)
    else:
        codes = np.searchsorted(fit.topic_labels, data.topics)
        expected = (cell[np.arange(len(k)), codes] + np.log(fit.topic_weights)[codes]).sum()
    assert trace[-1] == pytest.approx(expected, rel=1e-10)
    np.testing.assert_allclose(fit.p_hat, s[:, None] * (fit.topic_posteriors @ fit.aptitude),
                               rtol=1e-9, atol=1e-15)


def test_fit_is_seeded_and_reports_convergence():
    data = generate_counts(N, L, 2, n_topics=T, seed=8)
    a = fit_pgm(data.k, 2, n_topics=T, seed=3)
    b = fit_pgm(data.k, 2, n_topics=T, seed=3)
    np.testing.assert_array_equal(a.p_hat, b.p_hat)
    assert a.converged and len(a.elbo_trace) <= 201
    short = fit_pgm(data.k, 2, n_topics=T, seed=3, max_iter=2)
    assert not short.converged and len(short.elbo_trace) == 3


def _fit_with(p_hat):
    n, m = p_hat.shape
    return PGMFit(p_hat=p_hat, topic_posteriors=np.ones((n, 1)), aptitude=np.ones((1, m)),
                  difficulty=np.zeros(n), topic_weights=np.ones(1), elbo_trace=np.zeros(1),
                  converged=True, topic_labels=np.arange(1))


def test_pgm_oracle_is_mean_row_max():
    p = np.array([[0.1, 0.7], [0.5, 0.2], [0.0, 0.0]])
    assert pgm_oracle(_fit_with(p)) == pytest.approx((0.7 + 0.5 + 0.0) / 3)


def test_posthoc_matches_brute_force_enumeration():
    # Eq. 22 in expectation: a prompt is solved if any of the k x L Bernoulli draws
    # succeeds. Enumerate every outcome exactly and compare with eq. 23.
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, size=(4, 2))
    table = pgm_posthoc(_fit_with(p), 3)
    assert list(table.columns) == ["k", "quality"] and table["k"].tolist() == [1, 2, 3]
    for kshot, quality in zip(table["k"], table["quality"]):
        total = 0.0
        for row in p:
            probs = np.repeat(row, kshot)
            for outcome in itertools.product([0, 1], repeat=probs.size):
                o = np.array(outcome)
                weight = np.prod(np.where(o == 1, probs, 1 - probs))
                total += weight * o.max()
        assert quality == pytest.approx(total / len(p), abs=1e-12)
    assert np.all(np.diff(table["quality"]) > 0)


def test_lognormal_cost_fit_recovers_mu_sigma():
    rng = np.random.default_rng(1)
    truth = {"cheap": (-8.0, 0.3), "pricey": (-4.0, 0.9)}
    costs = {m: rng.lognormal(mu, sd, size=20000) for m, (mu, sd) in truth.items()}
    out = lognormal_cost_fit(costs).set_index("model_id")
    assert list(out.columns) == ["mu", "sigma", "mean_cost", "n_calls"]
    for m, (mu, sd) in truth.items():
        assert out.loc[m, "mu"] == pytest.approx(mu, abs=3 * sd / np.sqrt(20000) + 1e-3)
        assert out.loc[m, "sigma"] == pytest.approx(sd, rel=0.02)
        # closed-form MLE: mean and ddof=0 std of log cost
        assert out.loc[m, "mu"] == pytest.approx(np.log(costs[m]).mean(), abs=1e-6)
        assert out.loc[m, "sigma"] == pytest.approx(np.log(costs[m]).std(), rel=1e-5)
        assert out.loc[m, "mean_cost"] == pytest.approx(np.exp(mu + sd**2 / 2), rel=0.02)


def test_lognormal_cost_fit_on_synthetic_records():
    data = generate(300, 4, 5, seed=2, cost_sigma=0.4)
    out = lognormal_cost_fit(data.records)
    assert out["model_id"].tolist() == [f"m{j:03d}" for j in range(4)]
    np.testing.assert_allclose(out["sigma"], 0.4, atol=0.02)
    np.testing.assert_allclose(out["mean_cost"], data.true_cost, rtol=0.03)
    assert (out["n_calls"] == 1500).all()


@pytest.mark.parametrize("k, g, kwargs, match", [
    (np.array([[3, 1]]), 2, {}, "k exceeds g at prompt 0, model 0"),
    (np.array([1, 1]), 2, {}, "2-D"),
    (np.array([[1, 1], [0, 1]]), np.ones((3, 2)), {}, "does not match"),
    (np.array([[1, 0], [0, 0]]), np.array([[2, 0], [2, 0]]), {}, "models with no trials"),
    (np.array([[1, 1], [0, 1]]), 2, {"topics": np.array([0, 1, 1])}, "one label per prompt"),
    (np.array([[1, 1], [0, 1]]), 2, {"n_topics": 5}, "n_topics"),
    (np.array([[1.5, 1], [0, 1]]), 2, {}, "integer counts"),
])
def test_fit_pgm_rejects_bad_input(k, g, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_pgm(k, g, **kwargs)


def test_cost_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="model 'bad'"):
        lognormal_cost_fit({"ok": [0.1, 0.2], "bad": [0.1, 0.0]})
    with pytest.raises(ValueError, match="at least 2"):
        lognormal_cost_fit({"one": [0.1]})
    with pytest.raises(ValueError, match="cost_usd"):
        lognormal_cost_fit(generate(5, 2, 1).records.drop(columns="cost_usd"))


def test_kshot_oracle_single_model_closed_form_and_validation():
    # one model, p = 0.3 on every prompt: 1 - 0.7^k
    table = kshot_oracle(np.full((5, 1), 0.3), 4)
    np.testing.assert_allclose(table["quality"], 1 - 0.7 ** np.arange(1, 5), rtol=1e-12)
    with pytest.raises(ValueError, match="probabilities"):
        kshot_oracle(np.array([[1.2]]), 2)
    with pytest.raises(ValueError, match="generations"):
        kshot_oracle(np.array([[0.2]]), 0)


def test_pgm_posthoc_tracks_true_kshot_curve():
    # eq. 23 from the fitted PGM vs eq. 23 on the true probabilities (measured gap <= 0.01)
    data = generate_counts(N, L, 10, n_topics=T, seed=0)
    fit = fit_pgm(data.k, 10, n_topics=T, seed=0)
    gap = pgm_posthoc(fit, 10)["quality"] - kshot_oracle(data.true_p, 10)["quality"]
    assert np.abs(gap).max() < 0.025
