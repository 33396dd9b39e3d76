"""Parametric-bootstrap bias correction of the naive oracle, with an EB plug-in truth.

Not in seed paper 002; it removes the bias the paper characterizes in §4.1–4.2
(eqs. 7–10) directly instead of extrapolating it (§4.3.1). Efron's bootstrap
bias correction: with a plug-in truth p̃,

    bias(p̃)      = E_{k ~ Bin(G, p̃)}[O_biased] − (1/N) Σ_n max_l p̃_nl
    O_corrected  = O_biased − bias(p̃)

The expectation is exact: eq. 10's binomial-CDF identity generalized to
heterogeneous p̃_nl (`compass.oracle.naive.routed_expectation`). Raw sample
means as p̃ are too dispersed and under-correct; the default p̃ is the
empirical-Bayes posterior mean of `compass.oracle.shrinkage` (too concentrated, so
it over-corrects when models are independent, but it is the most accurate
estimator in the PGM validation study of `compass.oracle.validation`, where
shared prompt difficulty makes the naive bias smaller). The alternative
`plugin="posterior"` averages the bias over EB posterior draws. Cost is corrected the same way: the
routed cost of the naive router under p̃ minus that of routing on p̃ itself
(cell costs are held fixed, so only selection on noisy quality is corrected).

With unequal G_l the naive oracle averages over G′ = min G subsets
(`compass.oracle.naive`); a random G′-subset of Bernoulli(p) draws is
Binomial(G′, p), so the bias term uses G′ = min G as well.
For the α-sweep the bias is estimated by Monte Carlo over `n_draws` seeded
binomial replicates, since selection on α·Q* − (1−α)·C* breaks the common grid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import comb

from compass.oracle.frontier import route, sweep
from compass.oracle.naive import cost_order, naive_oracle, routed_expectation
from compass.oracle.records import OracleArrays
from compass.oracle.shrinkage import fit_priors, posterior_means


def expected_naive(p: np.ndarray, generations: int, cost: np.ndarray) -> tuple[float, float]:
    """Exact E[O_biased] quality and cost when k_nl ~ Binomial(G, p_nl) independently (eq. 10, generalized)."""
    j = np.arange(generations + 1)
    order = cost_order(cost)
    p_sorted = np.clip(np.take_along_axis(p, order, axis=1), 0.0, 1.0).T  # (L, N), per-prompt cost order
    q_sorted = 1.0 - p_sorted
    # Binomial pmf C(G, j) p^j (1−p)^(G−j), powers by repeated multiplication: no pow calls,
    # and exact at p = 0 or 1 (p^0 = 1)
    pmf = np.empty((*p_sorted.shape, generations + 1))
    pmf[...] = comb(generations, j)
    pow_p, pow_q = np.ones_like(p_sorted), np.ones_like(p_sorted)
    for i in range(1, generations + 1):
        pow_p *= p_sorted
        pow_q *= q_sorted
        pmf[..., i] *= pow_p
        pmf[..., generations - i] *= pow_q
    cells = np.arange(p_sorted.size).reshape(p_sorted.shape)  # each cell is its own pmf row
    sorted_cost = np.take_along_axis(cost, order, axis=1).T
    return routed_expectation(pmf.reshape(-1, generations + 1), cells, sorted_cost, j / generations)


def plugin_truth(arrays: OracleArrays) -> np.ndarray:
    """The plug-in p̃: empirical-Bayes posterior means, shape (N, L)."""
    return posterior_means(arrays)


def _bias(p: np.ndarray, generations: int, cost: np.ndarray) -> tuple[float, float]:
    """E_{k~Bin(G,p)}[O_biased] − O(routing on p itself), for quality and cost."""
    q_exp, c_exp = expected_naive(p, generations, cost)
    pick = route(p, cost)
    rows = np.arange(p.shape[0])
    return q_exp - float(p[rows, pick].mean()), c_exp - float(cost[rows, pick].mean())


def bias_corrected_oracle(
    arrays: OracleArrays, plugin: str = "mean", n_draws: int = 16, seed: int = 0
) -> tuple[float, float]:
    """O_biased − bias(p̃) for quality and cost at α = 1.

    plugin="mean": p̃ = EB posterior means (one exact bias evaluation).
    plugin="posterior": bias averaged over `n_draws` seeded draws p* from the EB
    posteriors Beta(a_l + k, b_l + G − k); the draws keep the prior's dispersion,
    so the bias is exact in expectation when the per-model beta-binomial model
    holds (posterior means are too concentrated and over-correct there), but it
    under-corrects when prompts share difficulty across models (Fig. 4's D_n).
    """
    cost = arrays.cell_cost
    g = arrays.min_generations
    q_naive, c_naive = naive_oracle(arrays)
    if plugin == "mean":
        bq, bc = _bias(plugin_truth(arrays), g, cost)
    elif plugin == "posterior":
        pr = fit_priors(arrays)
        rng = np.random.default_rng(seed)
        draws = [_bias(rng.beta(pr.a + arrays.successes, pr.b + arrays.trials - arrays.successes), g, cost)
                 for _ in range(n_draws)]
        bq, bc = np.mean(draws, axis=0)
    else:
        raise ValueError(f"unknown plug-in {plugin!r}; use 'mean' or 'posterior'")
    return q_naive - float(bq), c_naive - float(bc)


def bias_corrected_frontier(
    arrays: OracleArrays, alphas: np.ndarray, n_draws: int = 8, seed: int = 0
) -> pd.DataFrame:
    """Bias-corrected α-sweep: naive(α) − [mean_r naive_r(α) − routed-on-p̃(α)]; DataFrame[alpha, quality, cost]."""
    p = plugin_truth(arrays)
    cost = arrays.cell_cost
    g = arrays.min_generations
    rng = np.random.default_rng(seed)
    naive = sweep([(arrays.p_hat, cost, arrays.p_hat, cost)], alphas)
    draws = [rng.binomial(g, p) / g for _ in range(n_draws)]
    replicated = sweep([(d, cost, d, cost) for d in draws], alphas)
    truth = sweep([(p, cost, p, cost)], alphas)
    out = naive.copy()
    for col in ("quality", "cost"):
        out[col] = naive[col] - (replicated[col] - truth[col])
    return out
