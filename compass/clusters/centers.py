"""Cluster centres (thesis ch. 5, §5.3 "Adjusting Cluster Centers to Meet Overlap Constraints"):
packing-based random initialization, then SGD on the overlap loss (eqs. 5.7-5.9) with axes and axis
lengths fixed.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from compass.clusters.overlap import pairwise_separations, separation_and_gradient, separation_from_overlap


def packing_density(dim: int, packing_2d: float) -> float:
    """ρ_adj(p) = p·2^(1-p)·ρ_2D (Ball, 1992 packing bound, §5.3)."""
    return dim * 2.0 ** (1 - dim) * packing_2d


def initial_centers(k: int, dim: int, scale: float, packing_2d: float, rng: np.random.Generator) -> np.ndarray:
    """Centres uniform in a ball of volume V = k·v_ref/ρ_adj(p), v_ref the volume of a ball of radius `scale`.

    App. 4A Table .4: the cluster volumes average to the reference volume; the radii are max-min sampled in
    log space (`maxmin.radii`), so it is their geometric mean that equals the reference (as in repliclust
    1.0.0's code, whose `make_cluster_radii` docstring says arithmetic mean). The ball is sized
    for k clusters of that reference volume at density ρ_adj (§5.3), as repliclust 1.0.0's RandomCenters
    does: sizing it from the arithmetic Σ r_i^p instead, which the largest cluster dominates in high
    dimension, made the ball 1.44x too wide in 10-D (1.71x in 100-D) and the data too easy (issue 30).
    The unit-ball constant cancels: radius = scale·(k/ρ_adj)^(1/p), computed in log space. Uniform in the
    ball (radius ∝ U^(1/p)) with ρ_adj = p·2^(1-p)·ρ_2D, as §5.3 and the implementation guide state;
    repliclust 1.0.0 differs in both (radius ∝ U, ρ_adj = (p-1)·2^(2-p)·ρ_2D, a ball 6 % smaller in 10-D).
    """
    log_radius = np.log(scale) + (np.log(k) - np.log(packing_density(dim, packing_2d))) / dim
    direction = rng.standard_normal((k, dim))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return np.exp(log_radius) * rng.uniform(size=(k, 1)) ** (1.0 / dim) * direction


def _penalty(x: np.ndarray, lam: float) -> np.ndarray:
    return lam * x + (1 - lam) * x ** 2


def _penalty_slope(x: np.ndarray, lam: float) -> np.ndarray:
    return lam + 2 * (1 - lam) * x


def overlap_loss(q: np.ndarray, q_min: float, q_max: float, lam: float) -> float:
    """L = (1/k) Σ_i ℓ_i (eqs. 5.7-5.8) from the (k, k) separation matrix (diagonal +inf)."""
    k = len(q)
    if k < 2:
        return 0.0
    off = ~np.eye(k, dtype=bool)
    too_far = np.maximum(q.min(axis=1) - q_max, 0.0)
    too_close = np.where(off, np.maximum(q_min - q, 0.0), 0.0)
    return float((_penalty(too_far, lam).sum() + _penalty(too_close, lam).sum()) / k)


@dataclasses.dataclass
class CenterFit:
    centers: np.ndarray
    loss: float
    epochs: int
    converged: bool
    restarts: int = 0  # fresh initialisations after the first (`fit_centers`)


def optimize_centers(centers: np.ndarray, covs: np.ndarray, max_overlap: float, min_overlap: float, *,
                     lam: float = 0.01, learning_rate: float = 0.5, max_epoch: int = 500, tol: float = 1e-5,
                     mode: str = "lda", rng: np.random.Generator) -> CenterFit:
    """SGD on the overlap loss (eq. 5.9): each epoch visits the clusters in a random order and, for
    cluster i, moves every centre by -η ∇ℓ_i. Stops when L ≤ tol or after max_epoch epochs.

    ℓ_i = p_λ((min_j q_ij - q_max)⁺) + Σ_j p_λ((q_min - q_ij)⁺) with p_λ(x) = λx + (1-λ)x²; only the
    pairs (i, j) enter ℓ_i, so its gradient touches μ_i and the μ_j of the violating neighbours.
    """
    centers = np.array(centers, dtype=float)
    k, dim = centers.shape
    q_min = float(separation_from_overlap(max_overlap))
    q_max = float(separation_from_overlap(min_overlap)) if min_overlap > 0 else np.inf
    if k < 2:
        return CenterFit(centers, 0.0, 0, True)
    # The pooled inverses are fixed while axes and lengths are: invert once, unless k²p² is large.
    cached = mode == "lda" and k * k * dim * dim <= 4_000_000
    pooled = np.linalg.inv((covs[:, None] + covs[None, :]) / 2.0) if cached else None

    def pooled_inv(i: int, others: np.ndarray) -> np.ndarray | None:
        if mode != "lda":
            return None
        return pooled[i, others] if cached else np.linalg.inv((covs[i] + covs[others]) / 2.0)

    loss = overlap_loss(pairwise_separations(centers, covs, mode), q_min, q_max, lam)
    epoch = 0
    while loss > tol and epoch < max_epoch:
        epoch += 1
        for i in rng.permutation(k):
            others = np.delete(np.arange(k), i)
            delta = centers[others] - centers[i]
            q, grad = separation_and_gradient(delta, covs[i], covs[others], pooled_inv(i, others))
            # d loss / d q_ij for each neighbour j
            slope = np.where(q < q_min, -_penalty_slope(np.maximum(q_min - q, 0.0), lam), 0.0)
            nearest = int(np.argmin(q))
            if q[nearest] > q_max:
                slope[nearest] += _penalty_slope(q[nearest] - q_max, lam)
            if not slope.any():
                continue
            step = learning_rate * slope[:, None] * grad  # ∂ℓ_i/∂μ_j = slope·∂q/∂δ, ∂ℓ_i/∂μ_i = -Σ_j of it
            centers[others] -= step
            centers[i] += step.sum(axis=0)
        loss = overlap_loss(pairwise_separations(centers, covs, mode), q_min, q_max, lam)
    return CenterFit(centers, loss, epoch, loss <= tol)


def fit_centers(k: int, dim: int, covs: np.ndarray, *, scale: float, packing: float, max_overlap: float,
                min_overlap: float, n_restarts: int = 3, rng: np.random.Generator, **sgd) -> CenterFit:
    """Initialise and optimise up to `n_restarts` times, each from a fresh `initial_centers`, stopping at the
    first fit that converges and otherwise keeping the lowest loss (repliclust 1.0.0's
    ConstrainedOverlapCenters, n_restarts = 3). `converged` says whether the kept fit reached `tol`."""
    best: CenterFit | None = None
    for attempt in range(max(n_restarts, 1)):
        start = initial_centers(k, dim, scale, packing, rng)
        fit = optimize_centers(start, covs, max_overlap, min_overlap, rng=rng, **sgd)
        if best is None or fit.loss < best.loss:
            best = fit
        if fit.converged:
            break
    return dataclasses.replace(best, restarts=attempt)  # restarts run, whichever attempt was kept
