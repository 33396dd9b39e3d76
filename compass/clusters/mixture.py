"""Mixture models and data sets from an archetype (thesis ch. 5, §5.3 steps 1-4).

Implemented with numpy/scipy only, not the upstream `repliclust` package: that package imports torch,
umap-learn and openai at import time, and torch alone would multiply this project's install for what is
here a 16-layer forward pass (`transforms.distort`) and a few small linear solves.

Sampling a point (step 4): x = μ + U·(σ ⊙ s·v), v uniform on the unit sphere S^(p-1), s ≥ 0 a radial
draw. Two radial rules (`RADIAL`):

- "chi" (default, the reference implementation): s = ‖(|X_1|, ..., |X_p|)‖/q₀.₆₈₂ with X_d iid ~ f_C and
  q₀.₆₈₂ the 68.2 % quantile of |X|, pegged at 1 as for |N(0, 1)| (§5.3). A normal cluster uses the
  equivalent exact draw s ~ χ_p, so its points are exactly N(μ, UΣUᵀ) and eq. 5.5 is the overlap of the
  data. Every distribution is on the χ_p scale.
- "one_dimensional" (the literal reading of §5.3 and of the implementation guide): s = |X|/q₀.₆₈₂, one
  draw. In p dimensions a cluster is then much tighter than Σ (E s² ≈ 1 instead of p), so data overlap
  far less than the nominal overlap in high dimension; kept to show the difference (docs/results.md).

Distribution parameters (archetype.DISTRIBUTIONS) are the reference implementation's defaults. The
quantile is estimated once per distribution from 200,000 draws of a fixed-seed generator, so it is the
same in every run.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np

from compass.clusters import maxmin
from compass.clusters.archetype import DISTRIBUTIONS, Archetype
from compass.clusters.centers import CenterFit, fit_centers
from compass.clusters.realised import calibration

QUANTILE = 0.682
RADIAL = ("chi", "one_dimensional")


@cache
def radial_quantile(name: str) -> float:
    """q₀.₆₈₂ of |X| for X from distribution `name` with the DISTRIBUTIONS parameters (fixed seed)."""
    draws = getattr(np.random.default_rng(20250717), name)(size=200_000, **DISTRIBUTIONS[name])
    return float(np.quantile(np.abs(draws), QUANTILE))


def radial_draws(name: str, n: int, dim: int, rng: np.random.Generator, radial: str = "chi") -> np.ndarray:
    """n radial lengths s ≥ 0 for a cluster with distribution `name` in `dim` dimensions (module docstring)."""
    if radial not in RADIAL:
        raise ValueError(f"radial must be one of {RADIAL}, got {radial!r}")
    if radial == "chi" and name == "normal":
        return np.sqrt(rng.chisquare(dim, size=n))
    size = (n, dim) if radial == "chi" else (n, 1)
    raw = np.abs(getattr(rng, name)(size=size, **DISTRIBUTIONS[name])) / radial_quantile(name)
    return np.sqrt(np.sum(raw ** 2, axis=1))


@dataclasses.dataclass(frozen=True)
class MixtureModel:
    """App. 4B Table .5: centres μ (k, p), orientations U (k, p, p; columns are axes), axis lengths σ
    (k, p) and one radial distribution per cluster."""

    centers: np.ndarray
    axes: np.ndarray
    lengths: np.ndarray
    distributions: tuple[str, ...]
    radial: str = "chi"
    radial_scale: tuple[float, ...] | None = None  # per cluster, realised.calibration; None: all 1


    @property
    def covariances(self) -> np.ndarray:
        """Σ_i = U_i diag(σ_i²) U_iᵀ (k, p, p)."""
        return np.einsum("kij,kj,klj->kil", self.axes, self.lengths ** 2, self.axes)

    def scale_of(self, i: int) -> float:
        """The radial scale of cluster i (1 unless calibrated)."""
        return 1.0 if self.radial_scale is None else float(self.radial_scale[i])

    def sample_cluster(self, i: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """n points of cluster i (step 4), radial draws times the cluster's radial scale."""
        dim = self.centers.shape[1]
        v = rng.standard_normal((n, dim))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        s = self.scale_of(i) * radial_draws(self.distributions[i], n, dim, rng, self.radial)
        return self.centers[i] + (s[:, None] * v * self.lengths[i]) @ self.axes[i].T

    def sample(self, sizes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """`sizes[i]` points from cluster i (step 4): X (n, p) and labels y (n,)."""
        parts = [self.sample_cluster(i, int(n), rng) for i, n in enumerate(sizes)]
        return np.concatenate(parts), np.repeat(np.arange(len(sizes)), sizes)


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One synthetic data set (labelled synthetic): X (n, p), y (n,), its mixture model and archetype."""

    X: np.ndarray
    y: np.ndarray
    model: MixtureModel
    archetype: str
    center_loss: float
    converged: bool
    restarts: int = 0


def in_cluster_order(values: np.ndarray) -> np.ndarray:
    """Max-min draws (radii, aspect ratios, group sizes) in ascending order: cluster i takes the i-th
    smallest of each, as repliclust 1.0.0 assigns them (its `sample_with_maxmin` returns sorted values), so
    the largest cluster is also the most oblong and the most populous. Assigned independently (each draw
    shuffled), the must-hold archetype 7_overlap_10d was 0.03-0.05 AMI easier than repliclust's
    (issue 47; scripts/clusters_repliclust_gap.py)."""
    return np.sort(np.asarray(values))


def assign_distributions(archetype: Archetype, rng: np.random.Generator) -> tuple[str, ...]:
    """floor(proportion·k) clusters per distribution, the rest drawn by proportion, shuffled."""
    k, props = archetype.n_clusters, np.asarray(archetype.proportions)
    names = [d for d, m in zip(archetype.distributions, np.floor(props * k).astype(int)) for _ in range(m)]
    while len(names) < k:
        names.append(archetype.distributions[rng.choice(len(props), p=props)])
    rng.shuffle(names)
    return tuple(names)


def sample_mixture_model(archetype: Archetype, rng: np.random.Generator,
                         radial: str = "chi") -> tuple[MixtureModel, CenterFit]:
    """Steps 1-2: covariances by max-min sampling (radii and aspect ratios in ascending order over the
    clusters, as repliclust 1.0.0 assigns them), centres by packing initialization and overlap SGD
    (restarted up to `n_restarts` times when it does not converge). Returns the model and the centre fit
    (final overlap loss, whether it reached `tol`, restarts used)."""
    a = archetype
    k, dim = a.n_clusters, a.dim
    # Ascending, as repliclust 1.0.0 (its sample_with_maxmin returns sorted values and cluster i takes the
    # i-th of each): the larger a cluster, the more oblong, and (`generate`) the more points it gets.
    radius = in_cluster_order(maxmin.radii(k, a.scale, a.radius_maxmin, rng))
    aspect = in_cluster_order(maxmin.aspect_ratios(k, a.aspect_ref, a.aspect_maxmin, rng))
    lengths = np.stack([maxmin.axis_lengths(r, s, dim, rng) for r, s in zip(radius, aspect)])
    axes = maxmin.orientations(k, dim, rng)
    names = assign_distributions(a, rng)
    scales = tuple(calibration(d, dim, a.max_overlap, radial) if a.calibrate_tails else 1.0 for d in names)
    model = MixtureModel(np.zeros((k, dim)), axes, lengths, names, radial, scales)
    fit = fit_centers(k, dim, model.covariances, scale=a.scale, packing=a.packing, max_overlap=a.max_overlap,
                      min_overlap=a.min_overlap, n_restarts=a.n_restarts, rng=rng, lam=a.linear_penalty_weight,
                      learning_rate=a.learning_rate, max_epoch=a.max_epoch, tol=a.tol, mode=a.mode)
    return dataclasses.replace(model, centers=fit.centers), fit


def generate(archetype: Archetype, seed: int | np.random.Generator, radial: str = "chi") -> Dataset:
    """Steps 1-4: a mixture model from the archetype, group sizes by max-min sampling, then the points."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    model, fit = sample_mixture_model(archetype, rng, radial)
    # Sorted like the radii (`sample_mixture_model`): the largest cluster holds the most points, as in
    # repliclust 1.0.0; drawn independently (shuffled), the data were easier than the reference's (issue 47).
    sizes = in_cluster_order(maxmin.group_sizes(archetype.n_samples, archetype.n_clusters, archetype.imbalance_ratio,
                                                rng))
    X, y = model.sample(sizes, rng)
    return Dataset(X, y, model, archetype.name, fit.loss, fit.converged, fit.restarts)
