"""Error-cost curve utilities for comparing threshold-selection methods.

Thesis seed 001 (Zellinger), Chapter 2, Section 2.4 "Results": Pareto filtering
of candidate threshold vectors (the Skyline operator), the area under the
error-cost curve (AUC) on the cost interval shared by two methods, mean
percentage change in AUC per cascade, and a one-sided Wilcoxon signed-rank test
paired by cascade (Tables 2.7, 2.8; Figures 2.6, 2.7).
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon


def _dominated_by_a_cheaper_bin(c: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Exact O(m) pre-filter for `pareto_mask`: True where a point is certainly dominated.

    Costs are cut into m equal-width bins; a point whose error is no lower than the best error of every
    strictly cheaper bin is dominated (a point in a lower bin has a strictly lower cost, since the bin index
    is monotone in cost), so dropping it never drops a Pareto point. Leaves the O(m log m) sort only the
    survivors (on a k = 5 threshold grid, ~0.1 % of the points)."""
    m = c.size
    lo, hi = float(c.min()), float(c.max())
    if m < 64 or not hi > lo:
        return np.zeros(m, dtype=bool)
    idx = ((c - lo) * (m / (hi - lo))).astype(np.intp)
    np.minimum(idx, m - 1, out=idx)
    best = np.full(m, np.inf)
    np.minimum.at(best, idx, e)
    best_cheaper = np.minimum.accumulate(np.concatenate([[np.inf], best[:-1]]))
    return e >= best_cheaper[idx]


def pareto_mask(cost: np.ndarray, error: np.ndarray) -> np.ndarray:
    """Boolean mask of the Pareto-optimal points for (min cost, min error).

    A point is dropped when another point is no worse in both metrics and
    strictly better in one (the Skyline operator, Börzsönyi et al. 2001, used in
    §2.4 via `paretoset`). Exact duplicates keep their first occurrence.
    An exact O(m) pre-filter (`_dominated_by_a_cheaper_bin`) removes most dominated points, then a
    sort on (cost, error) of the survivors, O(s log s).
    """
    c = np.asarray(cost, dtype=float)
    e = np.asarray(error, dtype=float)
    if c.shape != e.shape or c.ndim != 1:
        raise ValueError(f"cost and error must be 1-D arrays of equal length, got {c.shape} and {e.shape}")
    if np.any(~np.isfinite(c)) or np.any(~np.isfinite(e)):
        raise ValueError("cost and error must be finite")
    alive = np.flatnonzero(~_dominated_by_a_cheaper_bin(c, e))
    order = alive[np.lexsort((e[alive], c[alive]))]  # by cost, then error; ties keep the first occurrence
    e_sorted = e[order]
    best_before = np.minimum.accumulate(np.concatenate([[np.inf], e_sorted[:-1]]))
    keep_sorted = e_sorted < best_before
    mask = np.zeros(c.shape[0], dtype=bool)
    mask[order[keep_sorted]] = True
    return mask


