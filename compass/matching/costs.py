"""What a duel costs (CUPID §4.1 "realized cost per round = sum of the two API calls"; spec-004 §5.3).

One call costs (tok_in · p_in + tok_out · p_out) / 10⁶ USD with prices in USD per 1M tokens. Reasoning
models write far more: on MathArena's AIME 2025 I the median thinking model writes 11,640 output tokens
per problem against 2,318 for the median non-thinking one (data/matching/matharena_tokens.csv), a factor
of ≈ 5.0. `TokenModel()`'s defaults are the spec's placeholder (150 in, 500 out, ×3 for reasoning).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from compass.matching.pool import Pool


@dataclass(frozen=True)
class TokenModel:
    """Tokens of one call: `tok_in` in, `tok_out` out for a non-reasoning model, `tok_out · reasoning_factor`
    for a reasoning one."""

    tok_in: float = 150.0
    tok_out: float = 500.0
    reasoning_factor: float = 3.0

    @classmethod
    def from_matharena(cls, path: str | Path, tok_in: float = 150.0, tok_out: float = 500.0,
                       absolute: bool = False) -> TokenModel:
        """Output tokens scaled by MathArena's ratio of median reasoning to median non-reasoning output
        tokens; `absolute=True` takes the AIME medians themselves (the §4.2 AIME study's prompts)."""
        table = pd.read_csv(path, comment="#")
        medians = table.groupby("reasoning")[["input_tokens", "output_tokens"]].median()
        factor = medians.loc[1, "output_tokens"] / medians.loc[0, "output_tokens"]
        if absolute:
            return cls(float(medians["input_tokens"].median()), float(medians.loc[0, "output_tokens"]), float(factor))
        return cls(tok_in, tok_out, float(factor))

    def call_cost(self, pool: Pool) -> np.ndarray:
        """USD of one call to each model of the pool."""
        out = self.tok_out * np.where(pool.reasoning, self.reasoning_factor, 1.0)
        return (self.tok_in * pool.price_in + out * pool.price_out) / 1e6
