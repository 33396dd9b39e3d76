"""Capability Frontier oracle assets, one partition per dataset (seed 002).

Lineage: datasets/records and datasets/prices -> oracle/single_models,
oracle/curve, oracle/posthoc (cheap, independent) and oracle/estimates +
oracle/frontier + oracle/summary (one `analyze` call, §3-4.4, Tables 1, 2, 6).
oracle/synthetic_validation reads no real data. Preparation (coverage, cost
basis, model sets) is `compass.oracle.prepare`.
"""

import dagster as dg
import pandas as pd

from assets.datasets import DATASET_PRICES, DATASET_RECORDS
from assets.partitions import dataset_partitions
from compass.oracle import prepare as op
from compass.oracle import validation
from compass.oracle.estimators import RECOMMENDED
from compass.oracle.headline import headline_consistent
from compass.oracle.naive import naive_curve
from compass.oracle.plots import bias_decay_plot, entropy_uplift_plot, frontier_plot
from compass.oracle.posthoc import posthoc_curve
from resources import readers, settings
from resources.publish import publish_many, save_figure
from resources.warehouse import WarehouseResource

CODE_VERSION = "oracle-5"  # 2: identified headlines (headline_flag), the PGM estimator, regimes in the validation;
# 3: cost_saving_flag and aiq_flag (the headline flag follows the cost saving and AIQ); 4: the range's 95 % interval
# by Clopper–Pearson bounds, headline_ci_flag (issue 47); 5: the PGM's EM once per prompt pattern (its estimates move
# <= 4.2e-6), the naive bootstrap from per-prompt terms (issue 45)
NAIVE_CHECK = "naive_oracle_at_least_best_single_model"
HEADLINE_CHECK = "headline_inside_identified_range_or_flagged"  # recomputed from the range ends (headline_consistent)
_ANALYSIS_KEYS = {name: dg.AssetKey(["oracle", name]) for name in ("estimates", "frontier", "summary")}
_deps = [DATASET_RECORDS, DATASET_PRICES]
_common = dict(partitions_def=dataset_partitions, group_name="oracle", code_version=CODE_VERSION,
               pool=settings.writer_pool())


def _where(context: dg.AssetExecutionContext) -> dict[str, str]:
    return {"dataset": context.partition_key}


