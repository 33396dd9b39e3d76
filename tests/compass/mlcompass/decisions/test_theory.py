"""Theorem 3.1 and Propositions 3.2-3.4 against brute-force references (synthetic instances)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from compass.mlcompass.theory import (
    budget_sensitivity,
    optimal_profile,
    regulatory_sensitivity,
    technology_sensitivity,
)


def _random_instance(rng, n_max=4):
    """Random parameters satisfying Assumptions 3.1-3.5 (rejection sampling)."""
    while True:
        I = int(rng.integers(2, n_max + 1))
        beta, a = rng.dirichlet(np.ones(I)), rng.dirichlet(np.ones(I))
        b, d, c0 = rng.uniform(1.3, 4.0), rng.uniform(0.2, 1.0), rng.uniform(0.3, 1.2)
        R = rng.uniform(0.0, 0.5, I) * (rng.random(I) < 0.8)
        R[0] = max(R[0], 0.05)
        B, lam = rng.uniform(0.2, 1.0), rng.uniform(0.02, 2.0)
        if np.sum(a * R**b) < c0**b * B ** (b * d):
            return beta, a, b, c0, d, R, B, lam


def _slsqp_reference(beta, a, b, c0, d, R, B, lam, rng, starts=6):
    """General constrained optimizer on Problem (2), best of several random starts."""
    I = len(beta)

    def frontier(v):
        return c0**b * max(v[-1], 0.0) ** (b * d) - np.sum(a * v[:-1] ** b)

    best = None
    for _ in range(starts):
        v0 = np.r_[R + (1 - R) * rng.uniform(0, 0.3, I), rng.uniform(0.5, 1.0) * B]
        res = minimize(lambda v: -(beta @ v[:-1] - lam * v[-1]), v0, method="SLSQP",
                       bounds=[(r, 1.0) for r in R] + [(0.0, B)],
                       constraints=[{"type": "ineq", "fun": frontier}], options={"ftol": 1e-15, "maxiter": 1000})
        if res.success and frontier(res.x) > -1e-10 and (best is None or res.fun < best.fun):
            best = res
    return best


def test_closed_form_matches_general_optimizer_on_random_instances():
    rng = np.random.default_rng(1)
    n_binding = n_slack = 0
    regimes_seen = set()
    for _ in range(36):
        params = _random_instance(rng)
        beta, a, b, c0, d, R, B, lam = params
        opt = optimal_profile(*params)
        ref = _slsqp_reference(*params, rng=rng)
        assert ref is not None
        np.testing.assert_allclose(opt.x_star, ref.x[:-1], atol=1e-6)
        assert abs(opt.c_star - ref.x[-1]) < 1e-6
        assert opt.objective >= -ref.fun - 1e-9  # closed form is at least as good as the optimizer
        assert abs(opt.objective - (-ref.fun)) < 1e-6
        for i, regime in enumerate(opt.regimes):
            xi = ref.x[i]
            expected = "floor" if abs(xi - R[i]) < 1e-6 else ("ceiling" if abs(xi - 1.0) < 1e-6 else "interior")
            assert regime == expected
            regimes_seen.add(regime)
        assert opt.budget_binding == (abs(ref.x[-1] - B) < 1e-6)
        n_binding += opt.budget_binding
        n_slack += not opt.budget_binding
        # the optimum lies on the frontier (EC Lemma 7.5)
        assert np.sum(a * opt.x_star**b) == pytest.approx(c0**b * opt.c_star ** (b * d), rel=1e-9)
    assert n_binding >= 5 and n_slack >= 5
    assert regimes_seen == {"floor", "interior", "ceiling"}


def test_all_interior_budget_elasticity_equals_d():
    # symmetric instance with slack floors: all coordinates interior, budget binds
    beta, a, R = np.array([0.5, 0.5]), np.array([0.5, 0.5]), np.array([0.05, 0.05])
    b, c0, d, B, lam = 2.0, 0.6, 0.5, 0.8, 0.01
    opt = optimal_profile(beta, a, b, c0, d, R, B, lam)
    assert opt.regimes == ["interior", "interior"] and opt.budget_binding
    # closed form: x = c0 B^d for every coordinate when beta = a
    np.testing.assert_allclose(opt.x_star, c0 * B**d, rtol=1e-12)
    s = budget_sensitivity(beta, a, b, c0, d, R, B, lam)
    np.testing.assert_allclose(s.dx * B / opt.x_star, d, rtol=1e-12)


def _fd(solve, theta, h=1e-6):
    up, down = solve(theta + h), solve(theta - h)
    assert up.regimes == down.regimes and up.budget_binding == down.budget_binding  # fixed active set
    return (up.x_star - down.x_star) / (2 * h), (up.c_star - down.c_star) / (2 * h)


def _stable_instances(rng, n):
    """Instances with an interior coordinate and no coordinate near a regime switch."""
    out = []
    while len(out) < n:
        params = _random_instance(rng, n_max=3)
        beta, a, b, c0, d, R, B, lam = params
        params = (beta, a, b, c0, d, np.maximum(R, 0.05), B, lam)
        try:
            opt = optimal_profile(*params)
        except ValueError:
            continue
        if "interior" not in opt.regimes:
            continue
        mu = opt.mu0
        margins = [abs(np.log(bi / (mu * ai * b))) for bi, ai in zip(beta, a)]
        margins += [abs(np.log(bi / (mu * ai * b * r ** (b - 1)))) for bi, ai, r in zip(beta, a, params[5])]
        if opt.budget_binding:
            margins.append(abs(np.log(mu * c0**b * b * d * B ** (b * d - 1) / lam)))
        if min(margins) > 1e-3 and abs(b * d - 1) > 1e-3:
            out.append(params)
    return out


def test_comparative_statics_match_finite_differences():
    rng = np.random.default_rng(7)
    n_binding = n_slack = 0
    for params in _stable_instances(rng, 16):
        beta, a, b, c0, d, R, B, lam = params
        opt = optimal_profile(*params)
        n_binding += opt.budget_binding
        n_slack += not opt.budget_binding

        s = budget_sensitivity(*params)
        dx, dc = _fd(lambda t: optimal_profile(beta, a, b, c0, d, R, t, lam), B)
        np.testing.assert_allclose(s.dx, dx, atol=1e-4)
        assert abs(s.dc - dc) < 1e-4

        for k in range(len(beta)):
            def solve_k(t, k=k):
                Rk = R.copy()
                Rk[k] = t
                return optimal_profile(beta, a, b, c0, d, Rk, B, lam)

            s = regulatory_sensitivity(k, *params)
            dx, dc = _fd(solve_k, R[k])
            np.testing.assert_allclose(s.dx, dx, atol=1e-4)
            assert abs(s.dc - dc) < 1e-4

        if opt.budget_binding:
            solvers = {
                "c0": (c0, lambda t: optimal_profile(beta, a, b, t, d, R, B, lam)),
                "d": (d, lambda t: optimal_profile(beta, a, b, c0, t, R, B, lam)),
                "b": (b, lambda t: optimal_profile(beta, a, t, c0, d, R, B, lam)),
            }
            for name, (value, solve) in solvers.items():
                s = technology_sensitivity(name, *params)
                dx, dc = _fd(solve, value)
                np.testing.assert_allclose(s.dx, dx, atol=1e-4)
                assert s.dc == 0.0 and abs(dc) < 1e-4
        else:
            with pytest.raises(ValueError, match="budget binds"):
                technology_sensitivity("c0", *params)
    assert n_binding >= 3 and n_slack >= 3


@pytest.mark.parametrize(
    "override, message",
    [
        ({"beta": [0.7, 0.7]}, "Assumption 3.1"),
        ({"B": 1.5}, "Assumption 3.2"),
        ({"R": [1.0, 0.1]}, "Assumption 3.3"),
        ({"d": 1.2}, "Assumption 3.4"),
        ({"R": [0.0, 0.0]}, "Assumption 3.5"),
        ({"R": [0.9, 0.9], "c0": 0.5}, "Assumption 3.5"),
        ({"b": 1.0}, "b > 1"),
    ],
)
def test_assumption_violations_raise(override, message):
    params = dict(beta=[0.6, 0.4], a=[0.5, 0.5], b=2.0, c0=0.8, d=0.5, R=[0.2, 0.1], B=0.5, lam=0.3)
    params.update(override)
    with pytest.raises(ValueError, match=message):
        optimal_profile(**params)


def test_slack_cost_equals_theorem_closed_form_and_lambda_zero_limit():
    # c* < B: Theorem 3.1 gives c* = (lam / (mu0 c0^b b d))^(1/(bd-1))
    beta, a, b, c0, d, R, B, lam = [0.2, 0.8], [0.5, 0.5], 2.0, 0.8, 0.7, [0.3, 0.05], 1.0, 1.5
    opt = optimal_profile(beta, a, b, c0, d, R, B, lam)
    assert not opt.budget_binding
    assert opt.c_star == pytest.approx((lam / (opt.mu0 * c0**b * b * d)) ** (1 / (b * d - 1)), rel=1e-10)
    # x = 1 attainable below the cap and lam = 0: spend exactly the least cost of x = 1, (1/c0)^(1/d)
    opt = optimal_profile([0.5, 0.5], [0.5, 0.5], 2.0, 1.5, 0.5, [0.1, 0.1], 0.9, 0.0)
    np.testing.assert_allclose(opt.x_star, 1.0)
    assert opt.c_star == pytest.approx((1 / 1.5) ** 2) and opt.regimes == ["ceiling", "ceiling"]


def test_regulatory_cost_effect_is_positive_at_d_equal_one():
    # EC eq. (17) gives dc*/dR_k = a_k R_k^(b-1) c* / (d W* - (bd-1)/(b-1) Y*) > 0 even at d = 1
    # (denominator W* - Y* > 0); the main text's "dc*/dR_k = 0 iff d = 1" does not hold.
    params = dict(beta=[0.2, 0.8], a=[0.5, 0.5], b=2.0, c0=0.8, d=1.0, R=[0.3, 0.05], B=1.0, lam=1.5)
    opt = optimal_profile(**params)
    assert opt.regimes == ["floor", "interior"] and not opt.budget_binding
    s = regulatory_sensitivity(0, **params)
    W, Y = 0.5 * 0.3**2 + 0.5 * opt.x_star[1] ** 2, 0.5 * opt.x_star[1] ** 2
    assert s.dc == pytest.approx(0.5 * 0.3 * opt.c_star / (W - Y), rel=1e-10)
    assert s.dc > 0.5
