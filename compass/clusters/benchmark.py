"""The mock clustering benchmark of thesis ch. 5, §5.4 (Tables 5.2 and 5.3).

Per archetype, `n_datasets` convex data sets and as many freshly drawn `distort`ed ones; K-Means, Ward
(hierarchical), spectral (RBF affinity) and EM-GMM receive the true k, everything else at scikit-learn
defaults; HDBSCAN (min_samples = 5) is scored on its non-noise points only and its noise fraction
p_noise is reported. Metrics: AMI and ARI against the true labels, no normalization of X (spec
"Pitfalls"). Summaries are the mean over data sets with its standard error.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pandas as pd
from sklearn.cluster import HDBSCAN, AgglomerativeClustering, KMeans, SpectralClustering
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score
from sklearn.mixture import GaussianMixture

from compass.clusters.archetype import Archetype
from compass.clusters.mixture import generate
from compass.clusters.transforms import distort

ALGORITHMS = ("em_gmm", "kmeans", "spectral", "hierarchical", "hdbscan")
SHAPES = ("convex", "distorted")
SLOW = ("spectral", "hdbscan")  # dense n x n affinity; HDBSCAN's core distances in high dimension


def fit_labels(algorithm: str, X: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Cluster labels of one algorithm (§5.4); HDBSCAN marks noise with -1."""
    if algorithm == "kmeans":
        return KMeans(n_clusters=k, random_state=seed).fit_predict(X)
    if algorithm == "hierarchical":
        return AgglomerativeClustering(n_clusters=k, linkage="ward").fit_predict(X)
    if algorithm == "spectral":
        return SpectralClustering(n_clusters=k, affinity="rbf", random_state=seed).fit_predict(X)
    if algorithm == "em_gmm":
        return GaussianMixture(n_components=k, random_state=seed).fit(X).predict(X)
    if algorithm == "hdbscan":
        return HDBSCAN(min_samples=5).fit_predict(X)
    raise ValueError(f"unknown algorithm {algorithm!r}; known: {ALGORITHMS}")


def score(algorithm: str, X: np.ndarray, y: np.ndarray, k: int, seed: int) -> dict[str, float]:
    """AMI and ARI (HDBSCAN: on non-noise points, plus p_noise; NaN scores when every point is noise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # spectral's "graph is not fully connected", GMM convergence
        labels = fit_labels(algorithm, X, k, seed)
    out: dict[str, float] = {}
    keep = labels >= 0
    if algorithm == "hdbscan":
        out["p_noise"] = float(1 - keep.mean())
    if keep.any():
        out["ami"] = float(adjusted_mutual_info_score(y[keep], labels[keep]))
        out["ari"] = float(adjusted_rand_score(y[keep], labels[keep]))
    else:
        out["ami"] = out["ari"] = float("nan")
    return out


def dataset_seed(seed: int, archetype: str, shape: str, index: int) -> np.random.Generator:
    """A generator for one (archetype, shape, data set), stable across runs and processes."""
    return np.random.default_rng([seed, zlib.crc32(archetype.encode()), SHAPES.index(shape), index])


def draw(archetype: Archetype, shape: str, index: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Data set `index` of an archetype: convex, or freshly drawn and passed through `distort`."""
    rng = dataset_seed(seed, archetype.name, shape, index)
    data = generate(archetype, rng)
    return (data.X if shape == "convex" else distort(data.X, rng)), data.y


def run_benchmark(archetype: Archetype, n_datasets: int, seed: int = 0, shapes: tuple[str, ...] = SHAPES,
                  algorithms: tuple[str, ...] = ALGORITHMS, slow_max_points: int | None = None,
                  keep_datasets: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores per data set (archetype, shape, dataset, algorithm, metric, value) and the first
    `keep_datasets` data sets per shape as rows (archetype, shape, dataset, point, label, coordinates).

    `slow_max_points` skips the SLOW algorithms (spectral, HDBSCAN) on larger data sets, the benchmark's
    bottleneck (light runs only); a skipped cell is absent, not zero.
    """
    rows, kept = [], []
    for shape in shapes:
        for index in range(n_datasets):
            X, y = draw(archetype, shape, index, seed)
            for algorithm in algorithms:
                if algorithm in SLOW and slow_max_points is not None and len(X) > slow_max_points:
                    continue
                for metric, value in score(algorithm, X, y, archetype.n_clusters, seed + index).items():
                    rows.append((archetype.name, shape, index, algorithm, metric, value))
            if index < keep_datasets:
                kept.append(pd.DataFrame({"archetype": archetype.name, "shape": shape, "dataset": index,
                                          "point": np.arange(len(y)), "label": y,
                                          "coordinates": [_json_row(x) for x in X]}))
    scores = pd.DataFrame(rows, columns=["archetype", "shape", "dataset", "algorithm", "metric", "value"])
    datasets = pd.concat(kept, ignore_index=True) if kept else pd.DataFrame(
        columns=["archetype", "shape", "dataset", "point", "label", "coordinates"])
    return scores, datasets


def _json_row(x: np.ndarray) -> str:
    return "[" + ",".join(f"{v:.6g}" for v in x) + "]"


def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean over data sets with its standard error (sd/√n; NaN for one data set), as in Tables 5.2-5.3."""
    g = scores.dropna(subset=["value"]).groupby(["archetype", "shape", "algorithm", "metric"], sort=True)["value"]
    out = g.agg(mean="mean", sd="std", n_datasets="count").reset_index()
    out["se"] = out["sd"] / np.sqrt(out["n_datasets"])
    return out[["archetype", "shape", "algorithm", "metric", "mean", "se", "n_datasets"]]
