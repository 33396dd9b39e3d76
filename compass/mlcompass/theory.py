"""Stylized ML Compass model: closed-form optimum and comparative statics.

ML Compass (seed 000), §3 and EC §7. Problem (2):

    max_{x, c}  sum_i beta_i x_i - lam c
    s.t.        R_i <= x_i <= 1,  0 <= c <= B,  (sum_i a_i x_i^b)^(1/b) <= c0 c^d.

Theorem 3.1 gives x*(mu0), c*(mu0) in closed form given the frontier multiplier
mu0 (of the powered frontier sum_i a_i x_i^b <= c0^b c^(bd), formulation P_= of
EC §7); mu0 is the paper's own construction and is found here by a 1-D root
(scipy.optimize.brentq) on the frontier-equality / cost-stationarity system.
Propositions 3.2-3.4 are implemented from their closed forms (EC Proofs 7.8-7.10);
the b-derivative of Prop. 3.4(iii), for which the paper states only the sign
pattern, is our own implicit differentiation of the same KKT system.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

_REGIME_FLOOR, _REGIME_INTERIOR, _REGIME_CEILING = "floor", "interior", "ceiling"


@dataclass(frozen=True)
class StylizedProblem:
    """Validated parameters of Problem (2) (Assumptions 3.1-3.5)."""

    beta: np.ndarray
    a: np.ndarray
    b: float
    c0: float
    d: float
    R: np.ndarray
    B: float
    lam: float


@dataclass(frozen=True)
class OptimalProfile:
    """Solution of Problem (2) per Theorem 3.1.

    `regimes[i]` is "floor" (x_i = R_i), "ceiling" (x_i = 1) or "interior";
    `objective` = beta.x* - lam c*.
    """

    x_star: np.ndarray
    c_star: float
    mu0: float
    regimes: list[str]
    budget_binding: bool
    objective: float


@dataclass(frozen=True)
class Sensitivity:
    """Local derivatives (dx*/dtheta per measure, dc*/dtheta) under the fixed-active-set assumption."""

    dx: np.ndarray
    dc: float


def check_assumptions(beta, a, b, c0, d, R, B, lam) -> StylizedProblem:
    """Validate Assumptions 3.1-3.5 of §3.1 and return the parameters as arrays.

    Raises ValueError naming the violated assumption. Additionally requires
    b > 1 (the uniqueness case of Theorem 3.1; at b = 1 Problem (2) is a linear
    program in x with possibly non-unique optima) and lam >= 0.
    """
    beta = np.asarray(beta, dtype=float)
    a = np.asarray(a, dtype=float)
    R = np.asarray(R, dtype=float)
    if beta.ndim != 1 or a.shape != beta.shape or R.shape != beta.shape:
        raise ValueError(f"beta, a, R must be 1-D of equal length; got {beta.shape}, {a.shape}, {R.shape}")
    if np.any(beta <= 0) or not np.isclose(beta.sum(), 1.0):
        raise ValueError(f"Assumption 3.1 violated: beta must be > 0 and sum to 1, got {beta}")
    if not (0 < B <= 1):
        raise ValueError(f"Assumption 3.2 violated: budget cap B must lie in (0, 1], got {B}")
    if lam < 0:
        raise ValueError(f"cost sensitivity lam must be >= 0, got {lam}")
    if np.any(R < 0) or np.any(R >= 1):
        raise ValueError(f"Assumption 3.3 violated: compliance minimums must lie in [0, 1), got {R}")
    if np.any(a <= 0) or not np.isclose(a.sum(), 1.0):
        raise ValueError(f"Assumption 3.4 violated: frontier weights a must be > 0 and sum to 1, got {a}")
    if c0 <= 0 or not (0 < d <= 1) or b < 1:
        raise ValueError(f"Assumption 3.4 violated: need c0 > 0, b >= 1, 0 < d <= 1; got c0={c0}, b={b}, d={d}")
    if b == 1:
        raise ValueError("closed form of Theorem 3.1 needs b > 1 (unique optimum); b = 1 is a linear program")
    if not np.any(R > 0) or float(np.sum(a * R**b)) >= c0**b * B ** (b * d):
        raise ValueError(
            "Assumption 3.5 violated: need some R_i > 0 and sum_i a_i R_i^b < c0^b B^(bd) "
            f"(got {float(np.sum(a * R**b)):.6g} vs {c0**b * B ** (b * d):.6g})"
        )
    return StylizedProblem(beta, a, float(b), float(c0), float(d), R, float(B), float(lam))


def profile_at_multiplier(mu: float, beta: np.ndarray, a: np.ndarray, b: float, R: np.ndarray) -> np.ndarray:
    """x*(mu) of Theorem 3.1: clip((beta_i / (mu a_i b))^(1/(b-1)), R_i, 1)."""
    with np.errstate(divide="ignore", over="ignore"):
        unconstrained = np.power(beta / (mu * a * b), 1.0 / (b - 1.0))
    return np.clip(unconstrained, R, 1.0)


def _frontier_cost(x: np.ndarray, p: StylizedProblem) -> float:
    """Cost at which x lies exactly on the frontier: (sum a x^b / c0^b)^(1/(bd))."""
    return float((np.sum(p.a * x**p.b) / p.c0**p.b) ** (1.0 / (p.b * p.d)))


def _cost_gap(mu: float, p: StylizedProblem) -> float:
    """mu c0^b b d c^(bd-1) - lam at the frontier cost of x*(mu): increasing in mu (EC eq. 9)."""
    c = _frontier_cost(profile_at_multiplier(mu, p.beta, p.a, p.b, p.R), p)
    return mu * p.c0**p.b * p.b * p.d * c ** (p.b * p.d - 1.0) - p.lam


def _bracket(fun, lo: float = 1e-12, hi: float = 1.0) -> tuple[float, float]:
    """Expand [lo, hi] geometrically until an increasing `fun` changes sign."""
    while fun(hi) < 0:
        hi *= 4.0
        if hi > 1e300:
            raise RuntimeError("could not bracket the frontier multiplier mu0")
    return lo, hi


def _regimes(mu: float, p: StylizedProblem) -> list[str]:
    """Regime of each coordinate from the inequalities of Theorem 3.1."""
    out = []
    for bi, ai, ri in zip(p.beta, p.a, p.R):
        if bi <= mu * ai * p.b * ri ** (p.b - 1.0):
            out.append(_REGIME_FLOOR)
        elif bi >= mu * ai * p.b:
            out.append(_REGIME_CEILING)
        else:
            out.append(_REGIME_INTERIOR)
    return out


def optimal_profile(beta, a, b, c0, d, R, B, lam) -> OptimalProfile:
    """Solve Problem (2) with the closed form of Theorem 3.1 (§3.2, EC Proof 7.7).

    mu0 is the root of the KKT system: if the frontier at the budget cap,
    sum a x*(mu)^b = c0^b B^(bd), is met at a mu with mu c0^b b d B^(bd-1) >= lam,
    the budget binds (c* = B); otherwise c* < B and mu0 solves the cost
    stationarity lam = mu c0^b b d c^(bd-1) with c the frontier cost of x*(mu).
    """
    p = check_assumptions(beta, a, b, c0, d, R, B, lam)
    budget_level = p.c0**p.b * p.B ** (p.b * p.d)
    binding = False
    if budget_level < 1.0:  # x = 1 is out of reach at c = B, so a mu with W(x*(mu)) = budget_level exists
        def frontier_gap(mu: float) -> float:
            return budget_level - float(np.sum(p.a * profile_at_multiplier(mu, p.beta, p.a, p.b, p.R) ** p.b))

        mu_b = brentq(frontier_gap, *_bracket(frontier_gap), xtol=1e-300, rtol=1e-15, maxiter=500)
        binding = _cost_gap(mu_b, p) >= 0.0
    if binding:
        mu0, c_star = mu_b, p.B
    elif p.lam == 0.0:  # budget slack only because x = 1 is attainable: mu0 -> 0, spend the least cost of x = 1
        mu0, c_star = 0.0, _frontier_cost(np.ones_like(p.beta), p)
    else:
        mu0 = brentq(lambda m: _cost_gap(m, p), *_bracket(lambda m: _cost_gap(m, p)), xtol=1e-300, rtol=1e-15, maxiter=500)
        c_star = _frontier_cost(profile_at_multiplier(mu0, p.beta, p.a, p.b, p.R), p)
    x_star = profile_at_multiplier(mu0, p.beta, p.a, p.b, p.R) if mu0 > 0 else np.ones_like(p.beta)
    regimes = _regimes(mu0, p) if mu0 > 0 else [_REGIME_CEILING] * len(p.beta)
    return OptimalProfile(
        x_star=x_star,
        c_star=float(c_star),
        mu0=float(mu0),
        regimes=regimes,
        budget_binding=bool(binding),
        objective=float(p.beta @ x_star - p.lam * c_star),
    )


def _interior_masses(opt: OptimalProfile, p: StylizedProblem, exclude: int | None = None):
    """S (interior mask), W* = sum_j a_j x_j^b and Y* = sum_{j in S} a_j x_j^b (§3.3)."""
    interior = np.array([r == _REGIME_INTERIOR for r in opt.regimes])
    if exclude is not None:
        interior[exclude] = False
    mass = p.a * opt.x_star**p.b
    W, Y = float(mass.sum()), float(mass[interior].sum())
    if Y <= 0:
        raise ValueError("comparative statics of §3.3 need at least one interior measure (S nonempty)")
    return interior, W, Y


def budget_sensitivity(beta, a, b, c0, d, R, B, lam) -> Sensitivity:
    """Proposition 3.2: dx*/dB = eps_B x*_i / B on S with eps_B = d W*/Y*, 0 off S; dc*/dB = 1.

    If the budget is slack (c* < B) the cap is not active and all derivatives are 0.
    """
    p = check_assumptions(beta, a, b, c0, d, R, B, lam)
    opt = optimal_profile(beta, a, b, c0, d, R, B, lam)
    if not opt.budget_binding:
        return Sensitivity(np.zeros_like(p.beta), 0.0)
    interior, W, Y = _interior_masses(opt, p)
    eps_b = p.d * W / Y
    return Sensitivity(np.where(interior, eps_b * opt.x_star / p.B, 0.0), 1.0)


def regulatory_sensitivity(k: int, beta, a, b, c0, d, R, B, lam) -> Sensitivity:
    """Proposition 3.3 (EC Proof 7.9): effect of tightening the floor R_k.

    Binding budget: dx_i/dR_k = -a_k R_k^(b-1) x_i / Y* on S' = S minus {k}, dc = 0.
    Slack budget (eqs. 17-18): dc/dR_k = a_k R_k^(b-1) c* / (d W* - (bd-1)/(b-1) Y*),
    dx_i/dR_k = a_k R_k^(b-1) x_i (bd-1)/(b-1) / (same denominator) on S'.
    dx_k/dR_k = 1 if x_k is at its floor; everything is 0 if x_k > R_k.
    """
    p = check_assumptions(beta, a, b, c0, d, R, B, lam)
    if not 0 <= k < len(p.beta):
        raise ValueError(f"measure index k={k} out of range for {len(p.beta)} measures")
    if p.b * p.d == 1.0:
        raise ValueError("Proposition 3.3 assumes bd != 1")
    opt = optimal_profile(beta, a, b, c0, d, R, B, lam)
    if opt.regimes[k] != _REGIME_FLOOR:
        return Sensitivity(np.zeros_like(p.beta), 0.0)
    interior, W, Y = _interior_masses(opt, p, exclude=k)
    pull = p.a[k] * p.R[k] ** (p.b - 1.0)
    if opt.budget_binding:
        dx, dc = np.where(interior, -pull * opt.x_star / Y, 0.0), 0.0
    else:
        ratio = (p.b * p.d - 1.0) / (p.b - 1.0)
        denom = p.d * W - ratio * Y
        dx, dc = np.where(interior, pull * opt.x_star * ratio / denom, 0.0), pull * opt.c_star / denom
    dx[k] = 1.0
    return Sensitivity(dx, float(dc))


def technology_sensitivity(param: str, beta, a, b, c0, d, R, B, lam) -> Sensitivity:
    """Proposition 3.4 (EC Proof 7.10), budget binding (c* = B) and b > 1.

    param="c0": dx_i/dc0 = (W*/Y*) x_i / c0 on S.
    param="d":  dx_i/dd  = (W*/Y*) ln(B) x_i on S.
    param="b":  d ln x_i/db = (K - ln x_i)/(b-1) on S with
                K = [ (b-1)/b (W* ln(c0 B^d) - Z*) + Z_int* ] / Y*,
                Z* = sum_j a_j x_j^b ln x_j, Z_int* its sum over S (our implicit
                differentiation; the paper states the ordering implied by it).
    dc*/dtheta = 0 in all three cases (c* = B).
    """
    p = check_assumptions(beta, a, b, c0, d, R, B, lam)
    opt = optimal_profile(beta, a, b, c0, d, R, B, lam)
    if not opt.budget_binding:
        raise ValueError("Proposition 3.4 assumes the budget binds (c* = B); here c* < B")
    interior, W, Y = _interior_masses(opt, p)
    x = opt.x_star
    if param == "c0":
        dx = (W / Y) * x / p.c0
    elif param == "d":
        dx = (W / Y) * np.log(p.B) * x
    elif param == "b":
        mass_log = p.a * x**p.b * np.log(x)
        K = ((p.b - 1.0) / p.b * (W * np.log(p.c0 * p.B**p.d) - mass_log.sum()) + mass_log[interior].sum()) / Y
        dx = x * (K - np.log(x)) / (p.b - 1.0)
    else:
        raise ValueError(f"param must be one of 'c0', 'd', 'b'; got {param!r}")
    return Sensitivity(np.where(interior, dx, 0.0), 0.0)
