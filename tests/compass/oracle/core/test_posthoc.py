import itertools

import numpy as np
import pytest

from compass.oracle.naive import naive_oracle
from compass.oracle.posthoc import posthoc_curve, posthoc_oracle
from compass.oracle.records import from_arrays
from tests.compass.oracle.core.conftest import beta_outcomes


def brute_force_any(outcomes: np.ndarray, k: int) -> float:
    n, l, g = outcomes.shape
    subsets = list(itertools.combinations(range(g), k))
    total = 0.0
    for i in range(n):
        hits = [max(outcomes[i, m, list(s)].max() for m, s in enumerate(combo))
                for combo in itertools.product(subsets, repeat=l)]
        total += np.mean(hits)
    return total / n


@pytest.mark.parametrize("k", [1, 2, 3])
def test_any_success_matches_enumeration(k):
    out, _ = beta_outcomes(5, 2, 4, a=0.7, b=1.5, seed=2)
    arr = from_arrays(out, np.array([1.0, 3.0]))
    q, c = posthoc_oracle(arr, k)
    assert q == pytest.approx(brute_force_any(out, k), abs=1e-12)
    assert c == pytest.approx(k * 4.0)  # every model called k times


def test_limits_and_printed_eq22():
    out, _ = beta_outcomes(300, 4, 6, seed=4)
    arr = from_arrays(out, np.ones(4))
    curve = posthoc_curve(arr)
    assert curve["quality"].iloc[-1] == pytest.approx(out.max(axis=(1, 2)).mean())  # k = G: any success
    p_bar = out.mean(axis=2)
    assert curve["quality"].iloc[0] == pytest.approx((1 - np.prod(1 - p_bar, axis=1)).mean())  # eq. 23 with p̄
    assert np.all(np.diff(curve["quality"]) >= 0)
    # printed eq. 22 at k = 1 is the naive per-prompt oracle
    assert posthoc_oracle(arr, 1, combine="max")[0] == pytest.approx(naive_oracle(arr)[0])
    with pytest.raises(ValueError, match="k must lie"):
        posthoc_oracle(arr, 7)
