"""Realised overlap of generated data (thesis ch. 5, §5.3, eqs. 5.1-5.4) and the tail calibration of
non-normal clusters (issue 30).

The SGD of eqs. 5.7-5.9 controls the overlap of Gaussian clusters with covariances Σ_i. A cluster drawn
from another radial distribution (step 4: x = μ + U·(σ ⊙ s·v)) is elliptical with the same Σ-shape, so
along any axis a its projection is aᵀμ + √(aᵀΣa)·Z, where Z = s·v₁ (v₁ the first coordinate of a point
uniform on S^(p-1)) is the same 1-D law for every axis. For a normal cluster Z ~ N(0, 1) exactly; for
heavier tails (exponential, lognormal, ...) P(Z > z) exceeds 1 - Φ(z) far out, so a pair at the requested
separation overlaps more than requested (45x for `seven_highly_separated_10d` before calibration).

`tail(name, dim)` is P(Z > z), Rao-Blackwellised over 200,000 fixed-seed radial draws: given s,
P(|v₁| > u) = 1 - I_{u²}(1/2, (p-1)/2), so the estimate is smooth far into the tail (on a grid of z). `calibration` is the
factor c that puts Z's (1 - α_max/2) quantile at the normal one, q_min = Φ⁻¹(1 - α_max/2); scaling the
radial draws by c makes every pair at the maximum overlap meet it exactly along the exact axis (both
equal-error tails are α_max/2 there). Pairs further apart then overlap less than α_max (each tail is
below α_max/2). The minimum-overlap side holds when Z's tail is at least normal between q_min and q_max;
a lighter-tailed law (uniform, beta: bounded |X|) falls below min_overlap, which `band_status` flags.

`realised_overlaps` measures every pair of a mixture model: the exact (Anderson-Bahadur) axis of the
Gaussian pair, the equal-error threshold, and the overlap 2·error both from `n_per_cluster` sampled
points (with its binomial standard error) and from the tail functions (`population_overlap`, free of
sampling noise, which the band check uses).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import betainc
from scipy.stats import norm

from compass.clusters.overlap import exact_axis, separation_from_overlap

#: A pair is flagged when its population overlap leaves the requested band by more than this factor.
TOLERANCE = 0.2
_N_DRAWS = 200_000


@cache
def _tail_grid(name: str, dim: int, radial: str) -> tuple[np.ndarray, np.ndarray]:
    """log P(Z > z) on a grid of z. The radial draws enter as 3,000 quantile points for the lower 99 % of
    their mass and every draw of the top 1 % (the tail the overlaps live in), each with its weight."""
    from compass.clusters.mixture import radial_draws  # mixture imports this module's calibration

    s = np.sort(radial_draws(name, _N_DRAWS, dim, np.random.default_rng(20251126), radial))
    cut = int(0.99 * _N_DRAWS)
    points = np.concatenate([np.quantile(s[:cut], (np.arange(3000) + 0.5) / 3000), s[cut:]])
    weights = np.concatenate([np.full(3000, cut / 3000), np.ones(_N_DRAWS - cut)]) / _N_DRAWS
    z = np.linspace(0.0, s[-1], 600)
    if dim == 1:
        probs = np.array([0.5 * weights[points > zz].sum() for zz in z])
    else:
        probs = np.array([0.5 * np.sum(weights[points > zz] * (1.0 - betainc(0.5, (dim - 1) / 2.0,
                                                                              (zz / points[points > zz]) ** 2)))
                          for zz in z])
    keep = probs > 0
    return z[keep], np.log(probs[keep])


def tail(name: str, dim: int, z: float, radial: str = "chi") -> float:
    """P(Z > z) for z ≥ 0, Z the 1-D projection of a unit cluster of distribution `name` (module doc);
    log-linear interpolation on `_tail_grid`, 0 beyond the largest draw."""
    if name == "normal" and radial == "chi":
        return float(norm.sf(z))
    grid, log_tail = _tail_grid(name, dim, radial)
    return 0.0 if z > grid[-1] else float(np.exp(np.interp(z, grid, log_tail)))


def quantile(name: str, dim: int, upper: float, radial: str = "chi") -> float:
    """z with P(Z > z) = upper (0 < upper < 1/2)."""
    if name == "normal" and radial == "chi":
        return float(norm.isf(upper))
    hi = 1.0
    while tail(name, dim, hi, radial) > upper:
        hi *= 2.0
    return float(brentq(lambda z: tail(name, dim, z, radial) - upper, 0.0, hi, xtol=1e-10))


@cache
def calibration(name: str, dim: int, max_overlap: float, radial: str = "chi") -> float:
    """Radial scale c for distribution `name` so a pair at separation q_min overlaps exactly max_overlap."""
    if name == "normal" and radial == "chi":
        return 1.0
    return float(separation_from_overlap(max_overlap)) / quantile(name, dim, max_overlap / 2.0, radial)


def equal_error_overlap(left: np.ndarray, right: np.ndarray) -> tuple[float, float]:
    """2 × the common error at the threshold t where P(left > t) = P(right ≤ t) (eq. 5.4 on samples), and
    its binomial standard error. `left` and `right` are 1-D projections with mean(left) < mean(right)."""
    left, right = np.sort(left), np.sort(right)

    def gap(t: float) -> float:
        return (1 - np.searchsorted(left, t, side="right") / len(left)) - np.searchsorted(right, t, side="right") / len(right)

    lo, hi = min(left[0], right[0]), max(left[-1], right[-1])
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
    t = 0.5 * (lo + hi)
    e_left = 1 - np.searchsorted(left, t, side="right") / len(left)
    e_right = np.searchsorted(right, t, side="right") / len(right)
    err = 0.5 * (e_left + e_right)
    se = 0.5 * np.sqrt(e_left * (1 - e_left) / len(left) + e_right * (1 - e_right) / len(right))
    return float(2 * err), float(2 * se)


def population_overlap(gap: float, scale_i: float, scale_j: float, name_i: str, name_j: str, dim: int,
                       radial: str = "chi") -> float:
    """2 × the equal error along an axis where the clusters project to N-like laws at distance `gap` with
    scales √(aᵀΣa)·c: solve P(Z_i > t/scale_i) = P(Z_j > (gap - t)/scale_j) for t in (0, gap)."""
    def diff(t: float) -> float:
        return tail(name_i, dim, t / scale_i, radial) - tail(name_j, dim, (gap - t) / scale_j, radial)

    t = brentq(diff, 0.0, gap, xtol=1e-12 * max(gap, 1.0))
    return 2.0 * tail(name_i, dim, t / scale_i, radial)


def realised_overlaps(model, n_per_cluster: int, rng: np.random.Generator) -> pd.DataFrame:
    """One row per pair (i < j): distributions, the LDA overlap the SGD controlled (`lda_overlap`), the
    sampled equal-error overlap along the exact axis with its SE, and the population overlap."""
    from compass.clusters.overlap import pairwise_overlaps

    k, dim = model.centers.shape
    covs = model.covariances
    lda = pairwise_overlaps(model.centers, covs, "lda")
    samples = [model.sample_cluster(i, n_per_cluster, rng) for i in range(k)]
    rows = []
    for i in range(k):
        for j in range(i + 1, k):
            a = exact_axis(model.centers[i], model.centers[j], covs[i], covs[j])
            sampled, se = equal_error_overlap(samples[i] @ a, samples[j] @ a)
            gap = float(a @ (model.centers[j] - model.centers[i]))
            scales = [np.sqrt(a @ covs[m] @ a) * model.scale_of(m) for m in (i, j)]
            population = population_overlap(gap, *scales, model.distributions[i], model.distributions[j], dim,
                                            model.radial)
            rows.append((i, j, model.distributions[i], model.distributions[j], float(lda[i, j]), sampled, se,
                         population))
    return pd.DataFrame(rows, columns=["cluster_i", "cluster_j", "distribution_i", "distribution_j", "lda_overlap",
                                       "realised_overlap", "realised_se", "population_overlap"])


def band_status(pairs: pd.DataFrame, min_overlap: float, max_overlap: float,
                tolerance: float = TOLERANCE) -> pd.DataFrame:
    """Adds `nearest` (the pair is the nearest neighbour, by population overlap, of one of its clusters),
    `status` ('inside', 'above max', 'below min') and `warning` (status != 'inside').

    Band (§5.3, eq. 5.8): every pair ≤ max_overlap·(1 + tolerance); each cluster's nearest neighbour
    ≥ min_overlap·(1 - tolerance). min_overlap is no bound on the other pairs."""
    out = pairs.copy()
    k = int(max(out["cluster_i"].max(), out["cluster_j"].max())) + 1 if len(out) else 0
    best = np.zeros(k)
    for row in out.itertuples():
        best[row.cluster_i] = max(best[row.cluster_i], row.population_overlap)
        best[row.cluster_j] = max(best[row.cluster_j], row.population_overlap)
    out["nearest"] = [(p == best[i]) or (p == best[j]) for i, j, p in
                      zip(out["cluster_i"], out["cluster_j"], out["population_overlap"])]
    above = out["population_overlap"] > max_overlap * (1 + tolerance)
    below = out["nearest"] & (out["population_overlap"] < min_overlap * (1 - tolerance))
    out["status"] = np.where(above, "above max", np.where(below, "below min", "inside"))
    out["warning"] = out["status"] != "inside"
    out["requested_min"], out["requested_max"], out["tolerance"] = min_overlap, max_overlap, tolerance
    return out

