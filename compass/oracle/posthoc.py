"""Post-hoc k-shot oracle: query every model k times, a perfect free judge keeps a correct answer.

Seed paper 002, §4.5. Eq. 22 as printed takes max_l of each model's subset
average, i.e. the best single model's pass@k per prompt; but the text ("all LLMs
are queried for every prompt"), the PGM form eq. 23, 1 − Π_l (1 − π_nl)^k, and
Tables 4–5 (GPQA k=1 reaches 100% > the 99.0% per-prompt oracle of Table 6;
cost grows ∝ k × all models) describe success if *any* of the L·k generations is
correct. We implement that reading as the default (`combine="any"`), and the
printed eq. 22 as `combine="max"`.

Exact over subsets: in a cell with s successes out of G, a uniformly random
k-subset misses every success with probability C(G−s, k)/C(G, k), so
    any:  q_n = 1 − Π_l C(G_l − s_nl, k)/C(G_l, k)   (subsets drawn independently per model)
    max:  q_n = max_l [1 − C(G_l − s_nl, k)/C(G_l, k)]
Cost is k × Σ_l (cell mean cost): every model is called k times (§4.5 caveats:
the judge itself is free).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import comb

from compass.oracle.records import OracleArrays


def miss_probability(successes: np.ndarray, trials: np.ndarray, k: int) -> np.ndarray:
    """C(G − s, k) / C(G, k): a random k-subset of the cell's generations has no success."""
    return comb(trials - successes, k) / comb(trials, k)


def posthoc_oracle(arrays: OracleArrays, k: int, combine: str = "any") -> tuple[float, float]:
    """O^kshot(k) quality and cost per query (eq. 22 / 23 reading, see module doc)."""
    if not 1 <= k <= arrays.min_generations:
        raise ValueError(f"k must lie in 1..{arrays.min_generations} (the smallest G), got {k}")
    miss = miss_probability(arrays.successes, arrays.trials, k)
    if combine == "any":
        q = 1.0 - np.prod(miss, axis=1)
    elif combine == "max":
        q = np.max(1.0 - miss, axis=1)
    else:
        raise ValueError(f"unknown combine {combine!r}; use 'any' or 'max'")
    cost = k * arrays.cell_cost.sum(axis=1)
    return float(q.mean()), float(cost.mean())


def posthoc_curve(arrays: OracleArrays, combine: str = "any") -> pd.DataFrame:
    """DataFrame[k, quality, cost] for k = 1..min G (Tables 4–5)."""
    rows = [(k, *posthoc_oracle(arrays, k, combine)) for k in range(1, arrays.min_generations + 1)]
    return pd.DataFrame(rows, columns=["k", "quality", "cost"])
