import itertools

import numpy as np
import pytest

from compass.oracle.naive import naive_curve, naive_oracle, subset_pmf
from compass.oracle.records import from_arrays
from compass.oracle.validation import bias_decay_study, expected_biased_identical
from tests.compass.oracle.core.conftest import beta_outcomes


def brute_force_naive(outcomes: np.ndarray, cost: np.ndarray, sub: int) -> tuple[float, float]:
    """Enumerate every combination of one G′-subset per model (independent across models)."""
    n, l, g = outcomes.shape
    subsets = list(itertools.combinations(range(g), sub))
    q_tot = c_tot = 0.0
    for i in range(n):
        q_sum = c_sum = 0.0
        for combo in itertools.product(subsets, repeat=l):
            means = np.array([outcomes[i, m, list(s)].mean() for m, s in enumerate(combo)])
            tied = np.flatnonzero(means == means.max())
            pick = tied[np.argmin(cost[i, tied])]  # ties to the cheaper model, then lower index
            q_sum += means[pick]
            c_sum += cost[i, pick]
        q_tot += q_sum / len(subsets) ** l
        c_tot += c_sum / len(subsets) ** l
    return q_tot / n, c_tot / n


@pytest.mark.parametrize("sub", [1, 2, 3])
def test_exact_naive_matches_subset_enumeration(sub):
    out, _ = beta_outcomes(4, 3, 4, a=1.0, b=1.0, seed=3)
    cost = np.array([[2.0, 1.0, 1.0]] * 2 + [[0.5, 3.0, 0.2]] * 2)  # includes a cost tie
    arr = from_arrays(out, cost)
    q, c = naive_oracle(arr, sub)
    q_ref, c_ref = brute_force_naive(out, cost, sub)
    assert q == pytest.approx(q_ref, abs=1e-12)
    assert c == pytest.approx(c_ref, abs=1e-12)


def test_full_g_is_eq5_and_above_best_single_and_monotone():
    out, _ = beta_outcomes(200, 6, 8, seed=5)
    arr = from_arrays(out, np.linspace(1, 2, 6))
    p_bar = out.mean(axis=2)
    assert naive_oracle(arr)[0] == pytest.approx(p_bar.max(axis=1).mean(), abs=1e-12)  # eq. 5
    curve = naive_curve(arr)
    best_single = p_bar.mean(axis=0).max()
    assert (curve["quality"] >= best_single - 1e-12).all()
    assert np.all(np.diff(curve["quality"]) <= 1e-12)  # O_biased(G′) non-increasing in G′
    assert curve["quality"].iloc[0] > curve["quality"].iloc[-1] + 0.02


def test_subset_pmf_is_hypergeometric():
    pmf = subset_pmf(np.array([[2]]), np.array([[4]]), 2)[0, 0]
    np.testing.assert_allclose(pmf, [1 / 6, 4 / 6, 1 / 6])
    with pytest.raises(ValueError, match="subset size"):
        subset_pmf(np.array([[2]]), np.array([[4]]), 5)


def test_eq10_closed_form_and_bias_decay_rate():
    # eq. 10 for L = 2, G = 1: E[max of two Bernoulli(p)] = 1 − (1 − p)^2
    assert expected_biased_identical(0.3, 2, 1) == pytest.approx(1 - 0.7**2)
    decay = bias_decay_study(n_models=(2,), p_values=(0.3, 0.5), g_max=300)
    # §4.2.1 / Appendix A: bias ∝ G^-0.5 once G ≳ 50
    assert np.allclose(decay["lam"], 0.5, atol=0.03)
