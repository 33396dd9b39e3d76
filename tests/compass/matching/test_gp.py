"""The Laplace posterior of the probit preference GP against brute force (spec-004 §2.2-2.4)."""

import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.special import log_ndtr, ndtr
from scipy.stats import norm

from compass.matching.gp import PreferenceGP, laplace_posterior, onehot_kernel, rbf

# three models, six comparisons (0 beats 1 twice, 1 beats 2, 2 beats 0 once, 0 beats 2 twice)
WINNERS = np.array([0, 0, 1, 2, 0, 0])
LOSERS = np.array([1, 1, 2, 0, 2, 2])
K3 = 0.8 * rbf(np.array([[0.0], [0.7], [1.5]]), 1.0) + 1e-9 * np.eye(3)


def neg_log_posterior(f, K, winners, losers, sigma=1.0):
    """S(f) = ½ fᵀK⁻¹f − Σ log Φ(y (f_w − f_l)/(√2σ)) (eq. 9), written out directly."""
    return 0.5 * f @ np.linalg.solve(K, f) - log_ndtr((f[winners] - f[losers]) / (np.sqrt(2) * sigma)).sum()


def numerical_hessian(fun, x, h=1e-4):
    n = len(x)
    H = np.zeros((n, n))
    for a in range(n):
        for b in range(n):
            ea, eb = np.eye(n)[a] * h, np.eye(n)[b] * h
            H[a, b] = (fun(x + ea + eb) - fun(x + ea - eb) - fun(x - ea + eb) + fun(x - ea - eb)) / (4 * h * h)
    return H


