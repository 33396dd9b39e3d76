import numpy as np
import pandas as pd
import pyvinecopulib as pv
import pytest

from compass.cascades.copulas import (
    copula_gof, fit_copula, fit_pair, gumbel_cdf, gumbel_theta_from_tau, markov_test, pseudo_observations,
)
from compass.cascades.marginals import fit_marginal


def test_gumbel_cdf_closed_form():
    # C(1/2, 1/2) at theta = 2 is exp(-(2 (log 2)^2)^(1/2)) = 2^(-sqrt 2)
    assert gumbel_cdf(np.array(0.5), np.array(0.5), 2.0) == pytest.approx(2 ** -np.sqrt(2), rel=1e-12)
    u = np.linspace(0.05, 0.95, 7)
    assert np.allclose(gumbel_cdf(u, np.ones_like(u), 3.0), u)  # uniform margins
    assert np.allclose(gumbel_cdf(u, u[::-1], 1.0), u * u[::-1])  # theta = 1: independence
    bicop = pv.Bicop(family=pv.BicopFamily.gumbel, parameters=np.array([[2.7]]))
    uu, vv = np.meshgrid(u, u)
    assert np.allclose(gumbel_cdf(uu.ravel(), vv.ravel(), 2.7), bicop.cdf(np.column_stack([uu.ravel(), vv.ravel()])),
                       atol=1e-10)


def test_tau_inversion():
    for theta in (1.25, 2.0, 4.0):
        tau = 1 - 1 / theta
        assert gumbel_theta_from_tau(tau) == pytest.approx(theta)
        bicop = pv.Bicop(family=pv.BicopFamily.gumbel, parameters=np.array([[theta]]))
        assert bicop.parameters_to_tau(bicop.parameters) == pytest.approx(tau, abs=1e-6)
    assert gumbel_theta_from_tau(-0.3) == 1.0
    with pytest.raises(ValueError):
        gumbel_theta_from_tau(1.0)


def test_fit_gumbel_recovers_theta_and_independence():
    truth = pv.Bicop(family=pv.BicopFamily.gumbel, parameters=np.array([[2.5]]))
    uv = truth.sample(3000, seeds=[1, 2, 3])
    cop = fit_copula(pseudo_observations(uv[:, 0], uv[:, 1]), "gumbel_tau")
    assert cop.family == "gumbel_tau"
    assert cop.parameters[0] == pytest.approx(2.5, rel=0.08)
    rng = np.random.default_rng(0)
    x = rng.random(500)
    neg = fit_copula(pseudo_observations(x, 1 - x + 0.01 * rng.random(500)), "gumbel_tau")
    assert neg.family == "indep"


def test_aic_selects_the_generating_family():
    truth = pv.Bicop(family=pv.BicopFamily.clayton, parameters=np.array([[3.0]]))
    uv = truth.sample(1500, seeds=[5, 6, 7])
    best = fit_copula(pseudo_observations(uv[:, 0], uv[:, 1]), "aic")
    assert best.family.startswith("clayton_r0")
    assert best.parameters[0] == pytest.approx(3.0, rel=0.15)


def test_kendall_cvm_bootstrap_accepts_truth_and_rejects_misfit():
    rng = np.random.default_rng(3)
    truth = pv.Bicop(family=pv.BicopFamily.gumbel, parameters=np.array([[3.0]]))
    uv = truth.sample(300, seeds=[11, 12, 13])
    uv = pseudo_observations(uv[:, 0], uv[:, 1])
    _, stat_ok, p_ok = copula_gof(uv, "gumbel_tau", n_boot=30, rng=rng)
    assert p_ok > 0.05
    # strongly lower-tail dependent data under a Gumbel (upper-tail) model: misfit
    clay = pv.Bicop(family=pv.BicopFamily.clayton, parameters=np.array([[8.0]]))
    uv2 = clay.sample(300, seeds=[21, 22, 23])
    _, stat_bad, p_bad = copula_gof(pseudo_observations(uv2[:, 0], uv2[:, 1]), "gumbel_tau", n_boot=30, rng=rng)
    assert stat_bad > stat_ok and p_bad < 0.05


