"""Measure extraction: factor count, loadings, scaling, stable identity (synthetic data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.factor_alignment import align_loadings, tucker_congruence
from compass.mlcompass.measures import extract_measures, parallel_analysis, sparsify

from .conftest import low_rank_catalog


@pytest.mark.parametrize("rank, seed", [(2, 3), (3, 1), (4, 5)])
def test_chosen_number_of_factors_equals_true_rank(rank, seed):
    frame, _ = low_rank_catalog(n_models=60, n_bench=4 * rank, rank=rank, noise=0.3, seed=seed)
    result = extract_measures(frame, pa_iterations=50)
    assert result.n_factors == rank
    assert list(result.measures.columns) == [f"C{i + 1}" for i in range(rank)]


def test_parallel_analysis_keeps_nothing_on_pure_noise():
    z = np.random.default_rng(7).standard_normal((60, 10))
    pa = parallel_analysis(z, n_iter=100, seed=1)
    assert not pa["above_random"].any()
    # Marchenko-Pastur: the largest noise eigenvalue of a 60 x 10 correlation matrix is
    # near (1 + sqrt(10/60))^2 = 1.98; the 95% reference must sit around there.
    assert 1.6 < pa["random_eigenvalue"].iloc[0] < 2.6


def test_loadings_recover_simple_structure_and_variance(catalog3):
    frame, true_loadings = catalog3
    result = extract_measures(frame, pa_iterations=50)
    wide = result.loading_matrix().loc[frame.columns]
    # every benchmark's dominant factor matches its true group (up to relabelling)
    dominant = wide.abs().to_numpy().argmax(axis=1)
    true_group = np.arange(frame.shape[1]) % 3
    mapping = {g: dominant[true_group == g] for g in range(3)}
    assert all(len(set(v)) == 1 for v in mapping.values())
    assert len({v[0] for v in mapping.values()}) == 3
    # true communality = |l|^2 / (|l|^2 + noise^2) averaged over benchmarks
    communality = (true_loadings ** 2).sum(1) / ((true_loadings ** 2).sum(1) + 0.3 ** 2)
    assert result.explained_variance["cumulative"].iloc[-1] == pytest.approx(communality.mean(), abs=0.05)
    # sparsification: at most 2 factors per benchmark and no loading below 0.30
    assert (wide.ne(0).sum(axis=1) <= 2).all()
    assert (result.loadings["loading"].abs() >= 0.30).all()


def test_measures_are_minmax_scaled_and_track_true_factor(catalog3):
    frame, _ = catalog3
    result = extract_measures(frame, pa_iterations=50)
    m = result.measures
    np.testing.assert_allclose(m.min().to_numpy(), 0.0, atol=1e-12)
    np.testing.assert_allclose(m.max().to_numpy(), 1.0, atol=1e-12)
    assert m.index.name == "model_id" and list(m.index) == list(frame.index)
    # each factor score is close to the mean of its standardized benchmark group
    z = (frame - frame.mean()) / frame.std(ddof=0)
    wide = result.loading_matrix().loc[frame.columns]
    for factor in m.columns:
        group = wide.index[wide[factor].abs() >= 0.5]
        assert np.corrcoef(m[factor], z[group].mean(axis=1))[0, 1] > 0.95
    # and each recovered measure matches one true factor (synthetic truth) up to sign
    r = np.abs(np.corrcoef(m.to_numpy().T, frame.attrs["factors"].T)[:3, 3:])
    assert sorted(r.argmax(axis=1).tolist()) == [0, 1, 2]
    assert r.max(axis=1).min() > 0.95


def test_sparsify_closed_form():
    loadings = np.array([[0.8, 0.35, 0.31], [0.1, -0.6, 0.2], [0.4, -0.45, 0.5], [0.29, 0.05, 0.0]])
    expected = np.array([[0.8, 0.35, 0.0], [0.0, -0.6, 0.0], [0.0, -0.45, 0.5], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(sparsify(loadings, 0.3, 2), expected)
    expected_one = np.array([[0.8, 0, 0], [0, -0.6, 0], [0, 0, 0.5], [0, 0, 0]])
    np.testing.assert_array_equal(sparsify(loadings, 0.3, 1), expected_one)


def test_align_loadings_undoes_permutation_and_sign():
    rng = np.random.default_rng(0)
    prev = pd.DataFrame(rng.normal(size=(10, 3)), index=[f"b{i}" for i in range(10)], columns=["C1", "C2", "C3"])
    new = pd.DataFrame(
        np.column_stack([-prev["C3"], prev["C1"], prev["C2"]]) + 0.05 * rng.normal(size=(10, 3)),
        index=prev.index, columns=["f0", "f1", "f2"],
    )
    al = align_loadings(new, prev)
    assert al.names == ["C3", "C1", "C2"]
    np.testing.assert_array_equal(al.signs, [-1.0, 1.0, 1.0])
    assert (al.congruence > 0.95).all()
    aligned = al.apply(new)
    assert list(aligned.columns) == ["C1", "C2", "C3"]
    assert np.abs(tucker_congruence(aligned.to_numpy(), prev.to_numpy())).diagonal().min() > 0.95


def test_align_loadings_extra_factor_gets_next_name():
    prev = pd.DataFrame({"C1": [1.0, 1.0, 0, 0], "C2": [0, 0, 1.0, 1.0]}, index=list("abcd"))
    new = pd.DataFrame({"x": [0, 0, 0.9, 1.0], "y": [0.2, -0.1, 0.1, 0.0], "z": [1.0, 0.8, 0, 0]}, index=list("abcd"))
    al = align_loadings(new, prev)
    assert al.names == ["C2", "C3", "C1"]
    with pytest.raises(ValueError, match="no benchmark shared"):
        align_loadings(new.set_axis(list("wxyz")), prev)


def test_refresh_keeps_factor_names_and_signs(catalog3):
    frame, _ = catalog3
    first = extract_measures(frame.iloc[:-1], pa_iterations=30)
    # refresh: one new model, one rescored benchmark, shuffled benchmark order
    refreshed = frame.copy()
    refreshed.iloc[:, 4] += np.random.default_rng(3).normal(0, 2.0, len(frame))
    refreshed = refreshed[list(np.random.default_rng(4).permutation(frame.columns))]
    second = extract_measures(refreshed, n_factors=3, previous_loadings=first.loadings, pa_iterations=30)
    shared = first.measures.index
    for name in first.measures.columns:
        r = np.corrcoef(first.measures[name], second.measures.loc[shared, name])[0, 1]
        assert r > 0.95, (name, r)
    assert first.congruence is None
    assert list(second.congruence.index) == ["C1", "C2", "C3"] and (second.congruence > 0.9).all()
    # the same benchmarks anchor the same named factor
    w1, w2 = first.loading_matrix(), second.loading_matrix().loc[first.loading_matrix().index]
    assert (w1.abs().idxmax(axis=1) == w2.abs().idxmax(axis=1)).all()


def test_missing_cells_are_imputed_and_reported(catalog3):
    frame, _ = catalog3
    mask = np.random.default_rng(2).random(frame.shape) < 0.2
    result = extract_measures(frame.mask(mask), pa_iterations=30)
    assert result.imputed_fraction == pytest.approx(mask.mean())
    assert result.n_factors == 3
    full = extract_measures(frame, pa_iterations=30, previous_loadings=result.loadings)
    for name in result.measures.columns:
        assert np.corrcoef(result.measures[name], full.measures[name])[0, 1] > 0.9


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_factors": 12}, "n_factors"),
        ({"loading_threshold": 1.5}, "loading_threshold"),
        ({"max_factors_per_variable": 0}, "max_factors_per_variable"),
        ({"previous_loadings": pd.DataFrame({"x": [1]})}, "previous_loadings"),
    ],
)
def test_bad_arguments_raise(catalog3, kwargs, message):
    frame, _ = catalog3
    with pytest.raises(ValueError, match=message):
        extract_measures(frame, pa_iterations=10, **kwargs)
