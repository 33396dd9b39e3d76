import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from compass.oracle.bias_correction import bias_corrected_oracle, expected_naive
from compass.oracle.naive import naive_oracle
from compass.oracle.records import build_arrays, from_arrays
from compass.oracle.shrinkage import expected_max, fit_priors, posterior_means, shrinkage_oracle
from compass.oracle.split_sample import split_sample_oracle
from compass.oracle.synthetic import generate
from tests.compass.oracle.core.conftest import beta_outcomes


def test_split_sample_is_low_and_naive_high_on_synthetic():
    errs_split, errs_naive = [], []
    for seed in range(3):
        data = generate(150, 5, 4, seed=seed)
        arr = build_arrays(data.records)
        errs_split.append(split_sample_oracle(arr)[0] - data.true_oracle)
        errs_naive.append(naive_oracle(arr)[0] - data.true_oracle)
    assert np.mean(errs_split) < -0.01  # biased low (held-out scoring of a noisy pick)
    assert np.mean(errs_naive) > 0.05  # biased high (optimizer's curse, §4.1)


def test_split_sample_leave_one_out_by_hand():
    # one prompt, two models, G = 2: m0 = (1, 0), m1 = (1, 1)
    out = np.array([[[1.0, 0.0], [1.0, 1.0]]])
    arr = from_arrays(out, np.array([1.0, 2.0]))
    # hold out g0: select on g1 -> m1 (1 vs 0), score 1. hold out g1: select on g0 -> tie -> m0 (cheaper), score 0
    q, c = split_sample_oracle(arr)
    assert q == pytest.approx(0.5) and c == pytest.approx(1.5)


def test_split_sample_g1_uses_topic_router():
    out = np.zeros((8, 2, 1))
    out[::2, 0, 0] = 1.0  # topic "a" (even prompts): m0 always right
    out[1::2, 1, 0] = 1.0  # topic "b": m1 always right
    arr = from_arrays(out, np.ones(2), topics=np.array(["a", "b"] * 4))
    assert split_sample_oracle(arr)[0] == pytest.approx(1.0)


def test_eb_recovers_prior():
    out, _ = beta_outcomes(3000, 2, 10, a=2.0, b=5.0, seed=11)
    pr = fit_priors(from_arrays(out, np.ones(2)))
    np.testing.assert_allclose(pr.a, 2.0, rtol=0.2)
    np.testing.assert_allclose(pr.b, 5.0, rtol=0.2)
    np.testing.assert_allclose(pr.a / (pr.a + pr.b), 2 / 7, atol=0.01)


def test_posterior_means_are_conjugate():
    out, _ = beta_outcomes(50, 2, 5, seed=1)
    arr = from_arrays(out, np.ones(2))
    pr = fit_priors(arr)
    post = posterior_means(arr, pr)
    np.testing.assert_allclose(post, (pr.a + arr.successes) / (pr.a + pr.b + 5))


def test_expected_max_closed_forms():
    # max of two U(0,1) has mean 2/3; of Beta(2,1) and a point mass-like Beta(1e4·0.5, 1e4·0.5) ≈ E[max(X, 0.5)]
    assert expected_max(np.array([[1.0, 1.0]]), np.array([[1.0, 1.0]]))[0] == pytest.approx(2 / 3, abs=1e-10)
    x = np.linspace(0.5, 1, 200001)
    ref = 0.5 * beta_dist.cdf(0.5, 2, 1) + np.trapezoid(x * beta_dist.pdf(x, 2, 1), x)
    got = expected_max(np.array([[2.0, 5e3]]), np.array([[1.0, 5e3]]), nodes=200)[0]
    assert got == pytest.approx(ref, abs=2e-3)


def test_shrinkage_method_error():
    arr = from_arrays(beta_outcomes(10, 2, 3)[0], np.ones(2))
    with pytest.raises(ValueError, match="unknown shrinkage method"):
        shrinkage_oracle(arr, "median")


def test_expected_naive_reduces_to_eq10():
    p = np.full((3, 4), 0.3)
    q, _ = expected_naive(p, 5, np.ones((3, 4)))
    j = np.arange(5)
    from scipy.stats import binom
    assert q == pytest.approx(np.sum(1 - binom.cdf(j, 5, 0.3) ** 4) / 5)


def test_posterior_bias_correction_is_unbiased_when_beta_binomial_holds():
    errs_post, errs_naive = [], []
    for seed in range(3):
        out, p = beta_outcomes(300, 6, 5, a=2.0, b=3.0, seed=seed)
        arr = from_arrays(out, np.linspace(1, 3, 6))
        truth = p.max(axis=1).mean()
        errs_post.append(bias_corrected_oracle(arr, "posterior", n_draws=8)[0] - truth)
        errs_naive.append(naive_oracle(arr)[0] - truth)
    assert np.mean(errs_naive) > 0.08
    assert abs(np.mean(errs_post)) < 0.012


def test_mean_plugin_bias_correction_over_corrects_when_beta_binomial_holds():
    """Restored (issue 28): against a true beta-binomial world the mean plug-in correction lands below the truth,
    because posterior means are more concentrated than the cells' true probabilities (about -3.4 points here);
    the posterior-draw version does not. Six seeds; the shortfall must exceed three standard errors."""
    errs_mean, errs_post = [], []
    for seed in range(6):
        out, p = beta_outcomes(300, 6, 5, a=2.0, b=3.0, seed=seed)
        arr = from_arrays(out, np.linspace(1, 3, 6))
        truth = p.max(axis=1).mean()
        errs_mean.append(bias_corrected_oracle(arr, "mean")[0] - truth)
        errs_post.append(bias_corrected_oracle(arr, "posterior", n_draws=8)[0] - truth)
    se = np.std(errs_mean, ddof=1) / np.sqrt(len(errs_mean))
    assert np.mean(errs_mean) < -0.015 and np.mean(errs_mean) + 3 * se < 0
    assert np.mean(errs_mean) < np.mean(errs_post) - 0.01


def test_mean_bias_correction_on_pgm_synthetic_data():
    errs_bc, errs_naive = [], []
    for seed in range(2):
        data = generate(200, 6, 5, seed=seed)
        arr = build_arrays(data.records)
        errs_bc.append(bias_corrected_oracle(arr)[0] - data.true_oracle)
        errs_naive.append(naive_oracle(arr)[0] - data.true_oracle)
    assert np.mean(errs_naive) > 0.1
    assert abs(np.mean(errs_bc)) < np.mean(errs_naive) / 5