def test_pair_joint_margins_and_sampling_match_cases():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((2000, 2)) @ np.linalg.cholesky([[1, 0.6], [0.6, 1]]).T
    a, b = np.clip(1 / (1 + np.exp(-z[:, 0])), 0.2, 0.8), np.clip(1 / (1 + np.exp(-z[:, 1])), 0.25, 0.85)
    ma, mb = fit_marginal(a), fit_marginal(b)
    pair = fit_pair(a, b, ma, mb)
    s = np.linspace(0.1, 0.9, 9)
    assert np.allclose(pair.cdf(s, 10.0), ma.cdf(s), atol=1e-12)  # margin a equals eq. 2.7 exactly
    assert np.allclose(pair.cdf(10.0, s), mb.cdf(s), atol=1e-12)
    draw = pair.sample(40000, rng)
    for x, y in [(0.3, 0.4), (0.5, 0.6), (0.8, 0.5)]:
        emp = np.mean((draw[:, 0] <= x) & (draw[:, 1] <= y))
        assert emp == pytest.approx(float(pair.cdf(x, y)), abs=4 * np.sqrt(0.25 / 40000))
    # point mass at the corner (both at their minimum) equals the empirical case frequency
    assert float(pair.cdf(ma.phi_min, mb.phi_min)) == pytest.approx(np.mean((a == a.min()) & (b == b.min())))


def test_markov_test_finds_parent_not_ancestor():
    rng = np.random.default_rng(1)
    n = 3000
    p1 = rng.random(n)
    p2 = np.clip(p1 + 0.3 * rng.standard_normal(n), 0.01, 0.99)
    p3 = np.clip(p2 + 0.3 * rng.standard_normal(n), 0.01, 0.99)
    phi = pd.DataFrame({"a": p1, "b": p2, "c": p3})
    correct = pd.DataFrame({"a": rng.random(n) < p1, "b": rng.random(n) < p2, "c": rng.random(n) < p3}).astype(float)
    # correctness of a 4th model generated from phi_c only
    phi["d"] = np.clip(p3 + 0.2 * rng.standard_normal(n), 0.01, 0.99)
    correct["d"] = (rng.random(n) < 1 / (1 + np.exp(-4 * (p3 - 0.5)))).astype(float)
    out = markov_test(phi, correct, ["a", "b", "c", "d"])
    assert set(out.columns) >= {"model_id", "parent", "ancestor", "p_parent", "p_ancestor", "log10_p_parent"}
    assert len(out) == 1 + 2
    d_rows = out[out.model_id == "d"]
    assert (d_rows.p_parent < 1e-10).all()  # the parent c is the true driver of d (Markov) ...
    assert (d_rows.p_ancestor > 1e-3).all()  # ... and earlier ancestors add nothing
    with pytest.raises(ValueError, match="unknown model"):
        markov_test(phi, correct, ["a", "b", "zzz"])


def test_kendall_distribution_closed_form_matches_simulation():
    from compass.cascades.copulas import kendall_distribution
    rng = np.random.default_rng(0)
    cop = fit_copula(pseudo_observations(*pv.Bicop(family=pv.BicopFamily.gumbel, parameters=np.array([[2.0]]))
                                         .sample(4000, seeds=[1]).T), "gumbel_tau")
    sim = cop.sample(40000, rng)
    w = np.array([0.05, 0.2, 0.5, 0.8])
    emp = np.array([np.mean(cop.cdf(sim[:, 0], sim[:, 1]) <= x) for x in w])
    assert np.allclose(kendall_distribution(cop, w, rng), emp, atol=0.01)
    theta = cop.parameters[0]
    assert np.allclose(kendall_distribution(cop, w, rng), w - w * np.log(w) / theta)


def test_gof_on_a_test_split_tests_the_train_fit():
    """Table 2.4 as the thesis runs it (issue 12, item 6): fit on train, test on test. A Gumbel fitted on
    Gumbel(3) train pairs is accepted on a Gumbel(3) test split and rejected on a test split whose dependence
    changed (Gumbel(1.3)), which a train-only GOF cannot see."""
    rng = np.random.default_rng(5)
    strong = pv.Bicop(family=pv.BicopFamily.gumbel, parameters=np.array([[3.0]]))
    weak = pv.Bicop(family=pv.BicopFamily.gumbel, parameters=np.array([[1.3]]))

    def uv(cop, seeds):
        draw = cop.sample(250, seeds=seeds)
        return pseudo_observations(draw[:, 0], draw[:, 1])

    train = uv(strong, [1, 2, 3])
    _, _, p_train_only = copula_gof(train, "gumbel_tau", n_boot=40, rng=rng)
    _, _, p_same = copula_gof(train, "gumbel_tau", n_boot=40, rng=rng, uv_test=uv(strong, [100, 101, 102]))
    _, _, p_shift = copula_gof(train, "gumbel_tau", n_boot=40, rng=rng, uv_test=uv(weak, [7, 8, 9]))
    assert p_train_only > 0.05 and p_same > 0.05 and p_shift < 0.05