def _sorted_curve(cost: np.ndarray, error: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(cost, dtype=float)
    e = np.asarray(error, dtype=float)
    if c.shape != e.shape or c.ndim != 1 or c.size == 0:
        raise ValueError(f"a curve needs equal-length non-empty 1-D cost and error, got {c.shape} and {e.shape}")
    if np.any(~np.isfinite(c)) or np.any(~np.isfinite(e)):
        raise ValueError("curve cost and error must be finite")
    order = np.lexsort((e, c))
    c, e = c[order], e[order]
    # np.interp needs distinct abscissae: at a repeated cost keep the lowest error.
    first = np.concatenate([[True], np.diff(c) > 0])
    return c[first], e[first]


def curve_auc(cost: np.ndarray, error: np.ndarray, lo: float, hi: float) -> float:
    """Mean error of the piecewise-linear error-cost curve over the cost interval [lo, hi].

    This is the thesis's AUC with cost normalised to [0, 1] on [lo, hi] (§2.4,
    Figure 2.5b): AUC = (1/(hi-lo)) * integral_lo^hi error(c) dc. Points are
    joined linearly; outside the observed costs the curve is extended linearly
    from its end segments (the authors' code uses interp1d with extrapolation).
    The integral of a piecewise-linear function is computed exactly.
    """
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise ValueError(f"need a finite cost interval with lo < hi, got [{lo}, {hi}]")
    c, e = _sorted_curve(cost, error)
    if c.size == 1:
        return float(e[0])

    def at(x: float) -> float:
        if x < c[0]:
            return float(e[0] + (e[1] - e[0]) * (x - c[0]) / (c[1] - c[0]))
        if x > c[-1]:
            return float(e[-1] + (e[-1] - e[-2]) * (x - c[-1]) / (c[-1] - c[-2]))
        return float(np.interp(x, c, e))

    inner = (c > lo) & (c < hi)
    xs = np.concatenate([[lo], c[inner], [hi]])
    ys = np.array([at(lo), *e[inner], at(hi)])
    return float(np.trapezoid(ys, xs) / (hi - lo))


def shared_cost_interval(costs: Sequence[np.ndarray]) -> tuple[float, float]:
    """[max of the curves' min costs, min of their max costs] (§2.4, AUC protocol)."""
    if len(costs) == 0:
        raise ValueError("need at least one curve to form a shared cost interval")
    lo = max(float(np.min(c)) for c in costs)
    hi = min(float(np.max(c)) for c in costs)
    return lo, hi


def auc_comparisons(curves: pd.DataFrame, reference: str = "RT") -> pd.DataFrame:
    """AUC of each method and of the reference method on their shared cost interval.

    ``curves`` is long: columns ``cascade, method, cost, error`` (optionally
    ``benchmark`` and ``k``; k defaults to the number of "->"-separated models in
    ``cascade``). For every (benchmark, cascade) and each method other than
    ``reference``, both curves are integrated over their shared cost interval.

    Returns columns: benchmark, cascade, k, method, lo, hi, auc_reference, auc,
    pct_delta, where pct_delta = 100 (auc_reference - auc) / auc, the thesis's
    %Δ of the reference relative to the baseline (negative = reference better).
    Pairs whose cost ranges do not overlap get NaN AUCs.
    """
    needed = {"cascade", "method", "cost", "error"}
    missing = needed - set(curves.columns)
    if missing:
        raise ValueError(f"curves is missing column(s) {sorted(missing)}")
    df = curves.copy()
    if "benchmark" not in df:
        df["benchmark"] = ""
    if "k" not in df:
        df["k"] = df["cascade"].astype(str).str.count("->") + 1
    if reference not in set(df["method"]):
        raise ValueError(f"reference method {reference!r} not found in curves['method']")
    rows = []
    for (bench, casc), g in df.groupby(["benchmark", "cascade"], sort=True):
        ref = g[g["method"] == reference]
        if ref.empty:
            raise ValueError(f"cascade {casc!r} (benchmark {bench!r}) has no {reference!r} curve")
        for method, gm in g[g["method"] != reference].groupby("method", sort=True):
            lo, hi = shared_cost_interval([ref["cost"].to_numpy(), gm["cost"].to_numpy()])
            if hi > lo:
                a_ref = curve_auc(ref["cost"].to_numpy(), ref["error"].to_numpy(), lo, hi)
                a_m = curve_auc(gm["cost"].to_numpy(), gm["error"].to_numpy(), lo, hi)
            else:
                a_ref = a_m = np.nan
            rows.append(
                {
                    "benchmark": bench,
                    "cascade": casc,
                    "k": int(g["k"].iloc[0]),
                    "method": method,
                    "lo": lo,
                    "hi": hi,
                    "auc_reference": a_ref,
                    "auc": a_m,
                    "pct_delta": 100.0 * (a_ref - a_m) / a_m if a_m and np.isfinite(a_m) else np.nan,
                }
            )
    return pd.DataFrame(rows)


def paired_wilcoxon_p(baseline_auc: np.ndarray, reference_auc: np.ndarray) -> float:
    """One-sided Wilcoxon signed-rank p-value for H1: baseline AUC > reference AUC.

    The thesis says "Wilcoxon rank-sum test paired by cascade"; a paired test is
    the signed-rank test, which is what the authors' code runs
    (``scipy.stats.wilcoxon(base, rt, alternative='greater')``). Returns NaN when
    fewer than one non-zero difference is available.
    """
    b = np.asarray(baseline_auc, dtype=float)
    r = np.asarray(reference_auc, dtype=float)
    ok = np.isfinite(b) & np.isfinite(r)
    if not np.any(b[ok] != r[ok]):
        return float("nan")
    return float(wilcoxon(b[ok], r[ok], alternative="greater").pvalue)


def compare_methods(auc_table: pd.DataFrame, by: str = "k") -> pd.DataFrame:
    """Table 2.7 / Figure 2.6 summary: mean %Δ AUC and Wilcoxon p per group and method.

    ``auc_table`` is the output of :func:`auc_comparisons`. Groups by ``by``
    (``"k"`` for Figure 2.6, ``"benchmark"`` for Table 2.7). Returns columns:
    <by>, method, n_cascades, auc_reference, auc, mean_pct_delta, se_pct_delta, p_value.
    """
    needed = {by, "method", "auc_reference", "auc", "pct_delta"}
    missing = needed - set(auc_table.columns)
    if missing:
        raise ValueError(f"auc_table is missing column(s) {sorted(missing)}")
    rows = []
    for (group, method), g in auc_table.dropna(subset=["auc", "auc_reference"]).groupby([by, "method"], sort=True):
        d = g["pct_delta"].to_numpy()
        rows.append(
            {
                by: group,
                "method": method,
                "n_cascades": len(g),
                "auc_reference": g["auc_reference"].mean(),
                "auc": g["auc"].mean(),
                "mean_pct_delta": d.mean(),
                "se_pct_delta": d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan,
                "p_value": paired_wilcoxon_p(g["auc"].to_numpy(), g["auc_reference"].to_numpy()),
            }
        )
    return pd.DataFrame(rows)


def k_group_summary(auc_table: pd.DataFrame) -> pd.DataFrame:
    """:func:`compare_methods` per cascade size k, over k >= 3 (Table 2.7's headline) and over all cascades;
    column ``k_group`` = '2', '3', ..., 'k>=3', 'all' (groups without cascades are left out)."""
    groups = [(str(k), g) for k, g in auc_table.groupby("k")] + [("k>=3", auc_table[auc_table["k"] >= 3]),
                                                                  ("all", auc_table)]
    return pd.concat([compare_methods(g.assign(group=label), by="group").rename(columns={"group": "k_group"})
                      for label, g in groups if not g.empty], ignore_index=True)


def size_ordered_subcascades(chain: Sequence[str], min_size: int = 2) -> list[tuple[str, ...]]:
    """Every subset of ``chain`` with at least ``min_size`` models, kept in chain order.

    For the 5 Llama models this gives the thesis's 26 cascades (§2.4).
    """
    models = list(chain)
    if len(set(models)) != len(models):
        raise ValueError(f"chain has duplicate models: {models}")
    if min_size < 1:
        raise ValueError(f"min_size must be >= 1, got {min_size}")
    return [c for size in range(min_size, len(models) + 1) for c in combinations(models, size)]
