"""The Capability Frontier: α-sweep routing, Pareto filter and headline numbers.

Seed paper 002, §4.4 eqs. 19–21: per prompt, route to the model maximizing
φ(α) = α Q* − (1 − α) C*, with Q*, C* min–max normalized over all cells
(eqs. 20–21); sweeping α ∈ [0, 1] traces the frontier. Routing decisions use one
set of estimates and the reported quality/cost another, so debiasing is applied
"separately to quality and cost" (§4.4, steps 1–2): callers pass selection and
evaluation matrices (several folds for cross-fitting, averaged).

Headline numbers (§6.1, Tables 1–2): error-rate reduction of O(α=1) vs the SOTA
model, and the cost saving at the α* whose quality matches SOTA. The area under
the frontier follows RouterBench's AIQ (Hu et al., 2024): the normalized area
under the non-decreasing concave hull of a router's (cost, quality) points.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

BLOCK = 1 << 16  # prompts per block of the α-sweep's (N, L) temporaries
ALPHAS_AT_ONCE = 16  # α values routed per pass over the blocks (their picks: 16 bytes a prompt)

Fold = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def default_alphas(n: int = 81) -> np.ndarray:
    """α grid: 0, 1 and α = 1/(1+r) for trade-off ratios r log-spaced in [1e-4, 1e4].

    Linear scalarization only reaches hull vertices, whose α cluster where the
    normalized cost scale is extreme, so a log grid in r covers them better than
    a uniform grid in α.
    """
    r = np.logspace(4, -4, n)
    return np.concatenate([[0.0], 1.0 / (1.0 + r), [1.0]])


def route(score: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Per prompt, the column of the largest score; ties go to the cheaper cell, then lower index."""
    best = score.max(axis=1, keepdims=True)
    tied_cost = np.where(score >= best - 1e-12, cost, np.inf)
    return np.argmin(tied_cost, axis=1)


def _picks(sel_q: np.ndarray, sel_c: np.ndarray, alphas: np.ndarray,
           bounds: tuple[tuple[float, float], tuple[float, float]]) -> np.ndarray:
    """The routed column of every prompt at every α, shape (A, N) in the smallest integer type: `route` of the
    normalized score α q̃ − (1 − α) c̃ (eqs. 20–21 with the whole matrix's min and max, `bounds` = (`_bounds` of
    sel_q, of sel_c)), a block of prompts at a time (issue 45: the (N, L) temporaries are a block's, not 10^8
    records'); elementwise, so the same picks."""
    (q_lo, q_hi), (c_lo, c_hi) = bounds
    picks = np.empty((alphas.size, sel_q.shape[0]), dtype=np.min_scalar_type(max(sel_q.shape[1] - 1, 0)))
    for start in range(0, sel_q.shape[0], BLOCK):
        part = slice(start, start + BLOCK)
        qn, cn = _scaled(sel_q[part], q_lo, q_hi), _scaled(sel_c[part], c_lo, c_hi)
        for i, a in enumerate(alphas):
            picks[i, part] = route(a * qn - (1.0 - a) * cn, sel_c[part])
    return picks


def _bounds(x: np.ndarray) -> tuple[float, float]:
    return np.nanmin(x), np.nanmax(x)


