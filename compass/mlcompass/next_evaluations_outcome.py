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

Prior. The rank bootstrap's B draws S_b(m) (`rank_uncertainty`, all of steps i-iv: imputed cells, refitted
measures, refitted utility, the model's own effect), the same posterior the cells are valued under; never the point
score. The other models' means stay, as for the cells (the observation would also refine the shared utility fit;
left out, so the value is conservative there).

Posterior, by conditioning the draws on the observation: after Y_m = y each draw is reweighted,

    w_b(y) = phi((y - S_b(m)) / s) / sum_b' phi((y - S_b'(m)) / s),   mu_m(y) = sum_b w_b(y) S_b(m)        (O2)

Value (preposterior analysis, eq. (3) of `next_evaluations`). y is drawn from its predictive distribution, a
bootstrap draw and a noise node, y = S_b'(m) + s z_q (B x Q equally weighted, z_q the quantile nodes), and

    V_m = mean_{b', q} max(mu_m(y), M_-m) - max_n mu_n ,   M_-m = max_{n != m} mu_n                   (O3)

s -> 0 gives the value of perfect information about S(m), mean_b max(S_b(m), M_-m) - max mu; s -> inf gives 0. For
Gaussian draws (O3) is (3)'s closed form tau f(-|mu_m - M_-m| / tau) with the normal-normal shift
tau^2 = sigma_m^4 / (sigma_m^2 + s^2) (the tests check it). "If it came back high / low": y at its predictive
90th / 10th percentile, the pick re-taken on mu_m(y).

Price. n_q x (T_in p_in + T_out p_out) / 1e6: T the case's workload (`cost.workload`, the mean tokens of its own
outcome queries: 141 in and 16 out on frontier_api; without one `evaluation_costs.DEFAULT_PROFILE`'s 1,500 and
500), p the model's cheapest token prices (`evaluation_costs.token_prices`); n_q = OUTCOME_QUERIES.

Not in the greedy batches (those are cells only): an outcome evaluation of m resolves what m's cells would, so
the two do not add; the table ranks every candidate by its own value.
Cost: O(models x B^2 x Q).
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
OUTCOME_COLUMNS = ["model_id", "outcome_sd", "cost_usd", "value", "pick_if_high", "pick_if_low"]
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


def posterior_means(draws: np.ndarray, observed: np.ndarray, noise_sd: float) -> np.ndarray:
    """mu_m(y) of (O2) for each y of `observed`: the draws S_b(m) reweighted by the likelihood of y."""
    log_w = -0.5 * ((observed[:, None] - draws[None, :]) / noise_sd) ** 2
    w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
    return (w @ draws) / w.sum(axis=1)


def outcome_values(score_draws: np.ndarray, models: pd.Index, costs: pd.Series, noise_sd: float,
                   n_nodes: int = 16) -> pd.DataFrame:
    """V_m of (O3) for every model (columns of score_draws (B, n) in `models`' order), its price (`costs`, per
    model; NaN = unpriced, no candidate) and the pick if the outcome came back high or low. OUTCOME_COLUMNS."""
    s = np.asarray(score_draws, dtype=float)
    if s.ndim != 2 or s.shape[1] != len(models) or s.shape[0] < 2:
        raise ValueError(f"score_draws must be (B >= 2, {len(models)} models), got {s.shape}")
    if not np.isfinite(noise_sd) or noise_sd <= 0:
        raise ValueError(f"the outcome's noise sd must be > 0, got {noise_sd!r}")
    mu = s.mean(axis=0)
    order = np.argsort(-mu)
    best, second = mu[order[0]], (mu[order[1]] if mu.size > 1 else -np.inf)
    z = quantile_nodes(n_nodes)
    usd = costs.reindex(models).to_numpy(dtype=float)
    rows = []
    for m in np.flatnonzero(np.isfinite(usd)):
        other = second if m == order[0] else best
        y = (s[:, m][:, None] + noise_sd * z[None, :]).ravel()  # predictive draws of Y_m, (O3)
        value = float(np.maximum(posterior_means(s[:, m], y, noise_sd), other).mean() - best)
        high, low = posterior_means(s[:, m], np.quantile(y, [0.9, 0.1]), noise_sd)
        leader = models[order[1] if m == order[0] and mu.size > 1 else order[0]]
        rows.append({"model_id": models[m], "outcome_sd": noise_sd, "cost_usd": float(usd[m]),
                     "value": max(value, 0.0), "pick_if_high": models[m] if high > other else leader,
                     "pick_if_low": models[m] if low > other else leader})
    return pd.DataFrame(rows, columns=OUTCOME_COLUMNS)
