"""What every matchmaking method shares (spec-004 §3 "All baselines share"): one duel per round, the
pair's cost, and the budget guard.

A method sees prices and each model's expected call cost but never names or metadata (§4.1). `Matcher`
is the protocol the study runner drives; `affordable_top_pair` picks the best-ranked pair whose expected
cost fits the remaining budget (spec §2.13 [I]: stop when no pair fits), which is how pacing methods
never exceed the budget.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Matcher(Protocol):
    """A dueling matchmaker: `feedback` takes ℓ_t (or None), `select` the round's pair (None: stop),
    `observe` the outcome, `best` the current recommendation."""

    uses_language: bool

    def feedback(self, mask: np.ndarray | None) -> None: ...

    def select(self, t: int, remaining: float) -> tuple[int, int] | None: ...

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None: ...

    def best(self) -> int: ...


def affordable_top_pair(order: np.ndarray, call_cost: np.ndarray, remaining: float | None,
                        candidates: np.ndarray | None = None) -> tuple[int, int] | None:
    """The first pair (i, j) in `order` (best first) with i before j, both in `candidates`, and
    call_cost[i] + call_cost[j] <= remaining (None: no budget guard). Unconstrained this is the top two."""
    if candidates is not None:
        order = order[np.isin(order, candidates)]
    for pos, i in enumerate(order[:-1]):
        rest = order[pos + 1:]
        fits = rest if remaining is None else rest[call_cost[i] + call_cost[rest] <= remaining]
        if len(fits):
            return int(i), int(fits[0])
    return None


def ranked(*keys: np.ndarray) -> np.ndarray:
    """Model indices sorted by keys, most important first, each descending (np.lexsort wants the last key first)."""
    return np.lexsort(tuple(-np.asarray(k, float) for k in reversed(keys)))


def argmax_random(values: np.ndarray, rng: np.random.Generator) -> int:
    """argmax with ties broken uniformly at random."""
    values = np.asarray(values, float)
    return int(rng.choice(np.flatnonzero(values == values.max())))
