"""The cluster benchmark page (thesis ch. 5): a verdict, requested against realised overlap, the benchmark."""

from __future__ import annotations

import pandas as pd

from pipelines.formatting import count, number
from pipelines.report.html import verdict
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse


def overlap_summary(overlap: pd.DataFrame, generation: pd.DataFrame) -> pd.DataFrame:
    """Per archetype and generator: the requested band, the largest realised overlap (sampled, and of the
    clusters' laws), pairs outside the band, and data sets whose centre fit converged."""
    keys = ["archetype", "generator"]
    out = overlap.groupby(keys, sort=True).agg(
        requested_min=("requested_min", "first"), requested_max=("requested_max", "first"),
        max_realised=("realised_overlap", "max"), max_population=("population_overlap", "max"),
        pairs=("warning", "size"), pairs_outside_band=("warning", "sum")).reset_index()
    fits = generation.groupby(keys, sort=True).agg(datasets=("converged", "size"), converged=("converged", "sum"))
    return out.merge(fits.reset_index(), on=keys, how="left")


def overlap_verdict(summary: pd.DataFrame, benchmark: pd.DataFrame) -> str:
    """One sentence from the tables: pairs outside the band per generator, and the best algorithm by mean
    convex and distorted AMI."""
    parts = []
    for generator, g in summary.groupby("generator", sort=False):
        parts.append(f"{count(g['pairs_outside_band'].sum())} of {count(g['pairs'].sum())} cluster pairs "
                     f"({generator} generator)")
    text = "Requested overlap band left by " + ", ".join(parts) + "."
    ami = benchmark[benchmark["metric"] == "ami"]
    for shape, g in ami.groupby("shape", sort=True):
        means = g.groupby("algorithm")["mean"].mean().sort_values(ascending=False)
        text += f" Best mean AMI on {shape} data: {means.index[0]} ({number(means.iloc[0])})."
    return text


def clusters_body(wh: Warehouse) -> str:
    benchmark = readers.published(wh, "clusters.benchmark")
    overlap = readers.published(wh, "clusters.overlap")
    generation = readers.published(wh, "clusters.generation")
    segmentation = readers.published(wh, "clusters.segmentation")
    parts = []
    if len(overlap) and len(generation):
        summary = overlap_summary(overlap, generation)
        parts += [verdict(overlap_verdict(summary, benchmark)),
                  section("Requested against realised overlap", summary,
                          "Realised: 2 x the equal-error rate along each pair's exact axis, from 20,000 sampled points "
                          "per cluster (max_realised) and from the clusters' projected laws (max_population). A pair "
                          "leaves the band when it overlaps more than max (+20 %), or is a cluster's nearest neighbour "
                          "below min (-20 %). 'thesis': non-normal clusters drawn as repliclust 1.0.0 does (the "
                          "benchmark's data); 'calibrated': their tails scaled to meet max_overlap."),
                  section("Pairs outside the band", overlap[overlap["warning"]].head(500))]
    parts.append(section("Clustering benchmark (§5.4, Tables 5.2-5.3)", benchmark))
    if len(segmentation):
        parts.append(section("User segmentation (synthetic)", segmentation))
    return "".join(parts)


SLICE = Slice("clusters", "Cluster benchmark", "clusters.benchmark", clusters_body,
              ("clusters.benchmark", "clusters.overlap", "clusters.generation", "clusters.segmentation"))
