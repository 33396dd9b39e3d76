"""Prompt-level bootstrap intervals for any oracle estimator.

Not from seed paper 002 (which reports point estimates); prompts are the
sampling unit of every estimator in §3–4, so they are resampled with
replacement, the estimator is rerun, and the percentile interval is reported.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from compass.oracle.records import OracleArrays


def bootstrap_interval(
    arrays: OracleArrays,
    estimator: Callable[[OracleArrays], float],
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of `estimator` over `n_boot` prompt resamples (seeded)."""
    _check(n_boot, level)
    rng = np.random.default_rng(seed)
    n = arrays.n_prompts
    return _percentiles(np.array([estimator(arrays.take(rng.integers(0, n, n))) for _ in range(n_boot)]), level)


def bootstrap_mean_interval(terms: np.ndarray, n_boot: int = 200, level: float = 0.95, seed: int = 0
                            ) -> tuple[float, float]:
    """`bootstrap_interval` of an estimator that is the mean of per-prompt `terms` (N,), each depending on its own
    prompt only (e.g. `naive.naive_per_prompt`): a resample's estimate is the mean of the resampled terms, so the
    terms are computed once, not once per draw. The draws are `bootstrap_interval`'s (same seed, same indices)."""
    _check(n_boot, level)
    rng = np.random.default_rng(seed)
    n = terms.size
    return _percentiles(np.array([terms[rng.integers(0, n, n)].mean() for _ in range(n_boot)]), level)


def _check(n_boot: int, level: float) -> None:
    if n_boot < 2:
        raise ValueError(f"n_boot must be at least 2, got {n_boot}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")


def _percentiles(draws: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    lo, hi = np.nanquantile(draws, [tail, 1.0 - tail])
    return float(lo), float(hi)
