"""Routing decisions (seed 003 §2.2–2.3, eq. 4, Remark 2, App. A.1): send q to M_p iff ψ̂(q) > w·(C_p(q) − C_a(q)),
with real per-query costs or the paper's normalized ones (C_p = 1, C_a = 0, so ψ̂(q) > w)."""

from __future__ import annotations

import numpy as np


def route_to_primary(psi_hat: np.ndarray, w: float, cost_gap: np.ndarray | float = 1.0) -> np.ndarray:
    """Boolean per query: ψ̂(q) > w·(C_p(q) − C_a(q)) (eq. 4; cost_gap = 1 is the normalized-cost rule)."""
    if w < 0:
        raise ValueError(f"w must be >= 0, got {w}")
    return np.asarray(psi_hat, dtype=float) > w * np.asarray(cost_gap, dtype=float)


def choose_w(psi_hat: np.ndarray, cost_gap: np.ndarray | float = 1.0, max_primary_share: float | None = None,
             max_cost_share: float | None = None, cost_p: np.ndarray | float = 1.0,
             cost_a: np.ndarray | float = 0.0) -> float:
    """App. A.1: the smallest w (the most quality) whose routing on held-out queries meets the budget: at most
    `max_primary_share` of queries to M_p, and/or total cost at most `max_cost_share` × always-M_p's.

    Candidate w are the break points ψ̂(q)/(C_p − C_a) (routing changes only there) and 0."""
    psi = np.asarray(psi_hat, dtype=float)
    gap = np.broadcast_to(np.asarray(cost_gap, dtype=float), psi.shape)
    c_p, c_a = (np.broadcast_to(np.asarray(c, dtype=float), psi.shape) for c in (cost_p, cost_a))
    candidates = np.unique(np.concatenate([[0.0], np.maximum(psi / np.where(gap > 0, gap, np.inf), 0.0)]))
    for w in candidates:
        to_p = route_to_primary(psi, w, gap)
        share_ok = max_primary_share is None or to_p.mean() <= max_primary_share + 1e-12
        cost = np.where(to_p, c_p, c_a).sum() / c_p.sum()
        cost_ok = max_cost_share is None or cost <= max_cost_share + 1e-12
        if share_ok and cost_ok:
            return float(w)
    return float(candidates[-1])


def budget_overrun(to_p: np.ndarray, cost_p: np.ndarray, cost_a: np.ndarray, held_to_p: np.ndarray,
                   held_cost_p: np.ndarray, held_cost_a: np.ndarray, max_primary_share: float | None = None,
                   max_cost_share: float | None = None, z: float = 2.0) -> list[tuple[str, float, float, float]]:
    """The budgets a batch's routing exceeds by more than `z` sampling errors, as (budget, realized, target, se).

    w is chosen on held-out gold queries (App. A.1), so a budget holds in expectation on traffic like them only; a
    batch of n such queries still varies. Share: se = sqrt(s(1 − s)/n) at s = the held-out share. Cost share
    r = Σ c_i / Σ C_p,i: the delta method on d_i = c_i − r·C_p,i, se = sd(d)/(√n · mean(C_p)) with sd(d) from the
    held-out rows at r = the target and mean(C_p) from the batch."""
    n, out = len(to_p), []
    if max_primary_share is not None:
        s = float(np.mean(held_to_p))
        se = np.sqrt(s * (1 - s) / n)
        realized = float(np.mean(to_p))
        if realized > max_primary_share + z * se:
            out.append(("share", realized, max_primary_share, float(se)))
    if max_cost_share is not None:
        held_cost = np.where(held_to_p, held_cost_p, held_cost_a)
        se = np.std(held_cost - max_cost_share * held_cost_p, ddof=1) / (np.sqrt(n) * np.mean(cost_p))
        realized = float(np.where(to_p, cost_p, cost_a).sum() / np.sum(cost_p))
        if realized > max_cost_share + z * se:
            out.append(("cost share", realized, max_cost_share, float(se)))
    return out
