"""A new outcome evaluation of a model: its value and its price (issue 49 item 1, "and for a new outcome evaluation
of a model"), beside the cells of `next_evaluations`.

What it measures. The team runs model m on n_q prompts of the case's outcome data sets (`utility.datasets`: the
recorded answers of the other models there define the label, e.g. "beats the prompt's mean correctness") and
observes m's label rate: the scenario's utility of m measured, not predicted from its measures. The cost term
lam c(m) is known, so on the leaderboard's score scale

    Y_m = S(m) + eps,   eps ~ N(0, s^2)                                                          (O1)

with s the sd of a rate of n_q Bernoulli labels, at most 0.5 / sqrt(n_q) (`outcome_noise_sd`; conservative):
with the "mean" aggregation the queries are split by context weight, and the weighted rate's variance
sum_z w_z U_z (1 - U_z) / n_q is at most 1 / (4 n_q); with "robust" (the min over G contexts) each context gets
n_q / G queries, s = 0.5 sqrt(G / n_q) (the min's own bias is left out). A scenario scored by person weights on the
measures (no outcome) or a structural case (given weights) has no outcome to observe: no candidate.

Prior. The rank bootstrap's B draws S_b(n) of every model n (`rank_uncertainty`, all of steps i-iv: imputed cells,
refitted measures, refitted utility, the model's own effect), the same posterior the cells are valued under; never
the point score. The draws are strongly correlated across models (the shared utility refit: median pairwise
correlation 0.61 on frontier_api, 0.70-0.90 between a candidate and the leader), so observing Y_m moves every
model's mean, not only m's: all models are conditioned on the same observation.

Posterior, linear-Gaussian (the draws' first two moments, mu_n = mean_b S_b(n), C_nm = cov_b(S_b(n), S_b(m)),
sigma_m^2 = C_mm): after Y_m = y

    mu_n(y) = mu_n + C_nm / (sigma_m^2 + s^2) (y - mu_m)     for every model n                    (O2)

Value (preposterior analysis, eq. (3) of `next_evaluations`). y has the predictive distribution N(mu_m, sigma_m^2 +
s^2), so mu_n(y) = mu_n + beta_n Z with beta_n = C_nm / sqrt(sigma_m^2 + s^2), Z ~ N(0, 1) at the quantile nodes:

    V_m = E_Z[ max_n (mu_n + beta_n Z) ] - max_n mu_n                                             (O3)

The decision is re-taken on all models' posterior means. s -> 0 gives the value of perfect information about S(m)
(with what it says about the others); s -> inf gives 0. For a model uncorrelated with the others (O3) is (3)'s
closed form tau f(-|mu_m - M_-m| / tau), tau^2 = sigma_m^4 / (sigma_m^2 + s^2) (the tests check it); a model that
moves with the leader (C_nm ~ sigma_n sigma_m) is worth far less than "the others held fixed" would say (the
earlier version of this module: 3x-100x more on frontier_api). Not conservative: the draws' sample covariances
carry error (B = 60), which shows as spurious shifts and, through the max, an upward bias: +16 % for a near-leader
among 20 models, and about 0.003 for models whose true value is 0 among 64 (a second review's synthetic check).
Monte Carlo error: `value_se`, the jackknife over the B draws (each left out, mu and C_.m recomputed, (O3) again):
sqrt((B - 1) / B sum_b (V_(-b) - mean V_(-b))^2). "If it came back high / low": Z = +-Phi^-1(0.9) (y at its
predictive 90th / 10th percentile), the pick re-taken on every mu_n(y).

Price. n_q x (T_in p_in + T_out p_out) / 1e6: T the case's workload (`cost.workload`, the mean tokens of its own
outcome queries: 141 in and 16 out on frontier_api; without one `evaluation_costs.DEFAULT_PROFILE`'s 1,500 and
500), p the model's cheapest token prices (`evaluation_costs.token_prices`); n_q = OUTCOME_QUERIES.

Not in the greedy batches (those are cells only): an outcome evaluation of m resolves what m's cells would, so
the two do not add; the table ranks every candidate by its own value.
Cost: O(models x n x B x Q) (the jackknife).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.stats import norm

from compass.mlcompass.evaluation_costs import DEFAULT_PROFILE
from compass.mlcompass.next_evaluations import quantile_nodes

OUTCOME_QUERIES = 1000  # n_q: s = 0.5 / sqrt(1000) = 0.016 on the utility's probability scale
OUTCOME_BENCHMARK = "outcome_evaluation"  # the `benchmark` of an outcome row of compass.next_evaluations
OUTCOME_COLUMNS = ["model_id", "outcome_sd", "cost_usd", "value", "pick_if_high", "pick_if_low",
                   "value_se"]
Z90 = norm.ppf(0.9)


def outcome_noise_sd(n_queries: int, aggregation: str = "mean", n_contexts: int = 1) -> float:
    """s of (O1): 0.5 / sqrt(n_q) for a weighted mean of contexts, 0.5 sqrt(G / n_q) for the min over G contexts."""
    if n_queries < 1:
        raise ValueError(f"an outcome evaluation needs >= 1 query, got {n_queries!r}")
    share = max(int(n_contexts), 1) if aggregation == "robust" else 1
    return 0.5 * float(np.sqrt(share / n_queries))


def outcome_costs(prices: pd.DataFrame, workload: Mapping[str, float] | None,
                  n_queries: int = OUTCOME_QUERIES) -> pd.Series:
    """USD of an outcome evaluation per model (module docstring, "Price"); prices: `token_prices` (NaN = unpriced,
    then NaN: not for sale)."""
    t_in, t_out = ((workload["input_tokens"], workload["output_tokens"]) if workload else DEFAULT_PROFILE[1:])
    per_query = (prices["input_usd_per_mtok"] * float(t_in) + prices["output_usd_per_mtok"] * float(t_out)) / 1e6
    return (n_queries * per_query).astype(float).rename("cost_usd")


def shift_values(mu: np.ndarray, beta: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """V of (O3) for rows of means mu (..., n) and shifts beta (..., n): E_Z max_n (mu_n + beta_n Z) - max_n mu_n."""
    shifted = mu[..., None, :] + nodes[:, None] * beta[..., None, :]
    return shifted.max(axis=-1).mean(axis=-1) - mu.max(axis=-1)


def jackknife_moments(s: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leave-one-draw-out mu (B, n), C_.m (B, n) and sigma_m^2 (B,) of the draws s (B, n), by running sums."""
    b = s.shape[0]
    mu = (s.sum(axis=0)[None, :] - s) / (b - 1)
    cross = (s * s[:, [m]]).sum(axis=0)[None, :] - s * s[:, [m]]
    cov = (cross - (b - 1) * mu * mu[:, [m]]) / (b - 2)
    return mu, cov, cov[:, m]


