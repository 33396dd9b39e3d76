"""What a researcher expects from repliclust, in our generator (issue 30 item 4; thesis ch. 5 and the spec's
§5.1): archetypes sampled around one (`sample_hyperparams`), a text and JSON summary of an archetype or
a generated data set (`describe`), and a JSONL export of a data set with its labels (`to_jsonl`).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd

from compass.clusters.archetype import Archetype
from compass.clusters.mixture import Dataset
from compass.clusters.realised import band_status, realised_overlaps


def sample_hyperparams(archetype: Archetype, n: int, rng: np.random.Generator, n_clusters: tuple[int, int] = (1, 30),
                       samples_per_cluster: tuple[int, int] = (10, 1000), dim: tuple[int, int] = (2, 50)
                       ) -> list[Archetype]:
    """n archetypes like this one whose n_clusters, n_samples and dim are Poisson draws centred on its own,
    redrawn until inside the bounds (repliclust 1.0.0's `sample_hyperparams` and its defaults); n_samples is
    bounded per cluster of the drawn n_clusters. Names get the suffix `_sampled_<i>`."""
    def poisson_within(lam: float, lo: int, hi: int) -> int:
        lam = min(max(lam, lo), hi)  # centred inside the bounds: an archetype outside them never ends the loop
        while True:
            value = int(rng.poisson(lam))
            if lo <= value <= hi:
                return value

    out = []
    for i in range(n):
        k = poisson_within(archetype.n_clusters, *n_clusters)
        size = poisson_within(archetype.n_samples, k * samples_per_cluster[0], k * samples_per_cluster[1])
        out.append(dataclasses.replace(archetype, name=f"{archetype.name}_sampled_{i}", n_clusters=k, n_samples=size,
                                       dim=poisson_within(archetype.dim, *dim)))
    return out


def describe(archetype: Archetype, data: Dataset | None = None, n_per_cluster: int = 20_000,
             seed: int = 0) -> dict:
    """A JSON-ready summary: the archetype's parameters and, for a generated data set, per cluster its
    distribution, size, radius (geometric mean of axis lengths) and aspect ratio, the centre fit, and
    requested against realised pairwise overlaps (compass.clusters.realised)."""
    out: dict = {"archetype": archetype.to_dict()}
    if data is None:
        return out
    model = data.model
    lengths = model.lengths
    clusters = pd.DataFrame({"distribution": model.distributions, "size": np.bincount(data.y, minlength=len(lengths)),
                             "radius": np.exp(np.log(lengths).mean(axis=1)),
                             "aspect_ratio": lengths.max(axis=1) / lengths.min(axis=1),
                             "radial_scale": [model.scale_of(i) for i in range(len(lengths))]})
    pairs = band_status(realised_overlaps(model, n_per_cluster, np.random.default_rng(seed)), archetype.min_overlap,
                        archetype.max_overlap)
    out["dataset"] = {"n_points": int(len(data.y)), "dim": int(data.X.shape[1]), "center_loss": data.center_loss,
                      "converged": data.converged, "restarts": data.restarts,
                      "clusters": clusters.to_dict(orient="records"),
                      "overlap": {"requested_min": archetype.min_overlap, "requested_max": archetype.max_overlap,
                                  "realised_max": float(pairs["realised_overlap"].max()) if len(pairs) else 0.0,
                                  "pairs_outside_band": int(pairs["warning"].sum()),
                                  "pairs": pairs.drop(columns=["requested_min", "requested_max", "tolerance"])
                                  .to_dict(orient="records")}}
    return out


def describe_text(summary: dict) -> str:
    """The `describe` summary in a few lines of plain text."""
    a = summary["archetype"]
    lines = [f"{a['name']}: {a['n_clusters']} clusters in {a['dim']}-D, {a['n_samples']} points, overlap "
             f"[{a['min_overlap']:g}, {a['max_overlap']:g}], aspect ratio ~{a['aspect_ref']:g} (max/min "
             f"{a['aspect_maxmin']:g}), radius max/min {a['radius_maxmin']:g}, imbalance {a['imbalance_ratio']:g}, "
             f"distributions {', '.join(a['distributions'])}"]
    d = summary.get("dataset")
    if d:
        c = pd.DataFrame(d["clusters"])
        o = d["overlap"]
        lines += [f"data set: {d['n_points']} points; centre fit {'converged' if d['converged'] else 'NOT converged'} "
                  f"(loss {d['center_loss']:.2g}, {d['restarts']} restarts)",
                  f"cluster sizes {c['size'].min()}-{c['size'].max()}, radii {c['radius'].min():.3g}-"
                  f"{c['radius'].max():.3g}, aspect ratios {c['aspect_ratio'].min():.3g}-{c['aspect_ratio'].max():.3g}",
                  f"realised overlap max {o['realised_max']:.3g} (requested max {o['requested_max']:g}); "
                  f"{o['pairs_outside_band']} of {len(o['pairs'])} pairs outside the band"]
    return "\n".join(lines)


def to_jsonl(data: Dataset) -> str:
    """One JSON object per point: {"x": [...], "label": k}, in the data set's order."""
    return "".join(json.dumps({"x": [float(v) for v in x], "label": int(label)}) + "\n" for x, label in zip(data.X, data.y))
