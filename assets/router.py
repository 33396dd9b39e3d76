"""Meta-router assets (seed 003), one partition per routing dataset of raw.route_labels.

Lineage: raw/route_labels -> router/overlap (positivity diagnostic), router/evaluation (the Monte Carlo protocol
of §4.1 on the dataset) and router/deployment (the served router: embedder and forest as arrays, read by
`compass route`); raw/model_costs -> datasets/model_costs (the prices of the models the per-query data names)
-> router/prices (the pair's prices only, so a price change elsewhere in the catalog leaves the dataset fresh)
-> router/policies (App. A.1's budgets on the evaluation's held-out queries).
router/synthetic_study runs the spec's generator with known truth (synthetic; no real data), and
router/synthetic_ablations the paper's ablations (i), (iii), (iv) on it, paired with the main configuration;
router/multi_synthetic_study the N-model extension (App. A.2) on its own synthetic generator.

Light by default (few Monte Carlo rounds, small forests); the paper's design (more rounds, 500-tree forests,
three gold sizes) with COMPASS_HEAVY=1 or the run config.
"""

import dagster as dg
import pandas as pd

from assets.datasets import PER_QUERY_MODEL_COSTS
from assets.partitions import route_dataset_partitions
from assets.sources import RAW_KEYS
from compass.router.ablations import ABLATIONS, run_ablations
from compass.router.evaluation import calibration, paired_comparisons
from compass.router.learners import LearnerSpec
from compass.router.multi_study import evaluate_multi_synthetic
from compass.router.plots import gain_curves, overlap_histogram
from compass.router.study import (
    StudyDesign,
    evaluate,
    evaluate_synthetic,
    fit_deployment,
    overlap,
    policies,
    query_costs,
    synthetic_comparisons,
    test_predictions,
)
from resources import readers, settings
from resources.publish import publish_many, save_figure
from resources.warehouse import WarehouseResource

CODE_VERSION = "router-6"  # 6: queries embedded by WordLlama, not TF-IDF/LSA (issue 46); 2: propensity forests use R's classification mtry ⌊√d⌋; 3: κ-free overlap rule; 4: resampling-corrected paired intervals; 5: RouteLLM SW weights γ^(1 + S_i/S_max)
LIGHT = {"n_gold": [100], "mc_rounds": 2, "n_estimators": 50}
HEAVY = {"n_gold": [50, 100, 200], "mc_rounds": 50, "n_estimators": 500}
_common = dict(partitions_def=route_dataset_partitions, group_name="router", code_version=CODE_VERSION,
               pool=settings.writer_pool())
_labels = [RAW_KEYS["route_labels"]]
ROUTER_EVALUATION, ROUTER_PRICES = dg.AssetKey(["router", "evaluation"]), dg.AssetKey(["router", "prices"])


class RouterStudyConfig(dg.Config):
    """None fields take the light values, or the heavy ones with COMPASS_HEAVY=1."""

    n_gold: list[int] | None = None  # gold training sizes (paper: 100, 500, 1000 of 5,000; ours are capped by the data)
    mc_rounds: int | None = None  # Monte Carlo re-splits (paper: 200)
    n_estimators: int | None = None  # trees per forest (R randomForest default: 500)
    learner: str = "random_forest"  # or "lightgbm" (the paper's XGBoost ablation)
    d: int = 50  # embedding dimension (ablation: 100)
    embedder: str = "wordllama"  # query text embedding (compass.embeddings): "wordllama", or "tfidf" (TF-IDF + SVD)
    normalization: str = "variance"  # magnitude, wasserstein, none (ablation iii)
    seed: int = 0

    def design(self) -> StudyDesign:
        base = HEAVY if settings.heavy() else LIGHT
        learner = LearnerSpec(self.learner, self.n_estimators or base["n_estimators"], seed=self.seed)
        return StudyDesign(n_gold=tuple(self.n_gold or base["n_gold"]), mc_rounds=self.mc_rounds or base["mc_rounds"],
                           d=self.d, learner=learner, normalization=self.normalization, seed=self.seed,
                           embedder=self.embedder)


def _where(context: dg.AssetExecutionContext) -> dict[str, str]:
    return {"dataset": context.partition_key}