def outcome_values(score_draws: np.ndarray, models: pd.Index, costs: pd.Series, noise_sd: float,
                   n_nodes: int = 64) -> pd.DataFrame:
    """V_m of (O3) for every model (columns of score_draws (B, n) in `models`' order), its Monte Carlo error (the
    jackknife), its price (`costs`, per model; NaN = unpriced, no candidate) and the pick if the outcome came back
    high or low. OUTCOME_COLUMNS."""
    s = np.asarray(score_draws, dtype=float)
    if s.ndim != 2 or s.shape[1] != len(models) or s.shape[0] < 3:
        raise ValueError(f"score_draws must be (B >= 3, {len(models)} models), got {s.shape}")
    if not np.isfinite(noise_sd) or noise_sd <= 0:
        raise ValueError(f"the outcome's noise sd must be > 0, got {noise_sd!r}")
    mu, cov = s.mean(axis=0), np.cov(s, rowvar=False).reshape(len(models), len(models))
    z = quantile_nodes(n_nodes)
    usd = costs.reindex(models).to_numpy(dtype=float)
    b = s.shape[0]
    rows = []
    for m in np.flatnonzero(np.isfinite(usd)):
        beta = cov[:, m] / np.sqrt(cov[m, m] + noise_sd ** 2)  # (O2)-(O3): every mean's shift per unit Z
        value = float(shift_values(mu, beta, z))
        mu_j, cov_j, var_j = jackknife_moments(s, m)
        v_j = shift_values(mu_j, cov_j / np.sqrt(var_j + noise_sd ** 2)[:, None], z)
        high, low = (int(np.argmax(mu + zq * beta)) for zq in (Z90, -Z90))
        rows.append({"model_id": models[m], "outcome_sd": noise_sd, "cost_usd": float(usd[m]),
                     "value": max(value, 0.0), "pick_if_high": models[high], "pick_if_low": models[low],
                     "value_se": float(np.sqrt((b - 1) / b * ((v_j - v_j.mean()) ** 2).sum()))})
    return pd.DataFrame(rows, columns=OUTCOME_COLUMNS)
