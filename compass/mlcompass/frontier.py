"""The parametric capability-cost frontier shared by theory and estimation.

ML Compass (seed 000), Assumption 3.4 and §4.4: a capability profile x is
attainable at cost c when

    F_X(x) = (sum_i a_i x_i^b)^(1/b)  <=  F_C(c) = c0 * c^d,

with a on the simplex, b > 0 (b >= 1 in the theory), c0 > 0 and 0 < d <= 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def ces_score(x: np.ndarray, a: np.ndarray, b: float) -> np.ndarray:
    """CES capability index s(x; a, b) = (sum_i a_i x_i^b)^(1/b) (§4.4, Step 2).

    `x` is (I,) or (n, I) with entries in [0, 1]; returns a scalar or (n,) array.
    """
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    return np.power(np.sum(np.asarray(a) * np.power(x, b), axis=-1), 1.0 / b)


@dataclass(frozen=True)
class CESFrontier:
    """Fitted (or assumed) frontier F_X(x) <= c0 c^d; `tier_levels` are the λ_t of §4.4."""

    a: np.ndarray
    b: float
    c0: float
    d: float
    tier_levels: np.ndarray = field(default_factory=lambda: np.empty(0))

    def capability(self, x: np.ndarray) -> np.ndarray:
        """F_X(x), the CES aggregate of internal measures."""
        return ces_score(x, self.a, self.b)

    def attainable(self, c: np.ndarray) -> np.ndarray:
        """F_C(c) = c0 c^d, the capability attainable at normalized cost c."""
        return self.c0 * np.power(np.asarray(c, dtype=float), self.d)

    def min_cost(self, x: np.ndarray) -> np.ndarray:
        """Smallest c with F_X(x) <= F_C(c): c = (F_X(x)/c0)^(1/d)."""
        return np.power(self.capability(x) / self.c0, 1.0 / self.d)


def cost_frontier_curve(c0: float, d: float, tier_costs: np.ndarray, cost_range: tuple[float, float], top: float,
                        n: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """F_C(c) = c0 c^d where a chart can show it (§4.4 Step 3): over `cost_range` (the priced models' costs, > 0),
    ending where it reaches capability `top` (the most capable point drawn: beyond it no model tells where the
    frontier runs; the crossing itself is the last point).
    Returns (c, F_C(c), fitted), `fitted` true between the lowest and highest tier cost c_t, the costs the
    fit saw; outside them the curve is an extrapolation."""
    lo, hi = cost_range
    if c0 * lo**d >= top:
        return np.empty(0), np.empty(0), np.empty(0, dtype=bool)
    hi = min(hi, (top / c0) ** (1.0 / d))
    cost = np.unique(np.concatenate([np.geomspace(lo, hi, n), np.clip(tier_costs, lo, hi)]))
    level = np.minimum(c0 * cost**d, top)
    fitted = (cost >= np.min(tier_costs)) & (cost <= np.max(tier_costs))
    return cost, level, fitted
