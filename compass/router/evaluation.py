"""Efficiency gain at fixed primary-model usage (seed 003 §4.1; spec §3.2): for each usage ratio ρ, send the
top round(ρ·N) test queries by ψ̂ to M_p; TE = Σ 1{→M_p}·r; EG = (TE − TE_random)/N with the random router's
expected TE = ρ·Σ r in closed form. EG is 0 at ρ = 0 and ρ = 1 for every router."""

from __future__ import annotations

import numpy as np

PMUR_GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)


def efficiency_gain(psi_hat: np.ndarray, r_test: np.ndarray, grid: np.ndarray = PMUR_GRID,
                    seed: int = 0) -> np.ndarray:
    """EG(ρ) for each ρ in `grid`; ties in ψ̂ (trees make many) broken by a seeded random key."""
    psi, r = np.asarray(psi_hat, dtype=float), np.asarray(r_test, dtype=float)
    tie = np.random.default_rng(seed).random(len(psi))
    order = np.lexsort((tie, -psi))
    gains = np.concatenate([[0.0], np.cumsum(r[order])])
    n = len(r)
    k = np.round(grid * n).astype(int)
    return (gains[k] - grid * r.sum()) / n
