"""Synthetic cluster data from archetypes (seed 001, thesis chapter 5): the mock clustering benchmark per
archetype file (one dynamic partition each), the user-segmentation validation study, and segments of real
prompts as ML Compass contexts (one partition per routing dataset).

The benchmark's and the validation study's data are synthetic (drawn from the archetypes), labelled as such in
the data dictionary; clusters/contexts reads the real raw.route_labels. Light by default (one data set per archetype and shape, spectral clustering and HDBSCAN
only up to 1,500 points); the thesis' full design (10 data sets per archetype and shape, every algorithm) with
COMPASS_HEAVY=1 or the run config.
"""

import dagster as dg

from assets.partitions import archetype_partitions, route_dataset_partitions
from assets.sources import RAW_KEYS
from compass.clusters.benchmark import run_benchmark, summarize
from compass.clusters.contexts import assign_contexts, chosen_k, context_study, helps
from compass.clusters.figures import approximation_summary, difficulty_curve, overlap_approximations
from compass.clusters.plots import datasets_figure
from compass.clusters.segmentation import segmentation_study
from resources import readers, settings
from resources.clusters_configs import archetype
from resources.publish import publish_many, save_figure
from resources.warehouse import WarehouseResource

CODE_VERSION = "clusters-6"  # 6: contexts embed queries with WordLlama (issue 46); 5: radii, aspect ratios and group sizes in ascending cluster order (issue 47); 4: contexts SE corrected for overlapping splits; 3: overlap seed includes the shape; contexts, figures
LIGHT = {"n_datasets": 1, "slow_max_points": 1500}
FULL = {"n_datasets": 10, "slow_max_points": None}


class ClusterBenchmarkConfig(dg.Config):
    """Size of the benchmark: None fields take the light values, or the full ones with COMPASS_HEAVY=1."""

    n_datasets: int | None = None  # data sets per archetype and shape (thesis: 10)
    slow_max_points: int | None = None  # skip spectral and HDBSCAN above this many points; 0: never
    keep_datasets: int = 1  # data sets per shape stored in clusters.datasets
    seed: int = 0

    def sizes(self) -> dict:
        base = FULL if settings.heavy() else LIGHT
        cap = base["slow_max_points"] if self.slow_max_points is None else (self.slow_max_points or None)
        return {"n_datasets": self.n_datasets or base["n_datasets"], "slow_max_points": cap}


@dg.asset(key=["clusters", "benchmark"], partitions_def=archetype_partitions, group_name="clusters",
          pool=settings.writer_pool(), code_version=CODE_VERSION)
