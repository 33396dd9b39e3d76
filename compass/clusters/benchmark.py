"""The mock clustering benchmark of thesis ch. 5, §5.4 (Tables 5.2 and 5.3).

Per archetype, `n_datasets` convex data sets and as many freshly drawn `distort`ed ones; K-Means, Ward
(hierarchical), spectral (RBF affinity) and EM-GMM receive the true k, everything else at scikit-learn
defaults; HDBSCAN (min_samples = 5) is scored on its non-noise points only and its noise fraction
p_noise is reported. Metrics: AMI and ARI against the true labels, no normalization of X (spec
"Pitfalls"). Summaries are the mean over data sets with its standard error.

Every data set also records how its centres were fitted (overlap loss, convergence, restarts) and its
realised pairwise overlaps against the requested band (compass.clusters.realised; for a distorted data
set, those of the mixture before `distort`). The benchmark uses the thesis' generator by default
(`calibrate_tails=False`, non-normal clusters as drawn by repliclust 1.0.0), so its numbers compare with
Tables 5.2-5.3; each convex data set is also drawn with calibrated tails, whose realised overlaps are
recorded next to the thesis generator's (generator "calibrated").
"""

from __future__ import annotations

import dataclasses
import warnings
import zlib
from typing import NamedTuple

import numpy as np
import pandas as pd
from sklearn.cluster import HDBSCAN, AgglomerativeClustering, KMeans, SpectralClustering
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score
from sklearn.mixture import GaussianMixture

from compass.clusters.archetype import Archetype
from compass.clusters.mixture import Dataset, generate
from compass.clusters.realised import band_status, realised_overlaps
from compass.clusters.transforms import distort

ALGORITHMS = ("em_gmm", "kmeans", "spectral", "hierarchical", "hdbscan")
SHAPES = ("convex", "distorted")
SLOW = ("spectral", "hdbscan")  # dense n x n affinity; HDBSCAN's core distances in high dimension
OVERLAP_SAMPLES = 20_000  # points per cluster for the sampled realised overlap
GENERATORS = ("thesis", "calibrated")


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


def draw(archetype: Archetype, shape: str, index: int, seed: int = 0) -> tuple[np.ndarray, Dataset]:
    """Data set `index` of an archetype: convex, or freshly drawn and passed through `distort`; the
    coordinates and the generated data set (labels, mixture model, centre fit)."""
    rng = dataset_seed(seed, archetype.name, shape, index)
    data = generate(archetype, rng)
    return (data.X if shape == "convex" else distort(data.X, rng)), data


class BenchmarkRun(NamedTuple):
    scores: pd.DataFrame  # archetype, shape, dataset, algorithm, metric, value
    datasets: pd.DataFrame  # archetype, shape, dataset, point, label, coordinates
    generation: pd.DataFrame  # archetype, generator, shape, dataset, center_loss, converged, restarts
    overlaps: pd.DataFrame  # one row per cluster pair (realised.band_status) with archetype, generator, shape, dataset


def _generation_rows(archetype: Archetype, generator: str, shape: str, index: int, data: Dataset,
                     seed: int) -> tuple[tuple, pd.DataFrame]:
    fit = (archetype.name, generator, shape, index, data.center_loss, data.converged, data.restarts)
    rng = np.random.default_rng([seed, zlib.crc32(archetype.name.encode()), GENERATORS.index(generator),
                                SHAPES.index(shape), index])
    pairs = band_status(realised_overlaps(data.model, OVERLAP_SAMPLES, rng), archetype.min_overlap,
                        archetype.max_overlap)
    return fit, pairs.assign(archetype=archetype.name, generator=generator, shape=shape, dataset=index)


def run_benchmark(archetype: Archetype, n_datasets: int, seed: int = 0, shapes: tuple[str, ...] = SHAPES,
                  algorithms: tuple[str, ...] = ALGORITHMS, slow_max_points: int | None = None,
                  keep_datasets: int = 1) -> BenchmarkRun:
    """Scores per data set, the first `keep_datasets` data sets per shape as rows, and per data set its
    centre fit and realised overlaps (module docstring).

    `slow_max_points` skips the SLOW algorithms (spectral, HDBSCAN) on larger data sets, the benchmark's
    bottleneck (light runs only); a skipped cell is absent, not zero.
    """
    thesis = dataclasses.replace(archetype, calibrate_tails=False)
    rows, kept, fits, pairs = [], [], [], []
    for shape in shapes:
        for index in range(n_datasets):
            X, data = draw(thesis, shape, index, seed)
            y = data.y
            fit, overlap = _generation_rows(archetype, "thesis", shape, index, data, seed)
            fits.append(fit)
            pairs.append(overlap)
            if shape == "convex":
                fit, overlap = _generation_rows(archetype, "calibrated", shape, index,
                                                draw(dataclasses.replace(archetype, calibrate_tails=True), shape,
                                                     index, seed)[1], seed)
                fits.append(fit)
                pairs.append(overlap)
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
    generation = pd.DataFrame(fits, columns=["archetype", "generator", "shape", "dataset", "center_loss",
                                             "converged", "restarts"])
    overlaps = pd.concat(pairs, ignore_index=True)
    lead = ["archetype", "generator", "shape", "dataset"]
    return BenchmarkRun(scores, datasets, generation, overlaps[lead + [c for c in overlaps if c not in lead]])


def _json_row(x: np.ndarray) -> str:
    return "[" + ",".join(f"{v:.6g}" for v in x) + "]"


def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean over data sets with its standard error (sd/√n; NaN for one data set), as in Tables 5.2-5.3."""
    g = scores.dropna(subset=["value"]).groupby(["archetype", "shape", "algorithm", "metric"], sort=True)["value"]
    out = g.agg(mean="mean", sd="std", n_datasets="count").reset_index()
    out["se"] = out["sd"] / np.sqrt(out["n_datasets"])
    return out[["archetype", "shape", "algorithm", "metric", "mean", "se", "n_datasets"]]
