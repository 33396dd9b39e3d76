"""Chapter 5 generator: overlaps against the exact minimax overlap, max-min targets, sampling, transforms."""

import dataclasses

import numpy as np
import pytest

from compass.clusters import maxmin
from compass.clusters.archetype import Archetype
from compass.clusters.centers import optimize_centers
from compass.clusters.mixture import MixtureModel, generate, radial_draws, radial_quantile
from compass.clusters.overlap import (
    axis_separation,
    exact_overlap,
    exact_separation,
    overlap_from_separation,
    pairwise_separations,
    separation,
    separation_and_gradient,
    separation_from_overlap,
)
from compass.clusters.transforms import distort, wrap_around_sphere


def random_cov(dim, rng, spread=3.0):
    u = maxmin.orientations(1, dim, rng)[0]
    return u @ np.diag(rng.uniform(1, spread, dim) ** 2) @ u.T


def test_exact_separation_matches_a_brute_force_search_over_directions():
    """Anderson-Bahadur path search == max over a dense grid of 2-D directions (eq. 5.3 by brute force)."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        c1, c2 = random_cov(2, rng), random_cov(2, rng)
        mu2 = rng.normal(size=2) * 4
        theta = np.linspace(0, np.pi, 200_001)
        a = np.stack([np.cos(theta), np.sin(theta)], axis=1)
        brute = np.max(np.abs(axis_separation(a, np.broadcast_to(mu2, a.shape), c1, c2)))
        assert exact_separation(np.zeros(2), mu2, c1, c2) == pytest.approx(brute, rel=1e-7)


def test_exact_overlap_is_the_simulated_minimax_error():
    """Along the optimal axis with the equal-error threshold, each cluster's error is α/2 (eq. 5.4), by MC."""
    rng = np.random.default_rng(1)
    c1, c2 = random_cov(3, rng), random_cov(3, rng)
    mu2 = np.array([3.0, 1.0, -2.0])
    q = exact_separation(np.zeros(3), mu2, c1, c2)
    alpha = float(overlap_from_separation(q))
    ts = np.linspace(0, 1, 2001)
    axes = np.stack([np.linalg.solve(t * c1 + (1 - t) * c2, mu2) for t in ts])
    a = axes[np.argmax(axis_separation(axes, np.broadcast_to(mu2, axes.shape), c1, c2))]
    s1, s2 = np.sqrt(a @ c1 @ a), np.sqrt(a @ c2 @ a)
    threshold = q * s1  # boundary where the two tails are equal (eq. 19 of App. 4C)
    n = 400_000
    x1 = rng.multivariate_normal(np.zeros(3), c1, n) @ a
    x2 = rng.multivariate_normal(mu2, c2, n) @ a
    err1, err2 = np.mean(x1 > threshold), np.mean(x2 <= threshold)
    se = np.sqrt(alpha / 2 * (1 - alpha / 2) / n)
    assert abs(err1 - alpha / 2) < 4 * se and abs(err2 - alpha / 2) < 4 * se
    assert s2 > 0


def test_lda_overlap_is_exact_for_proportional_covariances_and_c2c_for_spherical():
    """Theorem 6 and its C2C analogue (App. 4C): equality cases; otherwise both approximations overstate α."""
    rng = np.random.default_rng(2)
    c = random_cov(4, rng)
    mu2 = rng.normal(size=4) * 3
    assert separation(np.zeros(4), mu2, c, 2.5 * c, "lda") == pytest.approx(exact_separation(np.zeros(4), mu2, c, 2.5 * c), rel=1e-8)
    spherical1, spherical2 = 1.3 * np.eye(4), 0.4 * np.eye(4)
    assert separation(np.zeros(4), mu2, spherical1, spherical2, "c2c") == pytest.approx(
        exact_separation(np.zeros(4), mu2, spherical1, spherical2), rel=1e-8)
    c2 = random_cov(4, rng)
    exact = exact_separation(np.zeros(4), mu2, c, c2)
    assert separation(np.zeros(4), mu2, c, c2, "lda") <= exact + 1e-12
    assert separation(np.zeros(4), mu2, c, c2, "c2c") <= exact + 1e-12