@dg.asset(key=["oracle", "single_models"], deps=_deps, **_common)
def oracle_single_models(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Per-model accuracy, cost per query and reliability (§5 Metrics, eq. 24, Table 3)."""
    wh = warehouse.get()
    prep = readers.oracle_dataset(wh, context.partition_key)
    return publish_many(context, wh, {"oracle.single_models": op.single_models_table(prep)}, _where(context),
                        metadata=prep.meta)


@dg.asset(key=["oracle", "curve"], deps=_deps, **_common)
def oracle_curve(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Naive oracle O_biased(G′) for G′ = 1..G, exact over subsets (eq. 5, Figs. 2–3)."""
    wh = warehouse.get()
    prep = readers.oracle_dataset(wh, context.partition_key)
    return publish_many(context, wh, {"oracle.curve": op.per_set_table(prep, naive_curve)}, _where(context),
                        metadata=prep.meta)


@dg.asset(key=["oracle", "posthoc"], deps=_deps, **_common)
def oracle_posthoc(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Post-hoc k-shot oracle with a perfect free judge (§4.5, Tables 4–5)."""
    wh = warehouse.get()
    prep = readers.oracle_dataset(wh, context.partition_key)
    return publish_many(context, wh, {"oracle.posthoc": op.per_set_table(prep, posthoc_curve)}, _where(context),
                        metadata=prep.meta)


class OracleConfig(dg.Config):
    n_boot: int | None = None  # bootstrap draws; None: COMPASS_ORACLE_N_BOOT, else 50 (resources.settings)
    seed: int = 0


@dg.multi_asset(
    specs=[dg.AssetSpec(key, deps=_deps, group_name="oracle", code_version=CODE_VERSION,
                        partitions_def=dataset_partitions)
           for key in _ANALYSIS_KEYS.values()],
    check_specs=[dg.AssetCheckSpec(name, asset=_ANALYSIS_KEYS["summary"], blocking=True,
                                   partitions_def=dataset_partitions) for name in (NAIVE_CHECK, HEADLINE_CHECK)],
    pool=settings.writer_pool(),
)
def oracle_analysis(context: dg.AssetExecutionContext, config: OracleConfig, warehouse: WarehouseResource):
    """Every estimator (Table 6), the α-sweep frontiers (§4.4) and the headline numbers (Tables 1–2).

    The headline is a point only where the data identify one; otherwise
    `headline_flag` says why (range at G = 1, clipped, below_split_sample) and a warning is logged.
    """
    wh = warehouse.get()
    prep = readers.oracle_dataset(wh, context.partition_key)
    n_boot = op.validate_n_boot(config.n_boot if config.n_boot is not None else settings.oracle_n_boot())
    tables, reports = op.analysis_tables(prep, n_boot, config.seed)
    summary = tables["oracle.summary"]
    meta = {**prep.meta, "n_boot": n_boot, "bootstrapped_estimators": list(op.BOOT_ESTIMATORS),
            "recommended_estimator": RECOMMENDED}
    priced = [s for s in prep.sets if s.cost_known]
    if priced:
        ms = priced[-1]
        fig = frontier_plot(reports[ms.name], f"{prep.dataset} ({ms.name} models, {prep.cost_basis})")
        meta["frontier_figure"] = save_figure(fig, "oracle", f"frontier_{prep.dataset}")
    for name, key in _ANALYSIS_KEYS.items():
        yield publish_many(context, wh, {f"oracle.{name}": tables[f"oracle.{name}"]}, _where(context),
                           metadata=meta if name == "summary" else prep.meta, asset_key=key)
    for row in summary[summary["headline_flag"] != ""].itertuples():
        context.log.warning(f"{prep.dataset} ({row.model_set}): headline {row.headline_flag}: {row.headline_note}")
    for row in summary[summary["headline_ci_flag"] != ""].itertuples():
        context.log.warning(f"{prep.dataset} ({row.model_set}): {row.headline_ci_flag}: no cell tells the models "
                            f"apart; 95 % interval [{row.headline_ci_lo:.4f}, {row.headline_ci_hi:.4f}] from the "
                            "prompt count alone")
    slack = summary["naive_quality"] - summary["sota_quality"]
    yield dg.AssetCheckResult(
        asset_key=_ANALYSIS_KEYS["summary"], check_name=NAIVE_CHECK, passed=bool((slack >= -1e-12).all()),
        metadata={"min_naive_minus_sota": float(slack.min())},
    )
    est = tables["oracle.estimates"]
    split = est[est["estimator"] == "split_sample"].set_index("model_set")["quality"]
    ok = headline_consistent(summary["oracle_estimate"], summary["oracle_quality"], summary["headline_flag"],
                             summary["sota_quality"], summary["naive_quality"],
                             summary["model_set"].map(split).astype(float))
    yield dg.AssetCheckResult(
        asset_key=_ANALYSIS_KEYS["summary"], check_name=HEADLINE_CHECK, passed=bool(ok.all()),
        metadata={"flags": {str(r.model_set): str(r.headline_flag) for r in summary.itertuples()},
                  "inconsistent_model_sets": [str(m) for m in summary.loc[~ok, "model_set"]]},
    )


class SyntheticConfig(dg.Config):
    heavy: bool | None = None  # None: the grid of resources.settings.synthetic_study_size()
    n_prompts: int | None = None  # override the grid's prompt count (tests)
    n_reps: int | None = None
    entropy_prompts: int = 1000


@dg.asset(key=["oracle", "synthetic_validation"], group_name="oracle", code_version=CODE_VERSION,
          pool=settings.writer_pool())
def oracle_synthetic_validation(context: dg.AssetExecutionContext, config: SyntheticConfig,
                                warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Synthetic PGM validation of the estimators (§4.3.2, App. G), bias decay (Fig. 2, App. A), entropy uplift (Fig. 5).

    All numbers are synthetic. Light grid by default, heavy with COMPASS_HEAVY=1, smoke with COMPASS_SMOKE=1.
    """
    size = settings.synthetic_study_size() if config.heavy is None else ("heavy" if config.heavy else "light")
    grid = dict(validation.GRIDS[size])
    grid.update({k: v for k, v in (("n_prompts", config.n_prompts), ("n_reps", config.n_reps)) if v is not None})
    study = validation.validation_study(**grid)
    try:
        chosen = validation.recommend(study)
    except ValueError as exc:
        chosen = "none"
        context.log.warning(str(exc))
    study = study.assign(recommended=study["estimator"] == chosen)
    decay = validation.bias_decay_study()
    uplift = validation.entropy_uplift_study(n_prompts=config.entropy_prompts)
    rec_rows = study[(study["estimator"] == RECOMMENDED) & (study["generations"] >= 2)]
    meta = {
        "grid": size, "selected_estimator": chosen, "pipeline_estimator": RECOMMENDED,
        "selection_agrees": chosen == RECOMMENDED, **validation.recommendation_evidence(study, RECOMMENDED),
        **validation.g1_evidence(study), "recommended_below_split_share": float(rec_rows["below_split_share"].mean()),
        "bias_decay_lambda_mean": float(decay["lam"].mean()),
        "bias_decay_figure": save_figure(bias_decay_plot(decay), "oracle", "bias_decay"),
        "entropy_uplift_figure": save_figure(entropy_uplift_plot(uplift), "oracle", "entropy_uplift"),
    }
    tables: dict[str, pd.DataFrame] = {"oracle.synthetic_validation": study, "oracle.bias_decay": decay,
                                       "oracle.entropy_uplift": uplift}
    return publish_many(context, warehouse.get(), tables, metadata=meta)


oracle_assets = [oracle_single_models, oracle_curve, oracle_posthoc, oracle_analysis, oracle_synthetic_validation]
