"""EC Table 8: variance explained by the factor model of §4.3 under the four variants of EC §8.3.

For each number of factors I, on the imputed and standardized x_raw (`measures.standardized_input`):

* classical: the unrotated minres loadings L;
* rotated: the promax pattern loadings P (a single factor is not rotated, as in `extract_measures`);
* sparsified: `sparsify` applied to L;
* rotated_sparsified: `sparsify` applied to P, the loadings the measures are scored from; at the case's I
  this is `extract_measures(...).explained_variance["cumulative"]`, the number §5.3 reports (PRISM 86.1 %).

`cumulative_variance` is the paper's number: the sum of squared loadings over benchmarks and factors, over
the number of benchmarks p (factor_analyzer's `get_factor_variance`, which the paper used). For promax
loadings this is not a share of variance: the factors are correlated, and the common variance of benchmark j
is h_j^2 = (P Φ P')_jj with Φ the factor correlation matrix. `communality` reports mean_j h_j^2 (Φ = I for
the unrotated L). Rotation leaves it unchanged (P Φ P' = L L'), so a "Rotated" value different from the
"Classical" one (EC §8.3 blames numerical issues of factor_analyzer) is the squared pattern coefficients
ignoring Φ, not lost variance.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from compass.mlcompass.imputation import EXACT_MAX_MODELS
from compass.mlcompass.measures import correlation, fit_minres, rotated_fit, sparsify, standardized_input

VARIANTS = ("classical", "rotated", "sparsified", "rotated_sparsified")


def identified_factors(p: int) -> int:
    """The most factors p benchmarks identify: the largest k with (p - k)^2 >= p + k, the non-negative
    degrees of freedom of the k-factor model (e.g. 1 for 4 benchmarks, 2 for 5, 3 for 6)."""
    return max((k for k in range(1, p) if (p - k) ** 2 >= p + k), default=1)


def factor_correlation(unrotated: np.ndarray, rotated: np.ndarray) -> np.ndarray:
    """Φ of an oblique rotation P = L T of the unrotated loadings L: Φ = (T'T)^-1, so that P Φ P' = L L'.

    T is solved from the two loading matrices (least squares, exact for a rotation of full-rank L), which
    also keeps Φ in P's column order and signs (factor_analyzer reorders the columns of P but not its `phi_`).
    """
    transform = np.linalg.lstsq(unrotated, rotated, rcond=None)[0]
    return np.linalg.inv(transform.T @ transform)


def _row(k: int, variant: str, loadings: np.ndarray, phi: np.ndarray) -> dict[str, object]:
    p = loadings.shape[0]
    return {"n_factors": k, "variant": variant, "cumulative_variance": float((loadings ** 2).sum() / p),
            "communality": float(np.einsum("ji,ik,jk->", loadings, phi, loadings) / p)}


def variance_explained_table(
    x_raw: pd.DataFrame,
    n_factors: Sequence[int] = (1, 2, 3),
    loading_threshold: float = 0.30,
    max_factors_per_variable: int = 2,
    seed: int = 0,
    fast: bool | None = None,
) -> pd.DataFrame:
    """EC Table 8 as a long frame [n_factors, variant, cumulative_variance, communality] (module docstring).

    `x_raw`: rows model_id, columns benchmarks, NaN = missing (imputed as in `extract_measures`, same `seed`
    and `fast`). `loading_threshold` and `max_factors_per_variable` are the case's sparsification settings.
    """
    p = x_raw.shape[1]
    bad = [k for k in n_factors if not 1 <= k < p]
    if bad:
        raise ValueError(f"n_factors must be in 1..{p - 1} for {p} benchmarks, got {bad}")
    fast = x_raw.shape[0] > EXACT_MAX_MODELS if fast is None else fast
    _, z = standardized_input(x_raw, seed=seed, fast=fast)
    corr = correlation(z)
    rows = []
    for k in n_factors:
        classical = fit_minres(corr, k, None).loadings_
        rotated = rotated_fit(corr, k).loadings_
        phi = factor_correlation(classical, rotated)
        for variant, loadings, factor_corr in (
            ("classical", classical, np.eye(k)),
            ("rotated", rotated, phi),
            ("sparsified", sparsify(classical, loading_threshold, max_factors_per_variable), np.eye(k)),
            ("rotated_sparsified", sparsify(rotated, loading_threshold, max_factors_per_variable), phi),
        ):
            rows.append(_row(k, variant, loadings, factor_corr))
    return pd.DataFrame(rows)