def _scaled(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Eqs. 20–21: (x − min) / (max − min) with the whole matrix's (lo, hi); a constant matrix maps to 0."""
    return np.zeros_like(x) if hi <= lo else (x - lo) / (hi - lo)


def sweep(folds: Sequence[Fold], alphas: np.ndarray | None = None) -> pd.DataFrame:
    """Trace (Q(α), C(α)) averaged over folds: DataFrame[alpha, quality, cost].

    Each fold is (select_quality, select_cost, eval_quality, eval_cost), all (N, L).
    """
    alphas = default_alphas() if alphas is None else np.asarray(alphas, dtype=float)
    if np.any((alphas < 0) | (alphas > 1)):
        raise ValueError("alphas must lie in [0, 1]")
    q_sum = np.zeros(alphas.size)
    c_sum = np.zeros(alphas.size)
    for sel_q, sel_c, eval_q, eval_c in folds:
        rows, bounds = np.arange(sel_q.shape[0]), (_bounds(sel_q), _bounds(sel_c))
        for first in range(0, alphas.size, ALPHAS_AT_ONCE):  # picks of a few α at a time: N bytes each
            for i, pick in enumerate(_picks(sel_q, sel_c, alphas[first:first + ALPHAS_AT_ONCE], bounds), start=first):
                q_sum[i] += eval_q[rows, pick].mean()
                c_sum[i] += eval_c[rows, pick].mean()
    return pd.DataFrame({"alpha": alphas, "quality": q_sum / len(folds), "cost": c_sum / len(folds)})


def pareto(points: pd.DataFrame) -> pd.DataFrame:
    """Rows not dominated in (higher quality, lower cost), sorted by cost; duplicates dropped."""
    pts = points.sort_values(["cost", "quality"], ascending=[True, False], kind="stable")
    best = pts["quality"].cummax().shift(fill_value=-np.inf)
    return pts[pts["quality"].to_numpy() > best.to_numpy()].reset_index(drop=True)


def error_rate_reduction(oracle_quality: float, sota_quality: float) -> float:
    """Table 1: (err_SOTA − err_oracle) / err_SOTA with err = 1 − quality (NaN if SOTA is perfect)."""
    err = 1.0 - sota_quality
    return float("nan") if err <= 0 else float((err - (1.0 - oracle_quality)) / err)


def cost_at_quality(frontier: pd.DataFrame, target_quality: float) -> float:
    """Cheapest cost at which the frontier reaches `target_quality` (the α* of Table 2).

    Interpolates linearly between consecutive Pareto points (a randomized mix of
    two routers attains the segment); NaN when the frontier never reaches it.
    """
    front = pareto(frontier)
    q, c = front["quality"].to_numpy(), front["cost"].to_numpy()
    if target_quality > q.max():
        return float("nan")
    if target_quality <= q[0]:
        return float(c[0])
    return float(np.interp(target_quality, q, c))


def cost_saving(frontier: pd.DataFrame, sota_quality: float, sota_cost: float) -> float:
    """Table 2: 1 − C(α*)/C_SOTA at the α* matching SOTA quality."""
    if sota_cost <= 0:
        raise ValueError(f"SOTA cost must be positive to measure a saving, got {sota_cost}")
    return 1.0 - cost_at_quality(frontier, sota_quality) / sota_cost


def concave_hull(points: pd.DataFrame) -> pd.DataFrame:
    """Non-decreasing upper concave hull of (cost, quality) points, sorted by cost."""
    front = pareto(points)
    hull: list[tuple[float, float]] = []
    for c, q in zip(front["cost"].to_numpy(), front["quality"].to_numpy()):
        while len(hull) >= 2:
            (c1, q1), (c2, q2) = hull[-2], hull[-1]
            if (q2 - q1) * (c - c1) <= (q - q1) * (c2 - c1):  # middle point on or below the chord
                hull.pop()
            else:
                break
        hull.append((float(c), float(q)))
    return pd.DataFrame(hull, columns=["cost", "quality"])


def aiq(points: pd.DataFrame, cost_range: tuple[float, float] | None = None) -> float:
    """RouterBench AIQ: (1/(c_max − c_min)) ∫ R̃(c) dc over the cost range.

    R̃ is the non-decreasing concave hull of the points, flat beyond the most
    accurate point and 0 below the cheapest point (nothing is attainable there).
    `cost_range` defaults to the points' own cost span; pass a common range to
    compare routers. A single point in its own range scores its quality.
    """
    hull = concave_hull(points)
    c, q = hull["cost"].to_numpy(), hull["quality"].to_numpy()
    lo, hi = (c[0], c[-1]) if cost_range is None else cost_range
    if hi <= lo:
        return float(q[-1]) if hi >= c[0] else 0.0
    start = max(lo, c[0])
    if start >= hi:
        return 0.0
    xs = np.unique(np.concatenate([[start, hi], c[(c > start) & (c < hi)]]))
    ys = np.interp(xs, c, q)
    return float(np.sum(np.diff(xs) * (ys[1:] + ys[:-1]) / 2.0) / (hi - lo))


def headroom_fraction(
    router: pd.DataFrame, baseline: pd.DataFrame, oracle: pd.DataFrame
) -> float:
    """Share of the debiased headroom a router captures, on AIQ over a common cost range.

    (AIQ_router − AIQ_baseline) / (AIQ_oracle − AIQ_baseline), where `baseline` is
    usually the single models' points and `oracle` the debiased frontier; the range
    spans all three point sets. 0 = no better than picking one model, 1 = oracle.
    """
    allc = pd.concat([router["cost"], baseline["cost"], oracle["cost"]])
    rng = (float(allc.min()), float(allc.max()))
    a_b, a_o = aiq(baseline, rng), aiq(oracle, rng)
    if a_o <= a_b:
        raise ValueError("the oracle frontier has no headroom over the baseline on this cost range")
    return (aiq(router, rng) - a_b) / (a_o - a_b)
