"""Standard errors of means over overlapping resamples of one data set (shared by the router and clusters slices)."""

from __future__ import annotations

import numpy as np


def corrected_se(differences: np.ndarray, test_over_train: float) -> float:
    """SE of the mean of k differences from overlapping resamples of one data set: Nadeau & Bengio's (2003)
    corrected resampled-t s·√(1/k + n_test/n_train), not s/√k (overlapping training sets correlate the differences,
    and s/√k shrinks to 0 as k grows while the data stay fixed). NaN with fewer than two differences."""
    diff = np.asarray(differences, dtype=float)
    return float(diff.std(ddof=1) * np.sqrt(1 / len(diff) + test_over_train)) if len(diff) > 1 else np.nan
