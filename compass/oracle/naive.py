"""The naive (biased) oracle O_biased(G′) as an exact expectation over subsets.

Seed paper 002, §3 eq. 5: O_biased = (1/N) Σ_n max_l φ̄_nl (eq. 4 with the sample
means φ̄_nl in place of μ_nl). The paper's bias curves (§4.2.1, Figs. 2–3) and the
extrapolation of §4.3.1 use O_biased(G′) for G′ = 1..G, obtained by averaging over
random G′-subsets of the G generations. Here that average is computed exactly,
not by Monte Carlo (own derivation):

* Within a cell with k successes out of G, the number of successes J in a
  uniformly random G′-subset is hypergeometric, J ~ Hyp(G, k, G′), so the subset
  mean J/G′ lives on the common grid {0, 1/G′, ..., 1}.
* Subsets are drawn independently across models, so with per-cell CDFs F_l on that
  grid, E[max_l J_l/G′] = Σ_j (j/G′) [Π_l F_l(j) − Π_l F_l(j−1)]  (cf. eq. 10,
  which is the same identity with Binomial CDFs and identical p).
* The cost of the naive router is the cost of the model it picks. Ties on the
  subset mean go to the cheaper cell (then the lower model index), so
  P(l picked, J_l = j) = pmf_l(j) Π_{m cheaper} F_m(j−1) Π_{m dearer} F_m(j),
  summed against the costs by a backward recursion over models sorted by cost
  (`routed_expectation`).
  A cell's cost is its mean cost over all of its generations (the subset only
  changes which model is picked, not that model's per-query price).

Performance: a cell's pmf depends only on (G_l, k_nl), so pmf and CDF are looked
up from one small (G, k, j) table per G′, one model at a time inside the
recursion over models; the cost order is computed once per curve.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from compass.oracle.records import OracleArrays


def hypergeom_table(g_max: int, subset: int) -> np.ndarray:
    """P(J = j) for J ~ Hyp(G, k, G′) for every G ≤ g_max, k ≤ G: shape (g_max+1, g_max+1, G′+1).

    Entries with k > G or G < G′ are zero (never looked up by valid cells).
    """
    gg, kk = np.meshgrid(np.arange(g_max + 1), np.arange(g_max + 1), indexing="ij")
    j = np.arange(subset + 1)
    valid = (kk <= gg) & (gg >= subset)
    table = np.zeros((g_max + 1, g_max + 1, subset + 1))
    table[valid] = hypergeom.pmf(j[None, :], gg[valid][:, None], kk[valid][:, None], subset)
    return table


def _check_subset(subset: int, trials: np.ndarray) -> None:
    g_min = int(np.min(trials))
    if subset < 1 or subset > g_min:
        raise ValueError(f"subset size G′={subset} must lie in 1..{g_min} (the smallest G)")


def subset_pmf(successes: np.ndarray, trials: np.ndarray, subset: int) -> np.ndarray:
    """P(J = j) for J ~ Hyp(trials, successes, subset), j = 0..subset; shape (..., subset+1)."""
    k = np.asarray(successes, dtype=int)
    g = np.asarray(trials, dtype=int)
    _check_subset(subset, g)
    return hypergeom_table(int(g.max()), subset)[g, k]


def cost_order(cost: np.ndarray) -> np.ndarray:
    """Per prompt, model indices from cheapest to dearest (stable: ties keep model order), shape (N, L)."""
    return np.argsort(cost, axis=1, kind="stable")


def routed_expectation(
    table: np.ndarray, codes: np.ndarray, cost: np.ndarray, grid: np.ndarray
) -> tuple[float, float]:
    """Mean over prompts of E[picked value] and E[picked cost] for the max-picking router (`routed_per_prompt`)."""
    p_max, t = _routed(table, codes, cost)
    return float((p_max @ grid).sum()) / codes.shape[1], float(t.sum()) / codes.shape[1]


def routed_per_prompt(
    table: np.ndarray, codes: np.ndarray, cost: np.ndarray, grid: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt, E[picked value] and E[picked cost] for the max-picking router, each shape (N,).

    Each cell's value is an independent draw from the pmf `table[codes[l, n]]` on the
    common ordered `grid` (J,); `table` is (C, J), and `codes` and `cost` are (L, N)
    with models (axis 0) already sorted from cheapest to dearest per prompt. The
    router picks the largest value, ties to the cheaper (earlier) model.

    Value (eq. 10 generalized): E[max_l V_l] = Σ_j grid_j [Π_l F_l(j) − Π_l F_l(j−1)].
    Cost: E[C] = Σ_j Σ_l c_l pmf_l(j) Π_{m<l} F_m(j−1) Π_{m>l} F_m(j), evaluated by the
    backward recursion T_l = c_l pmf_l A_l + F_l(j−1) T_{l+1} with A_l = Π_{m>l} F_m(j),
    so E[C] = Σ_j T_0(j) and A ends as Π_l F_l(j). Each step looks up one model's
    (N, J) rows, so nothing of size L·N·J is materialized.
    """
    p_max, t = _routed(table, codes, cost)
    return p_max @ grid, t.sum(axis=1)