@pytest.mark.parametrize("mode", ["lda", "c2c"])
def test_separation_gradient_matches_finite_differences(mode):
    rng = np.random.default_rng(3)
    ci, cj = random_cov(3, rng), np.stack([random_cov(3, rng), random_cov(3, rng)])
    delta = rng.normal(size=(2, 3)) * 3
    pooled = np.linalg.inv((ci + cj) / 2) if mode == "lda" else None
    _, grad = separation_and_gradient(delta, ci, cj, pooled)
    h = 1e-6
    for m in range(2):
        for d in range(3):
            e = np.zeros(3)
            e[d] = h
            fd = (separation(np.zeros(3), delta[m] + e, ci, cj[m], mode)
                  - separation(np.zeros(3), delta[m] - e, ci, cj[m], mode)) / (2 * h)
            assert grad[m, d] == pytest.approx(fd, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("k,dim,max_overlap,min_overlap", [(5, 2, 0.05, 0.001), (4, 3, 0.2, 0.1), (6, 2, 1e-3, 1e-4)])
def test_sgd_meets_the_overlap_constraints_and_exact_overlap_respects_max(k, dim, max_overlap, min_overlap):
    """After the SGD of eq. 5.9, every LDA overlap ≤ max_overlap and every cluster has a neighbour with
    LDA overlap ≥ min_overlap, up to the violation the final loss allows; the exact minimax overlap
    (Anderson-Bahadur) is never above the LDA one, so it respects max_overlap too, and stays within a
    factor 2 of it at each cluster's nearest neighbour."""
    a = Archetype(n_clusters=k, dim=dim, n_samples=10 * k, max_overlap=max_overlap, min_overlap=min_overlap,
                  tol=1e-10, max_epoch=2000, aspect_maxmin=3.0)
    d = generate(a, 11)
    covs, mu = d.model.covariances, d.model.centers
    assert d.converged
    lam = a.linear_penalty_weight
    slack = k * d.center_loss / lam  # p_λ(x) ≥ λx, and k·L bounds every term
    q = pairwise_separations(mu, covs, "lda")
    q_min, q_max = separation_from_overlap(max_overlap), separation_from_overlap(min_overlap)
    off = ~np.eye(k, dtype=bool)
    assert q[off].min() >= q_min - slack
    assert q.min(axis=1).max() <= q_max + slack
    exact = np.array([[exact_overlap(mu[i], mu[j], covs[i], covs[j]) if i != j else 0.0 for j in range(k)]
                      for i in range(k)])
    lda = overlap_from_separation(q)
    assert np.all(exact[off] <= lda[off] * (1 + 1e-9))
    assert exact.max() <= max_overlap * (1 + 1e-3)
    assert np.all(exact.max(axis=1) >= 0.5 * min_overlap)


def test_sgd_pushes_apart_clusters_that_start_on_top_of_each_other():
    rng = np.random.default_rng(4)
    covs = np.stack([np.eye(2), np.eye(2), np.diag([4.0, 0.25])])
    fit = optimize_centers(rng.normal(size=(3, 2)) * 0.01, covs, 0.01, 0.001, max_epoch=2000, tol=0.0, rng=rng)
    assert fit.loss == 0.0 and fit.converged
    q = pairwise_separations(fit.centers, covs)
    assert q[~np.eye(3, dtype=bool)].min() >= separation_from_overlap(0.01) - 1e-12


def test_maxmin_ratios_and_geometric_means_hit_their_targets():
    rng = np.random.default_rng(5)
    for k in (3, 6, 7, 12):
        r = maxmin.radii(k, 2.0, 3.0, rng)
        assert r.max() / r.min() == pytest.approx(3.0) and np.exp(np.log(r).mean()) == pytest.approx(2.0)
        s = maxmin.aspect_ratios(k, 1.5, 3.0, rng)  # 1.5/√3 < 1: minimum 1, pairs re-centred
        assert s.min() >= 1 - 1e-12 and s.max() / s.min() == pytest.approx(3.0)
        assert np.exp(np.log(s).mean()) == pytest.approx(1.5)
        s = maxmin.aspect_ratios(k, 2.0, 2.0, rng)
        assert s.max() / s.min() == pytest.approx(2.0) and np.exp(np.log(s).mean()) == pytest.approx(2.0)
        lengths = maxmin.axis_lengths(1.7, 2.5, k, rng)
        assert lengths.max() / lengths.min() == pytest.approx(2.5)
        assert np.exp(np.log(lengths).mean()) == pytest.approx(1.7)
    assert np.all(maxmin.aspect_ratios(5, 1.0, 1.0, rng) == 1.0)


@pytest.mark.parametrize("n,k,ratio", [(1200, 12, 2.0), (1200, 12, 5.0), (700, 7, 2.0), (10, 7, 5.0), (4000, 4, 2.0)])
def test_group_sizes_sum_to_n_and_keep_the_imbalance_ratio(n, k, ratio):
    sizes = maxmin.group_sizes(n, k, ratio, np.random.default_rng(6))
    assert sizes.sum() == n and sizes.min() >= 1 and len(sizes) == k
    if n >= 100 * k / 10:
        assert sizes.max() / sizes.min() == pytest.approx(ratio, rel=0.05)
        assert sizes.mean() == pytest.approx(n / k)


def test_orientations_are_haar_orthogonal():
    u = maxmin.orientations(2000, 3, np.random.default_rng(7))
    assert np.allclose(np.einsum("kij,kil->kjl", u, u), np.eye(3), atol=1e-10)
    # Haar: E[U_11²] = 1/p and the first column is uniform on the sphere
    assert np.mean(u[:, 0, 0] ** 2) == pytest.approx(1 / 3, abs=4 * np.std(u[:, 0, 0] ** 2) / np.sqrt(2000))


def test_chi_radii_of_a_normal_cluster_are_chi_p():
    """'chi': a normal cluster's radius is χ_p, and another distribution's is on the same scale (√p·median 1)."""
    s = radial_draws("normal", 100_000, 9, np.random.default_rng(8))
    assert np.mean(s ** 2) == pytest.approx(9, rel=0.01)
    e = radial_draws("exponential", 100_000, 9, np.random.default_rng(8))
    assert 0.6 < np.mean(e ** 2) / 9 < 1.6


@pytest.mark.parametrize("name", ["exponential", "gamma", "lognormal", "uniform", "pareto", "standard_t"])
def test_radial_draws_peg_the_68_percent_quantile(name):
    """§5.3: |X|/q₀.₆₈₂ has its 68.2 % quantile at 1 (times √p)."""
    s = radial_draws(name, 100_000, 4, np.random.default_rng(8), radial="one_dimensional")
    assert np.quantile(s, 0.682) == pytest.approx(1.0, rel=0.02)
    s = radial_draws(name, 100_000, 1, np.random.default_rng(8))  # "chi" in 1-D is the same rule
    assert np.quantile(s, 0.682) == pytest.approx(1.0, rel=0.02)
    assert radial_quantile(name) > 0


def test_normal_clusters_have_exactly_their_covariance():
    """'chi' radii make a normal cluster N(μ, Σ); the one-dimensional rule gives E s² = 1, i.e. Σ/p."""
    rng = np.random.default_rng(9)
    axes = maxmin.orientations(1, 3, rng)
    model = MixtureModel(np.array([[1.0, -2.0, 0.5]]), axes, np.array([[0.5, 1.0, 2.0]]), ("normal",))
    X, y = model.sample(np.array([60_000]), rng)
    assert np.allclose(np.cov(X.T), model.covariances[0], atol=0.06)
    assert np.allclose(X.mean(axis=0), model.centers[0], atol=0.03) and set(y) == {0}
    X, _ = dataclasses.replace(model, radial="one_dimensional").sample(np.array([60_000]), rng)
    assert np.allclose(np.cov(X.T), model.covariances[0] / 3, atol=0.03)


def test_generation_is_seeded_and_reproducible():
    a = Archetype(n_clusters=5, dim=3, n_samples=200, distributions=("normal", "gamma", "weibull"))
    d1, d2, d3 = generate(a, 42), generate(a, 42), generate(a, 43)
    assert np.array_equal(d1.X, d2.X) and np.array_equal(d1.y, d2.y)
    assert not np.array_equal(d1.X, d3.X)
    assert d1.X.shape == (200, 3) and np.bincount(d1.y).sum() == 200
    assert np.array_equal(distort(d1.X, 3), distort(d1.X, 3))


def test_wrap_around_sphere_lands_on_the_unit_sphere_and_inverts():
    X = generate(Archetype(n_clusters=3, dim=4, n_samples=90), 0).X
    S = wrap_around_sphere(X)
    assert S.shape == (90, 5) and np.allclose(np.linalg.norm(S, axis=1), 1.0)
    scaled = X / np.max(np.linalg.norm(X, axis=1))
    assert np.allclose(S[:, :4] / (1 + S[:, 4:]), scaled)  # stereographic projection back


def test_distort_is_the_tied_weight_network():
    """With 0 blocks the network is affine, h = XWᵀ + b then hW + c: the tied projection makes the linear
    part WᵀW, symmetric positive semi-definite; with 16 blocks outputs are bounded by the tanh range."""
    rng = np.random.default_rng(10)
    X = rng.normal(size=(50, 3))
    Xn = X / np.max(np.linalg.norm(X, axis=1))
    Y = distort(X, 5, n_blocks=0)
    design = np.hstack([Xn, np.ones((50, 1))])
    coef, *_ = np.linalg.lstsq(design, Y, rcond=None)
    assert np.allclose(design @ coef, Y, atol=1e-10)
    lin = coef[:3]
    assert np.allclose(lin, lin.T, atol=1e-10) and np.linalg.eigvalsh(lin).min() >= -1e-12
    Z = distort(X, 5)
    bound = np.sqrt(128) * np.abs(rng.uniform(-1, 1, 1)) + 10  # |tanh| ≤ 1 through a 128 x 3 matrix
    assert Z.shape == X.shape and np.abs(Z).max() < bound[0]
