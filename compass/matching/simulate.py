"""LLM-free stand-ins for the paper's LLM user simulator and auxiliary routing LLM (spec-004 §5.1-5.2).

The paper's user is an LLM judge that weighs metadata trade-offs and emits one change request per round
("I want a cheaper model"), turned into a 0/1 mask ℓ by an auxiliary LLM. Here the judge prefers the
model meeting more of the user's constraints; among those it follows the user's own preference
(`prefer`, a latent utility), and only a user who states none prefers the cheaper model (spec §5.1);
then a seeded coin. The feedback names one constraint the last chosen model violates; when none is
violated it asks along the user's preference ("better by my weights"), or "cheaper" without one. So
feedback never contradicts the judge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compass.matching.pool import Pool
from compass.matching.users import User

FEEDBACK_VARIANTS = ("informative", "adversarial", "static", "gibberish", "none")


@dataclass
class MetadataJudge:
    """Winner = larger sat(m) (constraints met), tie -> higher latent utility (the user's `prefer`), tie ->
    lower c_m only for a user without a preference (`cost_ties`), tie -> seeded coin; outcome flipped w.p.
    `p_flip` (spec §5.1)."""

    sat: np.ndarray
    cost_proxy: np.ndarray
    rng: np.random.Generator
    p_flip: float = 0.0
    utility: np.ndarray | None = None
    cost_ties: bool = True

    @classmethod
    def for_user(cls, user: User, pool: Pool, rng: np.random.Generator, p_flip: float = 0.0) -> MetadataJudge:
        return cls(user.satisfied(pool).sum(1), pool.cost_proxy, rng, p_flip, user.utility(pool), not user.prefer)

    def i_wins(self, i: int, j: int) -> bool:
        utility = np.zeros(len(self.sat)) if self.utility is None else self.utility
        if self.sat[i] != self.sat[j]:
            won = self.sat[i] > self.sat[j]
        elif utility[i] != utility[j]:
            won = utility[i] > utility[j]
        elif self.cost_ties and self.cost_proxy[i] != self.cost_proxy[j]:
            won = self.cost_proxy[i] < self.cost_proxy[j]
        else:
            won = bool(self.rng.random() < 0.5)
        return bool(won) != bool(self.rng.random() < self.p_flip)


@dataclass
class LanguageFeedback:
    """ℓ_{t+1}(m) = 1[m meets a constraint the previous choice violates] (seeded pick among the violated);
    nothing violated: 1[u(m) > u(prev)] for a user with a preference `utility` ("better by my weights"), else
    1[c_m < c_prev] ("cheaper"); round 1: one constraint of the user (spec §5.2).
    Noisy variants of §4.2: adversarial = the complement, static = one fixed random mask, gibberish =
    all zeros; "none" gives no feedback at all."""

    satisfied: np.ndarray  # (K, |O|)
    cost_proxy: np.ndarray
    rng: np.random.Generator
    variant: str = "informative"
    utility: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.variant not in FEEDBACK_VARIANTS:
            raise ValueError(f"feedback variant must be one of {FEEDBACK_VARIANTS}, got {self.variant!r}")
        self.static_mask = (self.rng.random(len(self.cost_proxy)) < 0.5).astype(float)
        self.requests: list[int] = []

    @classmethod
    def for_user(cls, user: User, pool: Pool, rng: np.random.Generator, variant: str = "informative") -> LanguageFeedback:
        return cls(user.satisfied(pool), pool.cost_proxy, rng, variant, user.utility(pool) if user.prefer else None)

    def _noisy(self, mask: np.ndarray) -> np.ndarray | None:
        return {"informative": mask, "adversarial": 1.0 - mask, "static": self.static_mask,
                "gibberish": np.zeros_like(mask), "none": None}[self.variant]

    def initial(self, column_index: int | None = None) -> np.ndarray | None:
        """ℓ_1: the models meeting one constraint (the user's `initial_direction`, else drawn)."""
        o = int(self.rng.integers(self.satisfied.shape[1])) if column_index is None else column_index
        self.requests.append(o)
        return self._noisy(self.satisfied[:, o].astype(float))

    def after(self, previous: int) -> np.ndarray | None:
        """ℓ_{t+1}; the request (a constraint index, -1 for "cheaper", -2 for "better by my weights") is appended
        to `requests`."""
        violated = np.flatnonzero(~self.satisfied[previous])
        request = int(self.rng.choice(violated)) if len(violated) else (-1 if self.utility is None else -2)
        self.requests.append(request)
        if request >= 0:
            mask = self.satisfied[:, request].astype(float)
        elif request == -2:
            mask = (self.utility > self.utility[previous]).astype(float)
        else:
            mask = (self.cost_proxy < self.cost_proxy[previous]).astype(float)
        return self._noisy(mask)
