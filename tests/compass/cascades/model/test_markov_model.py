import numpy as np
import pytest

from compass.cascades.markov_model import fit_cascade_model

from .synthetic import synthetic_calibrated

CHAIN = ["m0", "m1", "m2", "m3"]


@pytest.fixture(scope="module")
def records():
    return synthetic_calibrated(n_train=400, k=4, seed=0)


@pytest.fixture(scope="module")
def gumbel_model(records):
    return fit_cascade_model(records, CHAIN, copula="gumbel")


def _mid_thresholds(model, cascade, frac):
    lo, hi = np.array(model.bounds(cascade)).T
    return lo + np.asarray(frac) * (hi - lo)


@pytest.mark.parametrize("cascade, frac", [
    (["m0", "m1"], [0.6]),
    (["m0", "m1", "m2"], [0.5, 0.7]),
    (CHAIN, [0.7, 0.6, 0.8]),
    (["m0", "m2", "m3"], [0.4, 0.5]),  # a subcascade uses the fitted non-adjacent pair
])
def test_model_matches_monte_carlo_within_3_se(gumbel_model, cascade, frac):
    t = _mid_thresholds(gumbel_model, cascade, frac)
    p, c = gumbel_model.evaluate(cascade, t)
    phi, cost = gumbel_model.simulate(cascade, t, 30000, np.random.default_rng(7))
    se_p, se_c = phi.std() / np.sqrt(phi.size), cost.std() / np.sqrt(cost.size)
    assert abs(p[0] - phi.mean()) < 3 * se_p
    assert abs(c[0] - cost.mean()) < 3 * se_c + 1e-12


def test_aic_copula_model_matches_monte_carlo(records):
    model = fit_cascade_model(records, CHAIN, copula="aic")
    assert model.copula == "aic"
    t = _mid_thresholds(model, CHAIN, [0.6, 0.6, 0.6])
    p, c = model.evaluate(CHAIN, t)
    phi, cost = model.simulate(CHAIN, t, 30000, np.random.default_rng(3))
    assert abs(p[0] - phi.mean()) < 3 * phi.std() / np.sqrt(phi.size)
    assert abs(c[0] - cost.mean()) < 3 * cost.std() / np.sqrt(cost.size) + 1e-12


def test_two_model_cascade_against_direct_stieltjes_sum(gumbel_model):
    """k = 2 has no Markov approximation: compare with a brute-force Riemann-Stieltjes sum."""
    cascade = ["m0", "m1"]
    t = _mid_thresholds(gumbel_model, cascade, [0.55])[0]
    m0, m1 = gumbel_model.marginals["m0"], gumbel_model.marginals["m1"]
    pair = gumbel_model.pairs[("m0", "m1")]
    grid0 = np.linspace(m0.phi_min, m0.phi_max, 200001)
    f0 = m0.cdf(grid0)
    i1 = np.sum(grid0[1:] * np.diff(f0) * (grid0[1:] > t))
    grid1 = np.linspace(m1.phi_min, m1.phi_max, 200001)
    joint = pair.cdf(t, grid1)
    i2 = m1.phi_min * joint[0] + np.sum(grid1[1:] * np.diff(joint))
    p, c = gumbel_model.evaluate(cascade, [t])
    assert p[0] == pytest.approx(i1 + i2, abs=2e-4)
    d1 = float(m0.cdf(np.array(t)))
    costs = gumbel_model.costs
    assert c[0] == pytest.approx((1 - d1) * costs["m0"] + d1 * (costs["m0"] + costs["m1"]), rel=1e-9)


def test_batch_equals_single_and_limits(gumbel_model):
    rng = np.random.default_rng(0)
    batch = np.array([_mid_thresholds(gumbel_model, CHAIN, rng.random(3)) for _ in range(5)])
    p, c = gumbel_model.evaluate(CHAIN, batch)
    for i in range(5):
        pi, ci = gumbel_model.evaluate(CHAIN, batch[i])
        assert pi[0] == pytest.approx(p[i], abs=1e-12) and ci[0] == pytest.approx(c[i], rel=1e-12)
    # thresholds at the lower bound: model 1 answers (almost) everything, P(correct) -> E[Phi_1]
    lo = np.array(gumbel_model.bounds(CHAIN))[:, 0]
    m0 = gumbel_model.marginals["m0"]
    mean0 = m0.w_min * m0.phi_min + m0.w_max * m0.phi_max + m0.w_smooth * np.mean(m0.sample_smooth(200000, rng))
    p_lo, c_lo = gumbel_model.evaluate(CHAIN, lo)
    assert p_lo[0] == pytest.approx(mean0, abs=0.02)
    assert c_lo[0] < 1.5 * gumbel_model.costs["m0"]


def test_bad_cascades_raise(gumbel_model, records):
    with pytest.raises(ValueError, match="unknown model"):
        gumbel_model.evaluate(["m0", "gpt-9"], [0.5])
    with pytest.raises(ValueError, match="chain order"):
        gumbel_model.evaluate(["m2", "m1"], [0.5])
    with pytest.raises(ValueError, match="thresholds"):
        gumbel_model.evaluate(["m0", "m1"], [0.5, 0.6])
    with pytest.raises(ValueError, match="unknown model"):
        fit_cascade_model(records, ["m0", "nope"])
    with pytest.raises(ValueError, match="at least 2"):
        fit_cascade_model(records, ["m0"])


def test_shared_marginals_and_pairs_fitted_on_first_use(records, gumbel_model):
    """A fit given another fit's marginals evaluates exactly like a fresh fit (the EM is not what differs between
    copula families); pairs are fitted only when a cascade uses them, and each once."""
    shared = fit_cascade_model(records, CHAIN, copula="gumbel", marginals=gumbel_model.marginals)
    fresh = fit_cascade_model(records, CHAIN, copula="gumbel")
    t = _mid_thresholds(fresh, CHAIN, [0.3, 0.5, 0.7])
    np.testing.assert_array_equal(np.concatenate(shared.evaluate(CHAIN, t)), np.concatenate(fresh.evaluate(CHAIN, t)))
    assert len(fresh.pairs) == 6 and sorted(fresh.pairs._fitted) == [("m0", "m1"), ("m1", "m2"), ("m2", "m3")]
    assert fresh.pairs[("m0", "m2")] is fresh.pairs[("m0", "m2")]
    with pytest.raises(KeyError):
        fresh.pairs[("m2", "m0")]
    with pytest.raises(ValueError, match="no fitted marginal"):
        fit_cascade_model(records, CHAIN, marginals={"m0": gumbel_model.marginals["m0"]})
