"""Reference rows that do not learn (developers' guide: "benchmarks must be able to lose"). A matcher's
advantage counts only beyond both:

- `CheapestFeasible`, an oracle lookup: it is told which models meet the user's constraints and
  recommends the cheapest of them from round 1; it duels that model against the cheapest other model
  (the cheapest duel that still shows the recommendation), so its spend is the least a matcher that ends
  on that model can pay. It knows nothing of the user's latent preference (`prefer`).
- `TwoCheapest`: always duels the two models with the lowest c_m = p_in + p_out and recommends the
  winner of the last duel; no feedback, no posterior.

Given the expected call costs, both stop before a duel that would exceed the remaining budget, as CUPID's
budget guard does (a lookup has no reason to overspend).
"""

from __future__ import annotations

import numpy as np


class _Reference:
    uses_language = False
    pair: tuple[int, int]
    call_cost: np.ndarray | None = None

    def select(self, t: int, remaining: float) -> tuple[int, int] | None:
        """The fixed pair, or None (stop) when its expected cost exceeds the remaining budget."""
        if self.call_cost is not None and self.call_cost[list(self.pair)].sum() > remaining + 1e-12:
            return None
        return self.pair

    def feedback(self, mask: np.ndarray | None) -> None:
        """References take no language feedback."""


class CheapestFeasible(_Reference):
    """Oracle lookup: recommend the cheapest feasible model (cheapest model of all when none is feasible)."""

    def __init__(self, cost_proxy: np.ndarray, feasible: np.ndarray, call_cost: np.ndarray | None = None):
        order = np.argsort(cost_proxy, kind="stable")
        feasible_order = order[feasible[order]]
        self.pick = int(feasible_order[0]) if len(feasible_order) else int(order[0])
        self.opponent = int(next(m for m in order if m != self.pick))
        self.pair, self.call_cost = (self.pick, self.opponent), call_cost

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None:
        """Looks nothing up from the outcome."""

    def best(self) -> int:
        return self.pick


class TwoCheapest(_Reference):
    """Always the two models with the lowest c_m; the recommendation is the last duel's winner."""

    def __init__(self, cost_proxy: np.ndarray, call_cost: np.ndarray | None = None):
        first, second = np.argsort(cost_proxy, kind="stable")[:2]
        self.pair, self.call_cost = (int(first), int(second)), call_cost
        self.winner = self.pair[0]

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None:
        self.winner = i if i_won else j

    def best(self) -> int:
        return self.winner