def _routed(table: np.ndarray, codes: np.ndarray, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(max = grid_j), T_0(j)) per prompt, both (N, J): the recursion of `routed_per_prompt`."""
    cdf = np.cumsum(table, axis=1)
    cdf_below = cdf - table  # F(j−1)
    n_models, n_prompts = codes.shape
    above = np.ones((n_prompts, table.shape[1]))  # A_l
    t = np.zeros((n_prompts, table.shape[1]))  # T_l
    for m in range(n_models - 1, -1, -1):
        picked = table.take(codes[m], axis=0)
        picked *= above
        picked *= cost[m][:, None]
        t *= cdf_below.take(codes[m], axis=0)
        t += picked
        above *= cdf.take(codes[m], axis=0)
    return np.diff(above, axis=1, prepend=0.0), t  # P(max = grid_j)


def _naive_at(codes: np.ndarray, g_max: int, subset: int, sorted_cost: np.ndarray) -> tuple[float, float]:
    """E[O_biased(G′)] (eq. 5) from cell codes G·(g_max+1)+k and costs, both (L, N) in per-prompt cost order."""
    table = hypergeom_table(g_max, subset).reshape((g_max + 1) ** 2, subset + 1)
    return routed_expectation(table, codes, sorted_cost, np.arange(subset + 1) / subset)


def _sorted_cells(arrays: OracleArrays) -> tuple[np.ndarray, int, np.ndarray]:
    """(L, N) cell codes G·(g_max+1)+k and cell costs, per prompt from cheapest to dearest; and g_max."""
    cost = arrays.cell_cost
    # the smallest integer types, built in place (issue 45: at 10^8 cells each int64 (N, L) array is 0.8 GB)
    order = cost_order(cost).astype(np.min_scalar_type(cost.shape[1] - 1))
    codes = arrays.trials.astype(np.int32)  # int32: codes < (g_max + 1)^2
    g_max = int(codes.max())
    codes *= np.int32(g_max + 1)
    codes += arrays.successes.astype(np.int32)
    codes = np.take_along_axis(codes, order, axis=1)
    return codes.T, g_max, np.take_along_axis(cost, order, axis=1).T


def naive_oracle(arrays: OracleArrays, subset: int | None = None) -> tuple[float, float]:
    """Exact E[O_biased(G′)] quality and cost (eq. 5) for subset size G′ (default: all G).

    With G′ equal to every model's G this is the plain O_biased of eq. 5; when
    models have unequal G the default G′ = min G puts them on a common footing.
    """
    g_sub = arrays.min_generations if subset is None else int(subset)
    _check_subset(g_sub, arrays.trials)
    codes, g_max, sorted_cost = _sorted_cells(arrays)
    return _naive_at(codes, g_max, g_sub, sorted_cost)


def naive_per_prompt(arrays: OracleArrays) -> tuple[np.ndarray, np.ndarray]:
    """Each prompt's term of `naive_oracle` at G′ = min G (quality and cost, shape (N,)): the oracle is their mean,
    so a prompt resample's oracle is the mean of the resampled terms (`bootstrap.bootstrap_mean_interval`)."""
    g_sub = arrays.min_generations
    codes, g_max, sorted_cost = _sorted_cells(arrays)
    table = hypergeom_table(g_max, g_sub).reshape((g_max + 1) ** 2, g_sub + 1)
    return routed_per_prompt(table, codes, sorted_cost, np.arange(g_sub + 1) / g_sub)


def naive_curve(arrays: OracleArrays) -> pd.DataFrame:
    """O_biased(G′) for G′ = 1..min G: DataFrame[generations, quality, cost] (Figs. 2–3)."""
    codes, g_max, sorted_cost = _sorted_cells(arrays)
    rows = [(g, *_naive_at(codes, g_max, g, sorted_cost)) for g in range(1, arrays.min_generations + 1)]
    return pd.DataFrame(rows, columns=["generations", "quality", "cost"])
