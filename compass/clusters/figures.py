"""The simulations behind thesis Figs. 5.4 and 5.9-5.10 (ch. 5, §5.3 and §5.4 "Minimax Classification Error
Captures Clustering Difficulty"), on our generator; all data synthetic. (Fig. 5.11, the distribution of pairwise
overlaps per archetype, is the benchmark's clusters.overlap table.)

- `overlap_approximations` (Fig. 5.4): for cluster pairs of mixture models drawn from varied archetypes, the LDA
  and C2C approximations (eqs. 5.5-5.6) against the exact overlap (eq. 5.4): Pearson r and relative errors.
- `difficulty_curve` (Figs. 5.9-5.10): two clusters "with very different shapes in p D" (the thesis' archetype),
  max_overlap on a grid with min_overlap = max_overlap / 10, Ward's AMI and ARI and the silhouette score per
  data set, convex and after `distort`.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
from sklearn.metrics import silhouette_score

from compass.clusters.archetype import Archetype
from compass.clusters.benchmark import score
from compass.clusters.mixture import generate, sample_mixture_model
from compass.clusters.overlap import exact_overlap, pairwise_overlaps
from compass.clusters.transforms import distort

#: Fig. 5.4's pair sources: archetypes of different shapes and dimensions (the thesis: "a variety of archetypes").
PAIR_ARCHETYPES = tuple(
    Archetype(name=f"pairs_{dim}d_aspect{aspect:g}", n_clusters=5, dim=dim, n_samples=50, aspect_ref=aspect,
              aspect_maxmin=3.0, max_overlap=mx, min_overlap=mx / 10, distributions=("normal",))
    for dim, aspect, mx in itertools.product((2, 10, 30), (1.0, 3.0), (0.01, 0.1)))
#: Figs. 5.9-5.10: "two clusters with very different shapes in p D" (thesis §5.4).
TWO_SHAPES = Archetype(name="two_very_different_shapes", n_clusters=2, n_samples=200, aspect_ref=1.5,
                       aspect_maxmin=3.0, radius_maxmin=3, imbalance_ratio=2, max_overlap=0.05, min_overlap=0.001,
                       distributions=("normal", "exponential"))


def overlap_approximations(n_models: int, seed: int = 0) -> pd.DataFrame:
    """One row per cluster pair: archetype, dim, exact, lda and c2c overlaps (n_models mixture models per archetype)."""
    rows = []
    for a_index, archetype in enumerate(PAIR_ARCHETYPES):
        for m in range(n_models):
            model, _ = sample_mixture_model(archetype, np.random.default_rng([seed, a_index, m]))
            covs = model.covariances
            lda, c2c = (pairwise_overlaps(model.centers, covs, mode) for mode in ("lda", "c2c"))
            for i, j in itertools.combinations(range(archetype.n_clusters), 2):
                exact = exact_overlap(model.centers[i], model.centers[j], covs[i], covs[j])
                rows.append((archetype.name, archetype.dim, exact, lda[i, j], c2c[i, j]))
    return pd.DataFrame(rows, columns=["archetype", "dim", "exact", "lda", "c2c"])


def approximation_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per approximation: Pearson r with the exact overlap, median and 90th-percentile relative error, share of
    pairs within 10 % (the thesis: LDA "typically comes within 10 %", C2C "incurs significant relative error")."""
    rows = []
    for method in ("lda", "c2c"):
        rel = (pairs[method] - pairs["exact"]).abs() / pairs["exact"]
        rows.append((method, len(pairs), float(np.corrcoef(pairs[method], pairs["exact"])[0, 1]),
                     float(rel.median()), float(rel.quantile(0.9)), float((rel <= 0.1).mean())))
    return pd.DataFrame(rows, columns=["method", "n_pairs", "pearson_r", "median_rel_error", "p90_rel_error",
                                       "share_within_10pct"])


def difficulty_curve(dims: tuple[int, ...], max_overlaps: tuple[float, ...], n_datasets: int,
                     seed: int = 0) -> pd.DataFrame:
    """Mean Ward AMI, ARI and silhouette score (and their SEs) per shape x dim x max_overlap over n_datasets."""
    rows = []
    for (d_index, dim), (o_index, mx), shape in itertools.product(enumerate(dims), enumerate(max_overlaps),
                                                                   ("convex", "distorted")):
        archetype = dataclasses.replace(TWO_SHAPES, name=f"two_very_different_shapes_{dim}d", dim=dim,
                                        max_overlap=mx, min_overlap=mx / 10)
        for index in range(n_datasets):
            rng = np.random.default_rng([seed, d_index, o_index, index])
            data = generate(archetype, rng)
            X = distort(data.X, rng) if shape == "distorted" else data.X
            scores = score("hierarchical", X, data.y, 2, index)
            rows.append((shape, dim, mx, index, scores["ami"], scores["ari"], float(silhouette_score(X, data.y))))
    frame = pd.DataFrame(rows, columns=["shape", "dim", "max_overlap", "dataset", "ami", "ari", "silhouette"])
    g = frame.groupby(["shape", "dim", "max_overlap"], sort=True)
    out = g[["ami", "ari", "silhouette"]].mean()
    se = g[["ami", "ari", "silhouette"]].std() / np.sqrt(g.size().to_numpy()[:, None])
    return out.join(se.add_suffix("_se")).assign(n_datasets=g.size()).reset_index()
