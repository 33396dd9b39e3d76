"""The naive (biased) oracle O_biased(G′) as an exact expectation over subsets.

Seed paper 002, §3 eq. 5: O_biased = (1/N) Σ_n max_l φ̄_nl. The paper's bias curves
(§4.2.1, Figs. 2–3) and the extrapolation of §4.3.1 use O_biased(G′) for
G′ = 1..G, obtained by averaging over random G′-subsets of the G generations.
Here that average is computed exactly, not by Monte Carlo (own derivation):

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
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import hypergeom

from compass.oracle.records import OracleArrays


def subset_pmf(successes: np.ndarray, trials: np.ndarray, subset: int) -> np.ndarray:
    """P(J = j) for J ~ Hyp(trials, successes, subset), j = 0..subset; shape (..., subset+1).

    Evaluated once per distinct (G, k) pair and looked up, so it is cheap on
    10^5–10^6 cells.
    """
    k = np.asarray(successes, dtype=int)
    g = np.asarray(trials, dtype=int)
    if subset < 1 or subset > g.min():
        raise ValueError(f"subset size G′={subset} must lie in 1..{int(g.min())} (the smallest G)")
    g_max = int(g.max())
    gg, kk = np.meshgrid(np.arange(g_max + 1), np.arange(g_max + 1), indexing="ij")
    j = np.arange(subset + 1)
    valid = (kk <= gg) & (gg >= subset)
    table = np.zeros((g_max + 1, g_max + 1, subset + 1))
    table[valid] = hypergeom.pmf(j[None, :], gg[valid][:, None], kk[valid][:, None], subset)
    return table[g, k]


def selection_probabilities(pmf: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """P(model l is picked and its statistic is at grid point j), shape (N, L, J).

    `pmf` (N, L, J) holds independent per-model distributions on a common ordered
    grid; the router picks the largest value, ties to the cheaper cell (`cost`
    (N, L)), then to the lower model index.
    """
    order = np.argsort(cost, axis=1, kind="stable")
    p = np.take_along_axis(pmf, order[:, :, None], axis=1)
    cdf = np.cumsum(p, axis=2)
    cdf_below = np.concatenate([np.zeros_like(cdf[:, :, :1]), cdf[:, :, :-1]], axis=2)
    ones = np.ones_like(cdf[:, :1, :])
    # models cheaper than l must be strictly below; dearer ones at most equal
    left = np.cumprod(np.concatenate([ones, cdf_below[:, :-1, :]], axis=1), axis=1)
    right = np.cumprod(np.concatenate([ones, cdf[:, :0:-1, :]], axis=1), axis=1)[:, ::-1, :]
    sel_sorted = p * left * right
    out = np.empty_like(sel_sorted)
    np.put_along_axis(out, order[:, :, None], sel_sorted, axis=1)
    return out


def naive_oracle(arrays: OracleArrays, subset: int | None = None) -> tuple[float, float]:
    """Exact E[O_biased(G′)] quality and cost (eq. 5) for subset size G′ (default: all G).

    With G′ equal to every model's G this is the plain O_biased of eq. 5; when
    models have unequal G the default G′ = min G puts them on a common footing.
    """
    g_sub = arrays.min_generations if subset is None else int(subset)
    pmf = subset_pmf(arrays.successes, arrays.trials, g_sub)
    cost = arrays.cell_cost
    sel = selection_probabilities(pmf, cost)
    grid = np.arange(g_sub + 1) / g_sub
    quality = float(np.mean(np.sum(sel * grid, axis=(1, 2))))
    routed_cost = float(np.mean(np.sum(sel.sum(axis=2) * cost, axis=1)))
    return quality, routed_cost


def naive_curve(arrays: OracleArrays) -> pd.DataFrame:
    """O_biased(G′) for G′ = 1..min G: DataFrame[generations, quality, cost] (Figs. 2–3)."""
    rows = [(g, *naive_oracle(arrays, g)) for g in range(1, arrays.min_generations + 1)]
    return pd.DataFrame(rows, columns=["generations", "quality", "cost"])