def cluster_benchmark(context: dg.AssetExecutionContext, config: ClusterBenchmarkConfig,
                      warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Thesis §5.4, Tables 5.2-5.3 for one archetype: convex and `distort`ed data sets, K-Means, Ward,
    spectral (RBF), EM-GMM with the true k and HDBSCAN (min_samples = 5, non-noise points, p_noise); AMI
    and ARI per data set in clusters.scores, mean and standard error in clusters.benchmark, the first
    data sets themselves in clusters.datasets, and a figure of them. Per data set, the centre fit
    (loss, converged, restarts) in clusters.generation and every pair's realised overlap against the
    requested band in clusters.overlap (thesis generator, and calibrated tails for the convex draws)."""
    wh, spec = warehouse.get(), archetype(context.partition_key)
    sizes = config.sizes()
    run = run_benchmark(spec, sizes["n_datasets"], seed=config.seed, slow_max_points=sizes["slow_max_points"],
                        keep_datasets=config.keep_datasets)
    summary = summarize(run.scores)
    figure = save_figure(datasets_figure(run.datasets, spec.name), "clusters", spec.name)
    ami = summary[summary["metric"] == "ami"].pivot_table(index="shape", columns="algorithm", values="mean")
    flagged = run.overlaps.groupby("generator")["warning"].agg(["sum", "count"])
    for generator, (n_flagged, n_pairs) in flagged.iterrows():
        if n_flagged:
            context.log.warning(f"{spec.name}: {n_flagged} of {n_pairs} cluster pairs ({generator} generator) leave "
                                f"the requested overlap band [{spec.min_overlap}, {spec.max_overlap}] by more than "
                                f"the tolerance")
    return publish_many(
        context, wh, {"clusters.benchmark": summary, "clusters.scores": run.scores, "clusters.datasets": run.datasets,
                      "clusters.generation": run.generation, "clusters.overlap": run.overlaps},
        {"archetype": spec.name},
        metadata={"n_datasets": sizes["n_datasets"], "slow_max_points": str(sizes["slow_max_points"]),
                  "mean_ami": dg.MetadataValue.md(ami.reset_index().to_markdown(index=False, floatfmt=".3f")),
                  "pairs_outside_band": dg.MetadataValue.md(flagged.reset_index().to_markdown(index=False)),
                  "datasets": figure},
    )


SEGMENTATION_REPS = {"smoke": 1, "light": 2, "heavy": 20}


class SegmentationConfig(dg.Config):
    """Populations per setting: None takes 2 (light), 20 with COMPASS_HEAVY=1, 1 with COMPASS_SMOKE=1."""

    n_reps: int | None = None
    seed: int = 0


@dg.asset(key=["clusters", "segmentation"], group_name="clusters", pool=settings.writer_pool(),
          code_version=CODE_VERSION)
def segmentation_validation(context: dg.AssetExecutionContext, config: SegmentationConfig,
                            warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Issue 13 item 5: user populations with known segments (three user types, the PRISM imbalance) drawn
    from archetypes, segmented by the EC §8.1 rule (thresholds on C1 - C2) and by clustering; AMI / ARI
    of each method in clusters.segmentation, so a case study can choose its segmentation on evidence.

    A synthetic validation study (the embedded data hold no user coordinates: interactions.user_id and
    context_group are null in every row): the evidence for which clustering recovers known segments, the
    methods clusters/contexts then applies to real prompts."""
    n_reps = config.n_reps or SEGMENTATION_REPS[settings.synthetic_study_size()]
    table = segmentation_study(n_reps, seed=config.seed)
    best = (table[table["metric"] == "ami"].sort_values("mean", ascending=False)
            .groupby(["population", "orientation"], sort=True).head(1))
    return publish_many(context, warehouse.get(), {"clusters.segmentation": table},
                        metadata={"n_reps": n_reps,
                                  "best_by_ami": dg.MetadataValue.md(best.to_markdown(index=False, floatfmt=".3f"))})


CONTEXT_SIZES = {"smoke": {"ks": [4], "n_rounds": 2}, "light": {"ks": [2, 4, 8], "n_rounds": 3},
                 "heavy": {"ks": [2, 4, 8], "n_rounds": 20}}


class ContextConfig(dg.Config):
    """Query-segment study size: None fields take the light values (20 rounds with COMPASS_HEAVY=1, fewer with
    COMPASS_SMOKE=1)."""

    ks: list[int] | None = None  # numbers of segments to try
    n_rounds: int | None = None  # seeded training / held-out splits of the gold queries
    embedder: str = "wordllama"  # query text embedding (compass.embeddings): "wordllama" or "tfidf"
    seed: int = 0


@dg.asset(key=["clusters", "contexts"], deps=[RAW_KEYS["route_labels"]], partitions_def=route_dataset_partitions,
          group_name="clusters", pool=settings.writer_pool(), code_version=CODE_VERSION)
def query_contexts(context: dg.AssetExecutionContext, config: ContextConfig,
                   warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Issue 30 item 5: segments of real prompts (raw.route_labels gold queries, the router's embedding, K-Means /
    EM-GMM) as ML Compass contexts, kept only where they pay out of sample. clusters.context_study: per k, cost
    weight and method, the held-out utility of choosing the model per segment against the global choice and
    random segments of the same sizes (paired gains with standard errors over seeded splits; compass.clusters.
    contexts); clusters.query_contexts: each gold query's context at the k the study supports (one context, the
    global choice, where no segmentation beats both references by 2 SE)."""
    wh = warehouse.get()
    sizes = CONTEXT_SIZES[settings.synthetic_study_size()]
    labels = readers.route_labels(wh, context.partition_key)
    study = context_study(labels, tuple(config.ks or sizes["ks"]), config.n_rounds or sizes["n_rounds"], config.seed,
                          config.embedder)
    k = chosen_k(study)
    gold = labels[labels["label_kind"] == "gold"].reset_index(drop=True)
    contexts = assign_contexts(gold, k, config.seed, embedder=config.embedder).assign(dataset=context.partition_key,
                                                                                      k=k)
    wins = helps(study)
    return publish_many(context, wh, {"clusters.context_study": study, "clusters.query_contexts": contexts},
                        {"dataset": context.partition_key},
                        metadata={"k": k, "cells_beating_both_references": len(wins),
                                  "winning_cells": dg.MetadataValue.md(
                                      wins.to_markdown(index=False, floatfmt=".4f") if len(wins) else "none")})


FIGURE_SIZES = {"smoke": {"n_models": 1, "dims": (2, 10), "max_overlaps": (1e-3, 0.3), "n_datasets": 1},
                "light": {"n_models": 3, "dims": (2, 10, 30, 100), "max_overlaps": (1e-4, 1e-2, 0.1, 0.3), "n_datasets": 3},
                "heavy": {"n_models": 8, "dims": (2, 10, 30, 100), "n_datasets": 100,
                          "max_overlaps": (1e-7, 1e-5, 1e-3, 1e-2, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)}}


@dg.asset(key=["clusters", "figures"], group_name="clusters", pool=settings.writer_pool(), code_version=CODE_VERSION)
def thesis_figures(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Thesis Figs. 5.4 and 5.9-5.10 on synthetic data (compass.clusters.figures): the LDA and C2C overlap
    approximations against the exact overlap (clusters.overlap_approximation: Pearson r, relative errors), and Ward's
    AMI / ARI and the silhouette score against max_overlap per dimension, convex and distorted (clusters.difficulty).
    Light: seconds; the thesis' 100 data sets per setting with COMPASS_HEAVY=1."""
    size = FIGURE_SIZES[settings.synthetic_study_size()]
    approximation = approximation_summary(overlap_approximations(size["n_models"]))
    difficulty = difficulty_curve(size["dims"], size["max_overlaps"], size["n_datasets"])
    return publish_many(context, warehouse.get(), {"clusters.overlap_approximation": approximation,
                                                   "clusters.difficulty": difficulty},
                        metadata={"size": settings.synthetic_study_size(),
                                  "approximation": dg.MetadataValue.md(approximation.to_markdown(index=False,
                                                                                                 floatfmt=".3f"))})


clusters_assets = [cluster_benchmark, segmentation_validation, query_contexts, thesis_figures]
