"""Max-min sampling (thesis ch. 5, §5.2 and App. 4A): cluster radii, aspect ratios, axis lengths and group
sizes, each drawn so that the max-min ratio and a location constraint hold exactly, plus Haar-random
orientations.

One rule serves all four attributes (`maxmin_values`): the set contains its minimum `lo` and maximum
`hi` (so max/min is the requested ratio) and the other values come in pairs (a ~ Triangular, 2c - a)
reflected about the centre c that makes the mean equal the target, with an odd leftover at c. Radii,
aspect ratios and axis lengths are sampled in log space (the constraint is a geometric mean: App. 4A
Table .4), group sizes linearly (they sum to n). The reference implementation reflects aspect ratios
linearly about an endpoint pair that does not centre on aspect_ref; we centre in log space instead, so
the thesis' stated constraint "geometric mean of aspect ratios = aspect_ref" holds exactly.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import ortho_group


def maxmin_values(n: int, lo: float, hi: float, target: float, rng: np.random.Generator) -> np.ndarray:
    """n values in [lo, hi] containing lo and hi (n ≥ 2) whose mean is `target` (App. 4A pair sampling).

    The mean is exact whenever the centre c = (n·target - lo - hi)/(n - 2) lies in [lo, hi]; otherwise
    (e.g. n = 2, or a target too close to an endpoint) c is clipped into range. Shuffled.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if n == 1 or hi == lo:
        return np.full(n, float(target if n == 1 else lo))
    values = [lo, hi]
    if n > 2:
        c = float(np.clip((n * target - lo - hi) / (n - 2), lo, hi))
        n_pairs, leftover = divmod(n - 2, 2)
        if n_pairs:
            left, right = max(lo, 2 * c - hi), min(hi, 2 * c - lo)
            a = rng.triangular(left, c, right, size=n_pairs) if right > left else np.full(n_pairs, c)
            values += list(a) + list(2 * c - a)
        if leftover:
            values.append(c)
    out = np.asarray(values, dtype=float)
    rng.shuffle(out)
    return out


def radii(k: int, scale: float, radius_maxmin: float, rng: np.random.Generator) -> np.ndarray:
    """Cluster radii (dim-th root of volume): max/min = radius_maxmin, geometric mean = scale."""
    half = 0.5 * np.log(radius_maxmin)
    return np.exp(maxmin_values(k, np.log(scale) - half, np.log(scale) + half, np.log(scale), rng))


def aspect_ratios(k: int, aspect_ref: float, aspect_maxmin: float, rng: np.random.Generator) -> np.ndarray:
    """Aspect ratios (longest / shortest axis) ≥ 1: max/min = aspect_maxmin, geometric mean = aspect_ref.

    The endpoints centre on log aspect_ref unless that would put the minimum below 1; then the minimum is
    1 and the pairs re-centre so the geometric mean still equals aspect_ref when k allows it.
    """
    lo = max(0.0, np.log(aspect_ref) - 0.5 * np.log(aspect_maxmin))
    return np.exp(maxmin_values(k, lo, lo + np.log(aspect_maxmin), np.log(aspect_ref), rng))


def axis_lengths(radius: float, aspect: float, dim: int, rng: np.random.Generator) -> np.ndarray:
    """Principal-axis lengths of one cluster: max/min = aspect, geometric mean = radius (App. 4A)."""
    if dim == 1:
        return np.array([radius])
    half = 0.5 * np.log(aspect)
    return np.exp(maxmin_values(dim, np.log(radius) - half, np.log(radius) + half, np.log(radius), rng))


def group_sizes(n: int, k: int, imbalance_ratio: float, rng: np.random.Generator) -> np.ndarray:
    """Points per cluster: max/min ≈ imbalance_ratio (exact before rounding), sum exactly n, each ≥ 1.

    ref = n/k, min = 2·ref/(1 + ratio), partner 2·ref - s (spec §5.2 step 3); the fractional sizes are
    rounded by largest remainder (each cluster keeps at least one point).
    """
    if k < 1 or n < k:
        raise ValueError(f"need 1 <= n_clusters <= n_samples, got k={k}, n={n}")
    ref = n / k
    smin = 2 * ref / (1 + imbalance_ratio)
    sizes = maxmin_values(k, smin, smin * imbalance_ratio, ref, rng)
    out = np.maximum(np.floor(sizes).astype(int), 1)
    while out.sum() > n:  # only when the floor of 1 lifted several clusters
        out[np.argmax(out)] -= 1
    remainder = sizes - np.floor(sizes)
    for i in np.argsort(-remainder, kind="stable")[: n - out.sum()]:
        out[i] += 1
    while out.sum() < n:
        out[np.argmin(out)] += 1
    return out


def orientations(k: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """k Haar-random orthogonal matrices (k, dim, dim); columns are the principal axes (§5.3)."""
    if dim == 1:
        return rng.choice([-1.0, 1.0], size=(k, 1, 1))
    mats = ortho_group.rvs(dim, size=k, random_state=rng)
    return np.asarray(mats).reshape(k, dim, dim)
