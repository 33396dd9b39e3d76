"""Validating user segmentation with archetypes (issue 13 item 5; seed 000 EC §8.1 and thesis ch. 5).

ML Compass's PRISM user types come from a segmentation of users: each user is a point (weighted C1,
weighted C2) in the latent capability space, and users are split into C1-oriented, neutral and
C2-oriented types by thresholds on the difference C1 - C2 (EC §8.1, "User type creation"; the paper
tuned asymmetric thresholds by hand; we use the difference's terciles, or a 1-D Gaussian mixture on it). In this pipeline the contexts
arrive as the `context_group` column of the outcome data, so the segmentation happens before it; this
study tells a case study which segmentation to use by generating user populations with known segments
from archetypes (synthetic, labelled as such) and measuring how well each method recovers them.

Two orientations: "aligned" rotates each population so its segments' centres spread along the C1 - C2
direction (the situation the threshold rule assumes), "random" keeps the archetype's random placement.
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

from compass.clusters.archetype import Archetype
from compass.clusters.benchmark import fit_labels
from compass.clusters.mixture import generate

# Three user types with the paper's imbalance (about 600 / 500 / 100 users: ratio 6), 1,200 users.
_BASE = {"n_clusters": 3, "dim": 2, "n_samples": 1200, "imbalance_ratio": 6.0, "aspect_ref": 1.5,
         "aspect_maxmin": 2.0, "distributions": ("normal", "exponential")}
POPULATIONS: dict[str, Archetype] = {
    "user_types_separated": Archetype(name="user_types_separated", max_overlap=0.01, min_overlap=0.001, **_BASE),
    "user_types_moderate": Archetype(name="user_types_moderate", max_overlap=0.05, min_overlap=0.005, **_BASE),
    "user_types_overlapping": Archetype(name="user_types_overlapping", max_overlap=0.2, min_overlap=0.02, **_BASE),
}
METHODS = ("difference_terciles", "difference_gmm", "kmeans", "em_gmm", "hierarchical", "hdbscan")
ORIENTATIONS = ("aligned", "random")
DIFFERENCE_AXIS = np.array([1.0, -1.0]) / np.sqrt(2.0)


def align(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Rotate X so the first principal direction of the segment centres is the C1 - C2 direction."""
    centred = centers - centers.mean(axis=0)
    direction = np.linalg.svd(centred, full_matrices=False)[2][0]
    angle = np.arctan2(DIFFERENCE_AXIS[1], DIFFERENCE_AXIS[0]) - np.arctan2(direction[1], direction[0])
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return X @ rot.T


def difference_terciles(X: np.ndarray) -> np.ndarray:
    """EC §8.1's rule with tercile thresholds: C2-oriented / neutral / C1-oriented by C1 - C2."""
    diff = X[:, 0] - X[:, 1]
    return np.searchsorted(np.quantile(diff, [1 / 3, 2 / 3]), diff)


def segment(method: str, X: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Labels of one segmentation method; HDBSCAN's noise is kept as a segment of its own (-1).

    "difference_gmm" keeps the paper's one-dimensional rule but places the thresholds by a k-component
    Gaussian mixture on C1 - C2 instead of by hand (or by terciles)."""
    if method == "difference_terciles":
        return difference_terciles(X)
    if method == "difference_gmm":
        return fit_labels("em_gmm", (X[:, 0] - X[:, 1])[:, None], k, seed)
    return fit_labels(method, X, k, seed)


def segmentation_study(n_reps: int, seed: int = 0, populations: dict[str, Archetype] | None = None) -> pd.DataFrame:
    """AMI and ARI per population x orientation x method (mean, se, n_datasets over n_reps populations)."""
    rows = []
    for name, archetype in (populations or POPULATIONS).items():
        for rep in range(n_reps):
            data = generate(archetype, np.random.default_rng([seed, zlib.crc32(name.encode()), rep]))
            for orientation in ORIENTATIONS:
                X = align(data.X, data.model.centers) if orientation == "aligned" else data.X
                for method in METHODS:
                    labels = segment(method, X, archetype.n_clusters, seed + rep)
                    rows += [(name, orientation, method, "ami", adjusted_mutual_info_score(data.y, labels)),
                             (name, orientation, method, "ari", adjusted_rand_score(data.y, labels))]
    frame = pd.DataFrame(rows, columns=["population", "orientation", "method", "metric", "value"])
    g = frame.groupby(["population", "orientation", "method", "metric"], sort=True)["value"]
    out = g.agg(mean="mean", sd="std", n_datasets="count").reset_index()
    out["se"] = out["sd"] / np.sqrt(out["n_datasets"])
    return out.drop(columns="sd")[["population", "orientation", "method", "metric", "mean", "se", "n_datasets"]]
