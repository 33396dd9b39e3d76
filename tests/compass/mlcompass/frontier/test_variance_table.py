"""EC Table 8 (variance explained per factor-model variant) and the parallel-analysis warning, on data whose
sample correlation matrix is exactly a known factor model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.measures import (
    extract_measures,
    parallel_analysis,
    parallel_analysis_warning,
    standardized_input,
)
from compass.mlcompass.variance_table import VARIANTS, variance_explained_table

from .conftest import low_rank_catalog

PHI = np.array([[1.0, 0.5], [0.5, 1.0]])


def exact_catalog(common: np.ndarray, n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Benchmark-like scores whose sample correlation matrix is exactly R = common + diag(1 - diag(common))."""
    corr = common.copy()
    np.fill_diagonal(corr, 1.0)
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, len(corr)))
    z -= z.mean(axis=0)
    white = z @ np.linalg.inv(np.linalg.cholesky(z.T @ z / n)).T  # sample covariance exactly I
    x = white @ np.linalg.cholesky(corr).T * rng.uniform(5, 20, len(corr)) + rng.uniform(30, 70, len(corr))
    return pd.DataFrame(x, columns=[f"bench_{j}" for j in range(len(corr))])


def _wide(table: pd.DataFrame, column: str) -> pd.DataFrame:
    return table.pivot(index="n_factors", columns="variant", values=column)[list(VARIANTS)]


def test_one_factor_model_explains_the_mean_squared_loading():
    lam = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.25])
    table = _wide(variance_explained_table(exact_catalog(np.outer(lam, lam)), n_factors=(1,), loading_threshold=0.3),
                  "cumulative_variance").loc[1]
    assert table["classical"] == pytest.approx(np.mean(lam ** 2), abs=1e-5)
    assert table["rotated"] == table["classical"]  # one factor is not rotated
    # sparsification drops the 0.25 loading: (sum lam^2 - 0.25^2) / p
    assert table["sparsified"] == pytest.approx(np.mean(lam ** 2) - 0.25 ** 2 / len(lam), abs=1e-5)
    assert table["rotated_sparsified"] == table["sparsified"]


def test_two_correlated_factors_rotation_keeps_communality_but_not_squared_pattern():
    pattern = np.array([[0.8, 0.3], [0.7, 0], [0.6, 0.2], [0.75, 0], [0, 0.8], [0.35, 0.7], [0, 0.6], [0.2, 0.65]])
    common = pattern @ PHI @ pattern.T
    table = variance_explained_table(exact_catalog(common), n_factors=(1, 2, 3))
    cumulative, communality = _wide(table, "cumulative_variance"), _wide(table, "communality")
    # the classical 2-factor fit recovers the exact common variance mean_j h_j^2
    assert cumulative.loc[2, "classical"] == pytest.approx(np.diag(common).mean(), abs=1e-5)
    # promax is oblique: P Phi P' = L L', so the communality is unchanged by rotation ...
    np.testing.assert_allclose(communality["rotated"], communality["classical"], atol=1e-8)
    np.testing.assert_allclose(communality["classical"], cumulative["classical"], rtol=0, atol=1e-12)
    # ... while the paper's sum of squared pattern loadings moves (here by ~0.05), with no variance lost
    assert cumulative.loc[2, "classical"] - cumulative.loc[2, "rotated"] > 0.03


def test_no_threshold_and_no_cap_means_no_sparsification(catalog3):
    frame, _ = catalog3
    table = variance_explained_table(frame, n_factors=(1, 2, 3), loading_threshold=0.0, max_factors_per_variable=3)
    for column in ("cumulative_variance", "communality"):
        wide = _wide(table, column)
        np.testing.assert_array_equal(wide["sparsified"], wide["classical"])
        np.testing.assert_array_equal(wide["rotated_sparsified"], wide["rotated"])


def test_sparsification_only_removes_squared_loadings(catalog3):
    frame, _ = catalog3
    wide = _wide(variance_explained_table(frame, n_factors=(1, 2, 3, 4), loading_threshold=0.4), "cumulative_variance")
    assert (wide["sparsified"] <= wide["classical"]).all() and (wide["rotated_sparsified"] <= wide["rotated"]).all()
    assert (wide["sparsified"] < wide["classical"]).any()


def test_rotated_sparsified_is_what_extract_measures_reports():
    frame, _ = low_rank_catalog(n_models=60, n_bench=10, rank=2, noise=0.4, seed=4)
    frame = frame.mask(np.random.default_rng(1).random(frame.shape) < 0.1)  # imputed as extract_measures does
    table = variance_explained_table(frame, n_factors=(2,), seed=3)
    got = table.set_index("variant").loc["rotated_sparsified", "cumulative_variance"]
    expected = extract_measures(frame, n_factors=2, seed=3, pa_iterations=10).explained_variance["cumulative"].iloc[-1]
    assert got == pytest.approx(expected, rel=1e-12)


def test_factor_counts_must_leave_a_benchmark():
    frame, _ = low_rank_catalog(n_models=30, n_bench=4, rank=1, noise=0.3, seed=0)
    with pytest.raises(ValueError, match=r"n_factors must be in 1..3 for 4 benchmarks, got \[4\]"):
        variance_explained_table(frame, n_factors=(1, 4))


def test_parallel_analysis_warning_when_the_case_pins_more_factors():
    lam = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    _, z = standardized_input(exact_catalog(np.outer(lam, lam)))
    pa = parallel_analysis(z, n_iter=50, seed=0)
    assert pa["above_random"].tolist() == [True] + [False] * 5
    warning = parallel_analysis_warning(pa, 2)
    assert "supports 1 factor but the case pins n_factors = 2" in warning
    assert f"{pa['eigenvalue'].iloc[1]:.2f}" in warning and f"{pa['random_eigenvalue'].iloc[1]:.2f}" in warning
    assert parallel_analysis_warning(pa, 1) == "" and parallel_analysis_warning(pa, None) == ""

    pattern = np.kron(np.eye(2), np.full((4, 1), 0.8))  # two factors, four benchmarks each
    _, z = standardized_input(exact_catalog(pattern @ PHI @ pattern.T))
    pa = parallel_analysis(z, n_iter=50, seed=0)
    assert int(pa["above_random"].sum()) == 2
    assert parallel_analysis_warning(pa, 2) == ""
    assert parallel_analysis_warning(pa, 3).startswith("parallel analysis supports 2 factors")


def test_identified_factors_counts_degrees_of_freedom():
    from compass.mlcompass.variance_table import identified_factors

    # (p - k)^2 >= p + k: 3 factors from 6 benchmarks leave exactly 0 degrees of freedom, from 5 they leave -4.
    assert [identified_factors(p) for p in (1, 3, 4, 5, 6, 31)] == [1, 1, 1, 2, 3, 23]