@dg.asset(key=["router", "overlap"], deps=_labels, **_common)
def router_overlap(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Positivity check (spec §5.3): Pr(gold | query) out of sample for every labelled query, its histogram per
    label kind, the share inside the overlap region and the gold-vs-preference AUC (router.overlap)."""
    wh = warehouse.get()
    table = overlap(readers.route_labels(wh, context.partition_key))
    figure = save_figure(overlap_histogram(table, context.partition_key), "router", f"{context.partition_key}_overlap")
    shares = table.groupby("label_kind")["share_inside"].first()
    return publish_many(context, wh, {"router.overlap": table}, _where(context),
                        metadata={"auc": float(table["auc"].iloc[0]), "preference_inside": float(shares["preference"]),
                                  "histogram": figure})


@dg.asset(key=ROUTER_EVALUATION, deps=_labels, **_common)
def router_evaluation(context: dg.AssetExecutionContext, config: RouterStudyConfig,
                      warehouse: WarehouseResource) -> dg.MaterializeResult:
    """§4.1 on real labels: Monte Carlo re-splits of the gold rows into test and n training rows, every router of
    §2.8 plus the overlap-truncated meta-router of §2.11, efficiency gain against primary-model usage
    (router.evaluation); the last round's held-out predictions at the largest n (router.test_predictions); each
    round's mean gain over the usage grid (router.evaluation_rounds) and every router against random, gold-only and
    preference-only routing paired across rounds with 95 % t-intervals (router.comparisons); ψ̂ binned against
    the realized gold gain on the last round's held-out queries, with Spearman's ρ (router.calibration)."""
    wh, design = warehouse.get(), config.design()
    evaluation, last, rounds = evaluate(readers.route_labels(wh, context.partition_key), design,
                                        progress=lambda i, n: context.log.info(f"round step {i}/{n}"))
    figure = save_figure(gain_curves(evaluation, context.partition_key), "router", context.partition_key)
    mean = evaluation.groupby(["router", "n_gold"])["expected_gain"].mean().unstack()
    r_test = last["test"]["outcome"].to_numpy(float)
    calibrations = pd.concat([calibration(psi, r_test).assign(router=name) for name, psi in last["psi"].items()],
                             ignore_index=True)
    return publish_many(context, wh, {"router.evaluation": evaluation,
                                      "router.test_predictions": test_predictions(last),
                                      "router.evaluation_rounds": rounds,
                                      "router.comparisons": paired_comparisons(rounds),
                                      "router.calibration": calibrations}, _where(context),
                        metadata={"mc_rounds": design.mc_rounds, "n_estimators": design.learner.n_estimators,
                                  "mean_gain_over_pmur": dg.MetadataValue.md(mean.to_markdown(floatfmt=".4f")),
                                  "gain_curves": figure})


@dg.asset(key=ROUTER_PRICES, deps=[RAW_KEYS["route_labels"], PER_QUERY_MODEL_COSTS], **_common)
def router_prices(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The cheapest input and output price of the dataset's M_p and M_a (datasets.model_costs), empty when either is
    unpriced (router.prices): the policies' only price input, so other models' price moves leave them fresh."""
    wh = warehouse.get()
    return publish_many(context, wh, {"router.prices": readers.pair_price_rows(
        wh, readers.route_labels(wh, context.partition_key))}, _where(context))


@dg.asset(key=["router", "policies"], deps=[ROUTER_EVALUATION, ROUTER_PRICES], **_common)
def router_policies(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """App. A.1 on the evaluation's held-out queries: for budgets of 10-90 % of queries to M_p, the threshold w of
    eq. 4 with real per-query dollar costs (prices x token counts) and with the paper's normalized costs, the
    realized share, the gold gain bought and the saving against always-M_p (router.policies)."""
    wh = warehouse.get()
    psi, test = readers.router_test_predictions(wh, context.partition_key)
    prices = readers.router_pair_prices(wh, context.partition_key)
    cost_p, cost_a = query_costs(test, *(prices or ((1.0, 1.0), (0.0, 0.0))))
    table = policies(psi, test, cost_p, cost_a)
    if prices is None:  # no catalog price for the pair: only the paper's normalized rule is meaningful
        table = table[table["cost_basis"] == "normalized"]
    return publish_many(context, wh, {"router.policies": table}, _where(context),
                        metadata={"priced": prices is not None})


# issue 46 second review: ψ̂ in gold units; third: paired fold SE; fourth: Nadeau-Bengio-corrected paired SE and
# no member served over a simpler one with a higher mean
DEPLOYMENT_CODE_VERSION = f"{CODE_VERSION}-meta-cv-gain-calibrated-paired-se-nb-pareto"


@dg.asset(key=["router", "deployment"], deps=_labels, **{**_common, "code_version": DEPLOYMENT_CODE_VERSION})
def router_deployment(context: dg.AssetExecutionContext, config: RouterStudyConfig,
                      warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The router `compass route` serves: the meta-router whose CATE stage is chosen by the held-out gold gain of
    routing by each member's out-of-fold ψ̂ (`meta_cv`: preference-only, gold-only, mean-shift, DR or R; issue 46; the
    rule is router.deployments.cv_criterion, its scores cv_scores) fitted on every gold and preference row, with
    its embedder as arrays (router.embedders: term, idf, loadings) and its forest as node arrays (router.forests),
    what it was fitted on (router.deployments), and the cross-fitted held-out ψ̂ of every gold query on which
    `compass route` chooses App. A.1's threshold w (router.deployment_holdout). No pickle: a gateway can load these tables as they are."""
    wh, design = warehouse.get(), config.design()
    embedder, nodes, facts, holdout = fit_deployment(readers.route_labels(wh, context.partition_key), design)
    return publish_many(context, wh, {"router.deployments": pd.DataFrame([facts]),
                                      "router.embedders": embedder.to_frame(), "router.forests": nodes,
                                      "router.deployment_holdout": holdout},
                        _where(context), metadata={k: v for k, v in facts.items() if k != "scale_c"}, history=False)


# Sizes of the synthetic study (spec §4) per resources.settings.synthetic_study_size(). Heavy is the paper's regime
# (§4.1: N = 5,000, D = 50, 500 test queries, 200 rounds, 500-tree forests; gold sizes from 50 to 1,000, so κ =
# n/(n + m) from 0.011) and costs days of CPU. Light is a smoke version of it for `make run` (13-15 s CPU: 4 rounds
# give 95 % paired intervals of about ±0.01-0.05, enough to separate preference-only from gold-only in preset B,
# not the meta-routers from gold-only; scripts/router_headline.py prints the informative medium-size run).
SYNTHETIC_SIZES = {
    "smoke": {"n_gold": [100], "mc_rounds": 1, "n_queries": 900, "dim": 10, "n_estimators": 10},
    "light": {"n_gold": [50, 200], "mc_rounds": 4, "n_queries": 1500, "dim": 10, "n_estimators": 25},
    "heavy": {"n_gold": [50, 100, 200, 500, 1000], "mc_rounds": 200, "n_queries": 5000, "dim": 50,
              "n_estimators": 500},
}
# The synthetic study's own version, so changing it leaves the real-data router assets fresh.
# 2: paired comparisons; light 4 rounds, n 50/200; heavy n 50-1,000. 3: the rounds say what meta_cv chose.
# 4: meta_cv refits the scale constant per fold and calibrates its ψ̂ (issue 46 second review)
# 5: cv_difference_se column; meta_cv's corrected paired one-SE rule (issue 46 third and fourth reviews)
SYNTHETIC_CODE_VERSION = "router-5-synthetic-5"  # text-free: the query embedder (router-6) does not touch it


class SyntheticRouterConfig(dg.Config):
    """The spec §4 generator: None fields take the sizes of SYNTHETIC_SIZES (light unless COMPASS_HEAVY=1 or
    COMPASS_SMOKE=1)."""

    presets: list[str] = ["A", "B"]
    n_gold: list[int] | None = None  # light: 50, 200; heavy: 50, 100, 200, 500, 1000 (the paper's 100-1,000 and 50)
    mc_rounds: int | None = None  # light 4, heavy 200 (the paper)
    n_queries: int | None = None  # N: light 1,500, heavy 5,000
    dim: int | None = None  # D: light 10, heavy 50
    n_estimators: int | None = None  # light 25, heavy 500
    learner: str = "random_forest"  # ablation (i): "lightgbm" for the paper's XGBoost
    normalization: str = "variance"  # ablation (iii): "none"
    seed: int = 0

    def sizes(self) -> dict:
        base = SYNTHETIC_SIZES[settings.synthetic_study_size()]
        return {k: getattr(self, k) or default for k, default in base.items()}


@dg.asset(key=["router", "synthetic_study"], group_name="router", code_version=SYNTHETIC_CODE_VERSION,
          pool=settings.writer_pool())
def router_synthetic_study(context: dg.AssetExecutionContext, config: SyntheticRouterConfig,
                           warehouse: WarehouseResource) -> dg.MaterializeResult:
    """SYNTHETIC: every router including the oracle benchmark on the spec's generator with known ψ (presets A
    "complex η" and B "weak preferences"), efficiency gain per gold size (router.synthetic_evaluation), each round's
    mean gain over the usage grid (router.synthetic_rounds) and every router against random, gold-only and
    preference-only routing paired across rounds with 95 % t-intervals (router.synthetic_comparisons): the paper's
    headline (Fig. 1) cell by cell."""
    size = config.sizes()
    learner = LearnerSpec(config.learner, n_estimators=size["n_estimators"], seed=config.seed)
    table, rounds = evaluate_synthetic(tuple(config.presets), tuple(size["n_gold"]), size["mc_rounds"], learner,
                                       N=size["n_queries"], D=size["dim"], normalization=config.normalization,
                                       seed=config.seed,
                                       progress=lambda i, n: context.log.info(f"synthetic step {i}/{n}"))
    mean = table.groupby(["preset", "n_gold", "router"])["expected_gain"].mean().unstack()
    return publish_many(context, warehouse.get(), {"router.synthetic_evaluation": table,
                                                   "router.synthetic_rounds": rounds,
                                                   "router.synthetic_comparisons": synthetic_comparisons(rounds)},
                        metadata={"size": settings.synthetic_study_size(), "mc_rounds": size["mc_rounds"],
                                  "mean_gain_over_pmur": dg.MetadataValue.md(mean.to_markdown(floatfmt=".4f"))})


# The ablations' sizes: heavy is the paper's (§3.3 runs them at its main gold size; ours n = 100, κ = 0.022, with
# §4.1's N, D, rounds and forests); light a few seconds of CPU for `make run` whose intervals are wide.
# The CV-chosen meta-router refits five candidates on five folds (about 10x the DR meta-router's CPU): heavy only.
ABLATION_ROUTERS = ("gold_only", "preference_only", "mean_shift", "meta_dr")
# Heavy adds pooled, the R-learner (the paper's ablation (i) is about it) and the CV-chosen meta-router.
HEAVY_ABLATION_ROUTERS = ("pooled", *ABLATION_ROUTERS, "meta_r", "meta_cv")
ABLATION_SIZES = {
    "smoke": {"presets": ["B"], "n_gold": [100], "mc_rounds": 2, "n_queries": 900, "dim": 10, "n_estimators": 5,
              "routers": ABLATION_ROUTERS},
    "light": {"presets": ["A", "B"], "n_gold": [100], "mc_rounds": 3, "n_queries": 900, "dim": 10, "n_estimators": 10,
              "routers": ABLATION_ROUTERS},
    "heavy": {"presets": ["A", "B"], "n_gold": [100], "mc_rounds": 200, "n_queries": 5000, "dim": 50, "n_estimators": 500,
              "routers": HEAVY_ABLATION_ROUTERS},
}


class SyntheticAblationConfig(dg.Config):
    """The paper's ablations on the spec §4 generator: None fields take ABLATION_SIZES (light unless COMPASS_HEAVY=1
    or COMPASS_SMOKE=1)."""

    presets: list[str] | None = None
    ablations: list[str] = list(ABLATIONS)
    n_gold: list[int] | None = None
    mc_rounds: int | None = None
    n_queries: int | None = None
    dim: int | None = None
    n_estimators: int | None = None
    routers: list[str] | None = None
    seed: int = 0

    def sizes(self) -> dict:
        base = ABLATION_SIZES[settings.synthetic_study_size()]
        return {k: getattr(self, k) or default for k, default in base.items()}


# synthetic_ablations 4: the rounds gain cv_difference_se; meta_cv's corrected paired one-SE rule
@dg.asset(key=["router", "synthetic_ablations"], group_name="router", code_version="router-synthetic-ablations-4",
          pool=settings.writer_pool())
def router_synthetic_ablations(context: dg.AssetExecutionContext, config: SyntheticAblationConfig,
                               warehouse: WarehouseResource) -> dg.MaterializeResult:
    """SYNTHETIC: the paper's ablations (§4.1; `compass.router.ablations`: (i) boosted learner, (iii) no normalization
    in a world whose gold labels are in rubric points, (iv) twice the kept dimension of the same embedding) of the
    gold-only, preference-only, mean-shift, DR (and, heavy, CV-chosen) meta-routers, each on the main
    configuration's draws: every router against random, gold-only and preference-only per configuration
    (router.synthetic_ablation_comparisons) and the ablated router minus the main one, paired over rounds
    (router.synthetic_ablations)."""
    size = config.sizes()
    rounds, comparisons, differences = run_ablations(
        tuple(size["presets"]), tuple(size["n_gold"]), size["mc_rounds"], size["n_estimators"], size["n_queries"],
        size["dim"], tuple(size["routers"]), tuple(config.ablations), seed=config.seed,
        progress=lambda tag, _: context.log.info(f"synthetic ablations: {tag} done"))
    shown = differences[differences["router"].isin(["meta_dr", "meta_cv"])]
    return publish_many(context, warehouse.get(), {"router.synthetic_ablations": differences,
                                                   "router.synthetic_ablation_comparisons": comparisons,
                                                   "router.synthetic_ablation_rounds": rounds},
                        metadata={"size": settings.synthetic_study_size(), "mc_rounds": size["mc_rounds"],
                                  "ablated_minus_main": dg.MetadataValue.md(shown[[
                                      "ablation", "preset", "router", "mean_difference", "lo", "hi"]].to_markdown(
                                      index=False, floatfmt="+.3f"))})


# The N-model study's sizes (App. A.2 evaluates nothing; heavy is docs/results/router.md's design with the
# synthetic study's 500-tree forests and 50 rounds); light about 3 s of CPU for `make run`.
MULTI_SIZES = {
    "smoke": {"n_models": [3], "n_gold": [100], "mc_rounds": 2, "n_pref": 400, "n_estimators": 5},
    "light": {"n_models": [3], "n_gold": [300], "mc_rounds": 3, "n_pref": 1000, "n_estimators": 10},
    "heavy": {"n_models": [3, 4], "n_gold": [100, 300, 1000], "mc_rounds": 50, "n_pref": 3000, "n_estimators": 500},
}


class MultiSyntheticConfig(dg.Config):
    """The N-model generator (`compass.router.synthetic.make_multi_data`): None fields take MULTI_SIZES."""

    n_models: list[int] | None = None
    n_gold: list[int] | None = None
    mc_rounds: int | None = None
    n_pref: int | None = None
    n_estimators: int | None = None
    seed: int = 0

    def sizes(self) -> dict:
        base = MULTI_SIZES[settings.synthetic_study_size()]
        return {k: getattr(self, k) or default for k, default in base.items()}


@dg.asset(key=["router", "multi_synthetic_study"], group_name="router", code_version="router-multi-synthetic-1",
          pool=settings.writer_pool())
def router_multi_synthetic_study(context: dg.AssetExecutionContext, config: MultiSyntheticConfig,
                                 warehouse: WarehouseResource) -> dg.MaterializeResult:
    """SYNTHETIC: the N-model meta-router (App. A.2, `compass.router.multi`) against gold-only, preference-only,
    pooled, the hindsight best single model and the per-query ceiling: mean true quality of the chosen models ± its
    Monte Carlo SE (router.multi_synthetic_evaluation) and every learned router paired across rounds against
    gold-only and the best non-debiasing router (router.multi_synthetic_comparisons)."""
    size = config.sizes()
    result = evaluate_multi_synthetic(tuple(size["n_models"]), tuple(size["n_gold"]), size["mc_rounds"],
                                      LearnerSpec(n_estimators=size["n_estimators"], seed=config.seed),
                                      n_pref=size["n_pref"], seed=config.seed)
    wide = result.table.pivot_table(index=["n_models", "n_gold"], columns="policy", values="quality")
    return publish_many(context, warehouse.get(), {"router.multi_synthetic_evaluation": result.table,
                                                   "router.multi_synthetic_comparisons": result.comparisons},
                        metadata={"size": settings.synthetic_study_size(), "mc_rounds": size["mc_rounds"],
                                  "mean_quality": dg.MetadataValue.md(wide.to_markdown(floatfmt=".3f"))})


router_assets = [router_overlap, router_evaluation, router_prices, router_policies, router_deployment,
                 router_synthetic_study, router_synthetic_ablations, router_multi_synthetic_study]
