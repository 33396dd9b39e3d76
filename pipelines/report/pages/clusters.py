"""The cluster benchmark page (thesis ch. 5): a verdict, requested against realised overlap, the benchmark, query
segments as ML Compass contexts (real prompts), and the thesis' figure simulations."""

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


def _gain(cells: pd.DataFrame, method: str) -> str:
    return f"{cells.loc[method, 'gain_vs_global']:+.3f} (SE {cells.loc[method, 'gain_vs_global_se']:.3f})"


def contexts_verdict(study: pd.DataFrame, contexts: pd.DataFrame) -> str:
    """One sentence per routing dataset from the tables: the contexts kept, and the held-out gain of per-context
    choice over the global one (and of random segments) at break-even cost (w factor 1)."""
    at1 = study[(study["w_factor"] == 1.0) & (study["method"].isin(["kmeans", "random"]))]
    parts = []
    for dataset, g in contexts.groupby("dataset", sort=True):
        k = int(g["k"].iloc[0])
        shown = k if k > 1 else int(at1["k"].min())
        cells = at1[(at1["dataset"] == dataset) & (at1["k"] == shown)].set_index("method")
        kept = f"{k} query contexts kept" if k > 1 else "one context (no segmentation beats both references)"
        parts.append(f"{dataset}: {kept}; held-out gain of K-Means at k = {shown} over one global model {_gain(cells, 'kmeans')}, random "
                     f"segments "
                     f"{_gain(cells, 'random')}")
    return "Query segments as contexts, " + "; ".join(parts) + "."


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
    study, contexts = readers.published(wh, "clusters.context_study"), readers.published(wh, "clusters.query_contexts")
    if len(study) and len(contexts):
        parts += [verdict(contexts_verdict(study, contexts)),
                  section("Query segments as ML Compass contexts (real prompts)", study,
                          "K-Means / EM-GMM segments of the route labels' gold queries; per segment the model with the "
                          "higher training mean gain at cost weight w; utilities on held-out queries, gains paired "
                          "with the global choice and random segments of the same sizes over seeded splits.")]
    for table, title in (("clusters.overlap_approximation", "Fig. 5.4: LDA and C2C against the exact overlap"),
                         ("clusters.difficulty", "Figs. 5.9-5.10: Ward's AMI / ARI and silhouette against overlap")):
        frame = readers.published(wh, table)
        if len(frame):
            parts.append(section(title + " (synthetic)", frame))
    return "".join(parts)


SLICE = Slice("clusters", "Cluster benchmark", "clusters.benchmark", clusters_body,
              ("clusters.benchmark", "clusters.overlap", "clusters.generation", "clusters.segmentation",
               "clusters.context_study", "clusters.query_contexts", "clusters.overlap_approximation",
               "clusters.difficulty"))
