"""Scale normalization of gold-standard labels (seed 003, Remark 1): r ← c·r so that gold and preference labels
share one scale. Fitted on training labels only."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

MODES = ("variance", "magnitude", "wasserstein", "none")


def scale_constant(r: np.ndarray, y: np.ndarray, mode: str = "variance") -> float:
    """c > 0 of Remark 1: variance matching sd(y)/sd(r) (the paper's choice, (2)), magnitude
    max|y|/max|r| (1), or the 1-D 2-Wasserstein match of the empirical distributions of c·r and y (3);
    "none" is 1 (ablation iii). ValueError when the gold labels carry no scale (all equal / all zero)."""
    r, y = np.asarray(r, dtype=float), np.asarray(y, dtype=float)
    if mode == "none":
        return 1.0
    if mode == "variance":
        sd = r.std(ddof=1) if r.size > 1 else 0.0
        if not sd > 0:
            raise ValueError("gold labels have zero variance: variance normalization is undefined")
        return float(y.std(ddof=1) / sd)
    if mode == "magnitude":
        top = np.abs(r).max(initial=0.0)
        if not top > 0:
            raise ValueError("gold labels are all zero: magnitude normalization is undefined")
        return float(np.abs(y).max() / top)
    if mode == "wasserstein":
        return _w2_scale(r, y)
    raise ValueError(f"unknown normalization {mode!r}; use one of {MODES}")


def _w2_scale(r: np.ndarray, y: np.ndarray, n_q: int = 512) -> float:
    """argmin_c W2(emp(c·r), emp(y)): the L2 distance of the quantile functions on a common grid (1-D)."""
    q = (np.arange(n_q) + 0.5) / n_q
    qr, qy = np.quantile(r, q), np.quantile(y, q)
    if not np.any(qr != 0):
        raise ValueError("gold labels are all zero: Wasserstein normalization is undefined")
    # c·qr - qy is linear in c: the minimizer over c >= 0 has a closed form; keep a bounded search as a guard
    closed = float(qr @ qy / (qr @ qr))
    if closed > 0:
        return closed
    res = minimize_scalar(lambda c: float(np.mean((c * qr - qy) ** 2)), bounds=(1e-6, 1e6), method="bounded")
    return float(res.x)
