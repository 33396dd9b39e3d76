"""Reference rows that do not learn (developers' guide: "benchmarks must be able to lose"). A matcher's
advantage counts only beyond the ones a person could run; the oracle is a ceiling, shown as such:

- `CheapestFeasible(cost_proxy, user.feasible(pool))`, an oracle lookup (a ceiling): it is told which models
  meet all of the user's hidden constraints, which a matcher must learn from duels, and recommends the cheapest of
  them from round 1. It knows nothing of the user's latent preference (`prefer`).
- `CheapestFeasible(cost_proxy, <the one stated constraint met>)`, what a person could run: the cheapest model
  meeting the one wish the user states before any duel (their initial direction, else their first constraint),
  checked once against the catalog.
- `MostCapableAffordable`, what a person could run: the model with the highest catalog capability
  (`CAPABILITY_COLUMNS`) whose duel fits the session's budget, ties to the cheaper.
- `TwoCheapest`: always duels the two models with the lowest c_m = p_in + p_out and recommends the
  winner of the last duel; no feedback, no posterior.

A fixed pick is duelled against the cheapest other model (the cheapest duel that still shows the recommendation),
so its spend is the least a matcher that ends on that model can pay. Given the expected call costs, every
reference stops before a duel that would exceed the remaining budget, as CUPID's budget guard does.
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


class _FixedPick(_Reference):
    """Recommends `pick` from round 1 and duels it against the cheapest other model; learns nothing."""

    def __init__(self, pick: int, cost_proxy: np.ndarray, call_cost: np.ndarray | None = None):
        order = np.argsort(cost_proxy, kind="stable")
        self.pick = pick
        self.opponent = int(next(m for m in order if m != pick))
        self.pair, self.call_cost = (self.pick, self.opponent), call_cost

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None:
        """Looks nothing up from the outcome."""

    def best(self) -> int:
        return self.pick


class CheapestFeasible(_FixedPick):
    """The cheapest model with `meets` true (the cheapest model of all when none does): an oracle lookup when
    `meets` is the user's hidden feasible set, a person's one-shot check when it is one stated constraint."""

    def __init__(self, cost_proxy: np.ndarray, meets: np.ndarray, call_cost: np.ndarray | None = None):
        order = np.argsort(cost_proxy, kind="stable")
        meeting = order[meets[order]]
        super().__init__(int(meeting[0]) if len(meeting) else int(order[0]), cost_proxy, call_cost)


class MostCapableAffordable(_FixedPick):
    """The highest `capability` (unknown: never) among the models whose duel against the cheapest other model fits
    `budget_usd`, ties to the lower cost proxy; the cheapest model when no capability is known or none fits."""

    def __init__(self, capability: np.ndarray, cost_proxy: np.ndarray, budget_usd: float,
                 call_cost: np.ndarray | None = None):
        order = np.argsort(cost_proxy, kind="stable")
        duel = np.zeros(len(order)) if call_cost is None else call_cost + np.where(
            np.arange(len(order)) == order[0], call_cost[order[1]], call_cost[order[0]])
        known = np.isfinite(capability) & (duel <= budget_usd + 1e-12)
        if not known.any():
            super().__init__(int(order[0]), cost_proxy, call_cost)
            return
        best = np.flatnonzero(known & (capability >= np.max(capability[known]) - 1e-12))
        super().__init__(int(best[np.argmin(cost_proxy[best])]), cost_proxy, call_cost)


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
