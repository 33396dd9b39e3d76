"""Empirical-Bayes beta-binomial shrinkage of cell success rates.

Not in seed paper 002 (whose §4.3.2 uses a PGM); a lighter debiasing of eq. 5:
for each model l, fit a Beta(a_l, b_l) prior over its per-prompt success rates by
maximizing the beta-binomial marginal likelihood of the counts k_nl (scipy
L-BFGS-B on log a, log b), then use the conjugate posterior
p_nl | k ~ Beta(a_l + k_nl, b_l + G_l − k_nl).

Two oracle read-outs (both §3 eq. 4 with p in place of μ):
* "plugin"        (1/N) Σ_n max_l E[p_nl | k]: the value of routing on posterior
                  means, conservative (it is the Bayes router's value, ≤ oracle).
* "posterior_max" (1/N) Σ_n E[max_l p_nl | k] = (1/N) Σ_n ∫_0^1 (1 − Π_l F_nl(t)) dt,
                  the posterior mean of the oracle itself, evaluated by
                  Gauss–Legendre quadrature; it treats models as independent given
                  their priors, so shared prompt difficulty (Fig. 4) pushes it up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import betainc, betaln, digamma

from compass.oracle.frontier import route
from compass.oracle.records import OracleArrays

_LOG_BOUNDS = (np.log(1e-3), np.log(1e4))


class NotIdentified(ValueError):
    """The data cannot determine the estimator (e.g. the prior's concentration at G = 1)."""


@dataclass(frozen=True)
class BetaPriors:
    """Per-model Beta(a, b) priors fitted by marginal likelihood."""

    a: np.ndarray
    b: np.ndarray


def fit_priors(arrays: OracleArrays) -> BetaPriors:
    """Maximize Σ_n log BetaBinom(k_nl; G_l, a_l, b_l) for every model.

    Counts are sufficient (the histogram of k over 0..G_l). The objectives are
    separable across models, so all 2L log-parameters go to one L-BFGS-B call
    with the analytic (digamma) gradient. Degenerate models (all 0 or all G)
    hit the bounds [1e-3, 1e4] on a, b.

    Raises NotIdentified when some model has G_l = 1: a beta-binomial with one
    trial is a Bernoulli(a / (a + b)), so only the prior mean is identified and
    the concentration a + b would stay at the optimizer's start value (on MMLU
    that start moves `bias_corrected` across the whole [SOTA, naive] range).
    """
    g = arrays.generations
    if int(g.min()) < 2:
        short = [str(m) for m in arrays.model_ids[g < 2]][:5]
        raise NotIdentified(f"empirical-Bayes prior not identified: models {short} have G = 1 generation per prompt "
                            "(the beta-binomial concentration needs G >= 2)")
    n_models, g_max = arrays.n_models, int(g.max())
    ks = np.arange(g_max + 1)
    hist = np.zeros((n_models, g_max + 1))
    for j in range(n_models):
        hist[j] = np.bincount(arrays.successes[:, j].astype(int), minlength=g_max + 1)
    fails = g[:, None] - ks[None, :]
    ok = hist > 0  # only observed k enter the likelihood (so fails >= 0 there)
    mean = (hist * ks).sum(axis=1) / (hist.sum(axis=1) * g)
    start = np.log(np.clip(np.concatenate([2.0 * mean + 0.1, 2.0 * (1.0 - mean) + 0.1]), 1e-2, None))

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        a = np.exp(theta[:n_models])[:, None]
        b = np.exp(theta[n_models:])[:, None]
        kk = np.where(ok, ks[None, :], 0)
        ff = np.where(ok, fails, 0)
        ll = hist * (betaln(kk + a, ff + b) - betaln(a, b))
        common = digamma(a + b) - digamma(g[:, None] + a + b)
        da = (hist * (digamma(kk + a) - digamma(a) + common)).sum(axis=1) * a[:, 0]
        db = (hist * (digamma(ff + b) - digamma(b) + common)).sum(axis=1) * b[:, 0]
        return -float(ll.sum()), -np.concatenate([da, db])

    res = minimize(nll, start, jac=True, method="L-BFGS-B", bounds=[_LOG_BOUNDS] * (2 * n_models))
    return BetaPriors(a=np.exp(res.x[:n_models]), b=np.exp(res.x[n_models:]))


def posterior_means(arrays: OracleArrays, priors: BetaPriors | None = None) -> np.ndarray:
    """E[p_nl | k_nl] = (a_l + k_nl) / (a_l + b_l + G_l), shape (N, L)."""
    pr = fit_priors(arrays) if priors is None else priors
    return (pr.a + arrays.successes) / (pr.a + pr.b + arrays.trials)


def expected_max(alpha: np.ndarray, beta: np.ndarray, nodes: int = 64) -> np.ndarray:
    """E[max_l p_l] per row for independent p_l ~ Beta(alpha_l, beta_l); rows of shape (N, L).

    ∫_0^1 (1 − Π_l I_t(alpha_l, beta_l)) dt by `nodes`-point Gauss–Legendre.
    """
    x, w = np.polynomial.legendre.leggauss(nodes)
    t, w = (x + 1.0) / 2.0, w / 2.0
    out = np.zeros(alpha.shape[0])
    for ti, wi in zip(t, w):
        out += wi * (1.0 - np.prod(betainc(alpha, beta, ti), axis=1))
    return out


def shrinkage_oracle(arrays: OracleArrays, method: str = "plugin") -> tuple[float, float]:
    """EB oracle quality ("plugin" or "posterior_max") and the routed cost at α = 1."""
    priors = fit_priors(arrays)
    post = posterior_means(arrays, priors)
    cost = arrays.cell_cost
    pick = route(post, cost)
    rows = np.arange(arrays.n_prompts)
    routed_cost = float(cost[rows, pick].mean())
    if method == "plugin":
        return float(post[rows, pick].mean()), routed_cost
    if method == "posterior_max":
        alpha = priors.a + arrays.successes
        beta = priors.b + arrays.trials - arrays.successes
        return float(expected_max(alpha, beta).mean()), routed_cost
    raise ValueError(f"unknown shrinkage method {method!r}; use 'plugin' or 'posterior_max'")
