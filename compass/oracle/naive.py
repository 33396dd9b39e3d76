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
  computed with exclusive cumulative products over models sorted by cost.
  A cell's cost is its mean cost over all of its generations (the subset only
  changes which model is picked, not that model's per-query price).

Performance: a cell's pmf depends only on (G_l, k_nl), so pmf and CDF are looked
up from one small (G, k, j) table per G′; the cost order is computed once per
curve; arrays are laid out (L, N, J) so the products over models run on
contiguous (N, J) slabs.
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
    pmf: np.ndarray, cdf: np.ndarray, cost: np.ndarray, grid: np.ndarray
) -> tuple[float, float]:
    """Mean over prompts of E[picked value] and E[picked cost] for the max-picking router.

    `pmf` and `cdf` (L, N, J) are independent per-model distributions on the common
    ordered `grid` (J,), with models (axis 0) already sorted from cheapest to dearest
    per prompt, and `cost` (L, N) in that same order. The router picks the largest
    value, ties to the cheaper (earlier) model: P(l picked, j) =
    pmf_l(j) Π_{m<l} F_m(j−1) Π_{m>l} F_m(j)  (eq. 10, generalized).
    """
    n_models, n_prompts, n_grid = pmf.shape
    # sel[l] = pmf_l · Π_{m<l} F_m(j−1) · Π_{m>l} F_m(j): a backward pass stores the
    # suffix products, a forward pass carries the prefix product. Explicit loops over
    # the L models multiply contiguous (N, J) slabs (faster than cumprod along axis 0).
    sel = np.empty_like(pmf)
    sel[-1] = 1.0
    for m in range(n_models - 1, 0, -1):
        np.multiply(sel[m], cdf[m], out=sel[m - 1])
    below = np.ones((n_prompts, n_grid))
    for m in range(n_models):
        sel[m] *= below
        sel[m] *= pmf[m]
        if m < n_models - 1:
            below *= cdf[m] - pmf[m]
    # one pass over sel: Σ_j sel·grid (value) and Σ_j sel (pick probability) per cell
    per_cell = sel.reshape(-1, n_grid) @ np.stack([grid, np.ones_like(grid)], axis=1)
    quality = float(per_cell[:, 0].sum()) / n_prompts
    routed_cost = float(per_cell[:, 1] @ cost.ravel()) / n_prompts
    return quality, routed_cost


def _naive_at(arrays: OracleArrays, subset: int, order: np.ndarray, sorted_cost: np.ndarray) -> tuple[float, float]:
    """E[O_biased(G′)] (eq. 5) given the per-prompt cost order and the (L, N) sorted cell costs."""
    _check_subset(subset, arrays.trials)
    g = arrays.trials.astype(int)
    k = arrays.successes.astype(int)
    g_max = int(g.max())
    table = hypergeom_table(g_max, subset).reshape((g_max + 1) ** 2, subset + 1)
    code = np.take_along_axis(g * (g_max + 1) + k, order, axis=1).T  # (L, N), cost order
    pmf = table.take(code, axis=0)
    cdf = np.cumsum(table, axis=1).take(code, axis=0)
    return routed_expectation(pmf, cdf, sorted_cost, np.arange(subset + 1) / subset)


def _sorted_cost(arrays: OracleArrays) -> tuple[np.ndarray, np.ndarray]:
    cost = arrays.cell_cost
    order = cost_order(cost)
    return order, np.take_along_axis(cost, order, axis=1).T


def naive_oracle(arrays: OracleArrays, subset: int | None = None) -> tuple[float, float]:
    """Exact E[O_biased(G′)] quality and cost (eq. 5) for subset size G′ (default: all G).

    With G′ equal to every model's G this is the plain O_biased of eq. 5; when
    models have unequal G the default G′ = min G puts them on a common footing.
    """
    g_sub = arrays.min_generations if subset is None else int(subset)
    return _naive_at(arrays, g_sub, *_sorted_cost(arrays))


def naive_curve(arrays: OracleArrays) -> pd.DataFrame:
    """O_biased(G′) for G′ = 1..min G: DataFrame[generations, quality, cost] (Figs. 2–3)."""
    order, sorted_cost = _sorted_cost(arrays)
    rows = [(g, *_naive_at(arrays, g, order, sorted_cost)) for g in range(1, arrays.min_generations + 1)]
    return pd.DataFrame(rows, columns=["generations", "quality", "cost"])
