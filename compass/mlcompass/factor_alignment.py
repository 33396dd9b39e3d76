"""Stable factor identity across refreshes (ML Compass §4.3 internal measures C1..Ck).

Factor models are identified only up to order and sign, so a refit on a refreshed catalog
can return "C1" as the old "C2", or with flipped sign. We match new factors to the
previous run's by Tucker's congruence coefficient

    phi(x, y) = sum_j x_j y_j / sqrt(sum_j x_j^2 * sum_j y_j^2)

over the benchmarks both runs share, solve the assignment maximizing sum |phi| with the
Hungarian algorithm (scipy.optimize.linear_sum_assignment), and flip the sign where
phi < 0. This is an engineering step of ours; the paper fits once per snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment


def factor_names(k: int) -> list[str]:
    """Canonical names C1..Ck (paper Figure 2)."""
    return [f"C{i + 1}" for i in range(k)]


def tucker_congruence(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matrix of Tucker congruences between columns of `a` (p, k1) and `b` (p, k2)."""
    num = a.T @ b
    den = np.sqrt(np.outer((a ** 2).sum(axis=0), (b ** 2).sum(axis=0)))
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


@dataclass(frozen=True)
class FactorAlignment:
    """Mapping of new factor columns to stable names and signs."""

    new_columns: list[str]
    names: list[str]
    signs: np.ndarray
    congruence: np.ndarray  # |phi| with the matched previous factor (nan when unmatched)

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Sign-flip and rename factor columns of `frame` (loadings or scores), sorted C1..Ck."""
        out = frame[self.new_columns] * self.signs
        out.columns = self.names
        return out[sorted(self.names, key=lambda n: int(n[1:]))]


def align_loadings(new: pd.DataFrame, previous: pd.DataFrame) -> FactorAlignment:
    """Match factors of `new` to those of `previous` (both wide: index benchmark, columns factor).

    Previous names must be C1..; unmatched new factors (when the new fit has more) get the
    next free names in order of the new fit. Raises ValueError if no benchmark is shared.
    """
    shared = new.index.intersection(previous.index)
    if shared.empty:
        raise ValueError("cannot align factors: no benchmark shared with the previous loadings")
    bad = [c for c in previous.columns if not (isinstance(c, str) and c[:1] == "C" and c[1:].isdigit())]
    if bad:
        raise ValueError(f"previous factor names must look like C1, C2, ...; got {bad}")
    phi = tucker_congruence(
        new.loc[shared].to_numpy(dtype=float), previous.loc[shared].to_numpy(dtype=float)
    )
    rows, cols = linear_sum_assignment(-np.abs(phi))
    names: list[str | None] = [None] * new.shape[1]
    signs = np.ones(new.shape[1])
    congruence = np.full(new.shape[1], np.nan)
    for r, c in zip(rows, cols):
        names[r] = str(previous.columns[c])
        signs[r] = 1.0 if phi[r, c] >= 0 else -1.0
        congruence[r] = abs(phi[r, c])
    next_id = max(int(c[1:]) for c in previous.columns) + 1
    for r in range(new.shape[1]):
        if names[r] is None:
            names[r] = f"C{next_id}"
            next_id += 1
    return FactorAlignment(list(new.columns), [str(n) for n in names], signs, congruence)