@pytest.mark.parametrize("sigma", [1.0, 0.5])
def test_mode_and_covariance_match_numerical_optimum_and_hessian(sigma):
    post = laplace_posterior(K3, WINNERS, LOSERS, sigma)
    S = lambda f: neg_log_posterior(f, K3, WINNERS, LOSERS, sigma)  # noqa: E731
    brute = optimize.minimize(S, np.zeros(3), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
    np.testing.assert_allclose(post.mode, brute.x, atol=1e-5)
    np.testing.assert_allclose(post.cov, np.linalg.inv(numerical_hessian(S, brute.x)), rtol=1e-3, atol=1e-6)
    assert post.mode[0] > post.mode[1] and post.mode[0] > post.mode[2]


def test_two_model_mode_on_a_grid():
    """A brute-force grid over (f_0, f_1): its arg-max is the Laplace mode."""
    K = np.array([[1.0, 0.3], [0.3, 1.0]])
    w, l = np.array([0, 0, 0, 1]), np.array([1, 1, 1, 0])
    grid = np.linspace(-2, 2, 801)
    F0, F1 = np.meshgrid(grid, grid, indexing="ij")
    F = np.stack([F0.ravel(), F1.ravel()], 1)
    Kinv = np.linalg.inv(K)
    log_post = -0.5 * np.einsum("na,ab,nb->n", F, Kinv, F) + log_ndtr((F[:, w] - F[:, l]) / np.sqrt(2)).sum(1)
    best = F[np.argmax(log_post)]
    np.testing.assert_allclose(laplace_posterior(K, w, l).mode, best, atol=grid[1] - grid[0])


def test_predictions_from_the_data_rows_equal_the_full_pool_posterior():
    """The GP conditional from the rows holding data gives the Laplace posterior of the whole pool."""
    Km = onehot_kernel(5, 0.9)
    gp = PreferenceGP(Km, np.ones((1, 1)), outputscale=1.3)
    full = laplace_posterior(1.3 * Km, np.array([3, 1, 3]), np.array([1, 4, 4]))
    rows = np.array([3, 1, 4])  # the data rows: models 3, 1, 4 under the single objective
    post = gp.fit(rows, np.zeros(3, int), np.array([0, 1, 0]), np.array([1, 2, 2]), jitter=0.0)
    mean, var = gp.predict(post, rows, np.zeros(3, int))
    np.testing.assert_allclose(mean[:, 0], full.mode, atol=1e-7)
    np.testing.assert_allclose(var[:, 0], np.diag(full.cov), atol=1e-7)
    cov = gp.pair_covariance(post, 3, 4, rows, np.zeros(3, int))
    np.testing.assert_allclose(cov, full.cov[3, 4], atol=1e-7)


@pytest.mark.parametrize("mu,s2,sigma", [(0.7, 0.4, 1.0), (-1.2, 2.0, 0.6)])
def test_predictive_preference_is_the_integral_of_eq_19(mu, s2, sigma):
    gp = PreferenceGP(np.eye(2), np.eye(1), sigma=sigma)
    numeric, _ = integrate.quad(lambda d: ndtr(d / (np.sqrt(2) * sigma)) * norm.pdf(d, mu, np.sqrt(s2)), -30, 30)
    assert gp.preference(np.array(mu), np.array(s2)) == pytest.approx(numeric, abs=1e-8)
    assert gp.preference(np.array(mu), np.array(s2), includes_noise=False) == pytest.approx(ndtr(mu / np.sqrt(s2)))


def test_extreme_comparisons_stay_finite():
    """Log-space inverse Mills ratio: 40 identical wins do not overflow (spec §6.2)."""
    post = laplace_posterior(np.eye(2) * 100.0, np.zeros(40, int), np.ones(40, int))
    z = (post.mode[0] - post.mode[1]) / np.sqrt(2)
    gradient = 40 * norm.pdf(z) / ndtr(z) / np.sqrt(2)  # stationarity: K⁻¹f̂ = ∇ log-likelihood
    np.testing.assert_allclose(post.alpha, [gradient, -gradient], rtol=1e-6)
    assert np.isfinite(post.mode).all() and np.linalg.eigvalsh(post.cov).min() > 0


def test_laplace_evidence_is_the_gaussian_integral_at_the_mode():
    """R&W eq. 3.32 against its definition: log Z ≈ −S(f̂) + ½ log det Σ − ½ log det K (Σ the Laplace covariance)."""
    from compass.matching.gp import laplace_posterior, log_evidence

    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 2))
    K = rbf(X, 0.8) * 2.0 + 1e-6 * np.eye(6)
    winners, losers = np.array([0, 1, 2, 0, 4, 5, 0]), np.array([1, 2, 3, 3, 0, 1, 5])
    post = laplace_posterior(K, winners, losers, 1.0)
    S = 0.5 * post.mode @ np.linalg.solve(K, post.mode) - post.log_likelihood
    expected = -S + 0.5 * np.linalg.slogdet(post.cov)[1] - 0.5 * np.linalg.slogdet(K)[1]
    assert log_evidence(post) == pytest.approx(expected, rel=1e-6)


def test_kernel_refit_takes_the_grid_point_of_largest_evidence():
    from compass.matching.gp import log_evidence
    from compass.matching.heart import REFIT_LENGTHSCALES, REFIT_OUTPUTSCALES, HeartOptions, HeartUCB

    cost = np.ones(6)
    h = HeartUCB(None, cost, cost, 1.0, 20, 0, HeartOptions(kernel_refit=True, use_cost=False, n_objectives=1))
    for t, (w, l) in enumerate([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (0, 4), (0, 5)], start=1):
        h.observe(t, w, l, True, 0.0)
    models, objectives = h._data()
    wins, losses = np.array(h.comparisons).T
    evidence = {(a, s): log_evidence(h.make_gp(a, s).fit(models, objectives, wins, losses))
                for a in REFIT_LENGTHSCALES for s in REFIT_OUTPUTSCALES}
    a, s = max(evidence, key=evidence.get)
    assert h.gp.outputscale == s and np.allclose(h.gp.model_kernel, h.make_gp(a, s).model_kernel)
    assert (a, s) != (1.0, 1.0)  # the refit moved off the initial values
