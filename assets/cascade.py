"""LLM-cascade assets, one partition per dataset (Zellinger thesis, seed 001, Chs. 2-4).

Lineage (all but auc read their dataset's records from datasets/records, as (query x model) matrices,
`compass.cascades.wide`; the science is `compass.cascades.study`):

    calibration -> marginals -> copulas -> curves -> auc          (Ch. 2, Tables 2.2-2.8)
                               copulas -> protocols               (Tables 2.7, 2.8 under each protocol variant)
    economics, two_model_cascades, failfast (real records)         (Chs. 3, 4)
    failfast_synthetic (unpartitioned, the documented generator)   (Ch. 4, SYNTHETIC)

Each asset recomputes the (cheap, deterministic) calibration from the records
instead of reading a derived table back, so it sees exactly the rows its parent
saw. copulas rebuilds the EM-fitted marginals from cascade.marginals; curves
fits its own per-chain Markov-copula models. A dataset whose records carry no
confidence is skipped with metadata `skipped: no confidence signal`.

Study size: `CascadeStudyConfig.study` (run config), default light, heavy with COMPASS_HEAVY=1.
"""

import dagster as dg
import numpy as np

from assets.datasets import DATASET_RECORDS
from assets.partitions import dataset_partitions
from compass.cascades import protocols as cp
from compass.cascades import study as cs
from compass.cascades.marginals import fit_marginals, marginal_gof_table, marginal_params_frame
from compass.cascades.plots import curves_plot, marginals_plot, optimal_map_plot, tau_heatmap, two_model_cascades_plot
from compass.cascades.wide import WideRecords
from resources import readers, settings
from resources.publish import publish_many, save_figure
from resources.warehouse import Warehouse, WarehouseResource

CODE_VERSION = "cascade-6"  # 2: Table 2.8 without the calibration leak, Table 2.4 on test, markov_error, Ch. 3 pairs;
# 3: SQUAREM-accelerated EM (marginal parameters move within the old EM's stopping tolerance);
# 4: smooth-quantile table nodes stop one Newton step earlier (RT curves move <= 3e-15 relative, L-BFGS-B variants more)
# 5: EM sums each model over its own points (fits independent of the batch's padding, move at rounding level x the
#    EM tolerance); markov_error on the test split too (column split) with calibration_gap_points; tuned_rewards
#    over the latency-price grid with big_alone_reward; the CER figure
# 6: the marginal EM on MARGINAL_SAMPLE interior points, the goodness of fit on GOF_SAMPLE values (marginal_gof.n_fit),
#    the Markov model's pair copulas on the Table 2.4 sample (issue 45)
# The protocols asset fits with the study's code (calibration, marginals, copulas): a change there (CODE_VERSION)
# must make it stale too. protocols-2: on by default (light: the authors' protocol), Table 2.8 too, 1/40.
PROTOCOLS_VERSION = f"{CODE_VERSION}+protocols-2"
SKIPPED = "no confidence signal"
ECE_CHECK = "ece_within_unit_interval"
CURVE_CHECK = "error_in_unit_interval_cost_nonnegative"
_common = dict(partitions_def=dataset_partitions, group_name="cascade", code_version=CODE_VERSION,
               pool=settings.writer_pool())


class CascadeStudyConfig(dg.Config):
    """Size of the Chapter 2 study (`compass.cascades.study.StudySettings`)."""

    study: str | None = None  # light | heavy; None: heavy when COMPASS_HEAVY=1 (resources.settings), else light
    # Table 2.7 protocol variants for cascade/protocols: 'all', 'ours', 'authors' or labels such as
    # 'grid=authors_code,costs=model_mean,rt=lbfgsb' (compass.cascades.protocols); None: the study's (heavy: all)
    protocols: list[str] | None = None

    def settings(self) -> cs.StudySettings:
        name = self.study or ("heavy" if settings.heavy() else "light")
        if name not in cs.STUDIES:
            raise ValueError(f"study must be one of {sorted(cs.STUDIES)}, got {name!r}")
        return cs.STUDIES[name]

    def protocol_set(self) -> list[cp.Protocol]:
        return cp.protocols_named(list(self.settings().protocols if self.protocols is None else self.protocols))


def _skip(context: dg.AssetExecutionContext, reason: str = SKIPPED) -> dg.MaterializeResult:
    context.log.info(f"{context.partition_key}: skipped ({reason})")
    return dg.MaterializeResult(metadata={"skipped": reason}, data_version=dg.DataVersion(f"skipped:{reason}"))


def _where(context: dg.AssetExecutionContext) -> dict[str, str]:
    return {"dataset": context.partition_key}


def _with_checks(result: dg.MaterializeResult, *checks: dg.AssetCheckResult) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata=result.metadata, data_version=result.data_version, check_results=list(checks))


def _skip_checked(context: dg.AssetExecutionContext, reason: str = SKIPPED) -> dg.MaterializeResult:
    return _with_checks(_skip(context, reason), dg.AssetCheckResult(passed=True, metadata={"skipped": reason}))


def _records_with_test(context: dg.AssetExecutionContext, warehouse: WarehouseResource
                       ) -> tuple[Warehouse, WideRecords | None, str]:
    """The warehouse and the partition's cascade records, or None and why the test-curve assets skip it."""
    wh = warehouse.get()
    records = readers.cascade_records(wh, context.partition_key)
    if records is None:
        return wh, None, SKIPPED
    if not cs.has_test(records):
        return wh, None, "no test split: calibration, marginals and copulas only, no test curves"
    return wh, records, ""


@dg.asset(key=["cascade", "calibration"], deps=[DATASET_RECORDS],
          check_specs=[dg.AssetCheckSpec(ECE_CHECK, asset=["cascade", "calibration"], blocking=True,
                                         partitions_def=dataset_partitions)], **_common)
def cascade_calibration(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Logistic calibration of transformed log-probabilities and its ECE (eqs. 2.16-2.17, Table 2.2)."""
    wh = warehouse.get()
    records = readers.cascade_records(wh, context.partition_key)
    if records is None:
        return _skip_checked(context)
    table = cs.calibration_table(records, context.partition_key)
    eces = table[["ece", "ece_no_transform"]].to_numpy()
    ok = bool(np.all((eces >= 0) & (eces <= 1)))
    meta = {"mean_ece": float(table["ece"].mean()), "mean_ece_no_transform": float(table["ece_no_transform"].mean()),
            "ece_split": str(table["ece_split"].iloc[0]), "n_models": len(table)}
    result = publish_many(context, wh, {"cascade.calibration": table}, _where(context), meta)
    return _with_checks(result, dg.AssetCheckResult(passed=ok, metadata={"max_ece": float(np.max(eces))}))


@dg.asset(key=["cascade", "marginals"], deps=[DATASET_RECORDS, dg.AssetKey(["cascade", "calibration"])], **_common)
def cascade_marginals(context: dg.AssetExecutionContext, config: CascadeStudyConfig,
                      warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Mixed-beta marginals fitted on train (eq. 2.7) and their sqrt(CvM) fit on test, plain and refit (Tables 2.5-2.6)."""
    wh = warehouse.get()
    dataset = context.partition_key
    records = readers.cascade_records(wh, dataset)
    if records is None:
        return _skip(context)
    study = config.settings()
    cal, _ = cs.calibrated_records(records, dataset)
    marginals = fit_marginals(cal)
    params = marginal_params_frame(marginals)
    gof_split = "test" if cs.has_test(records) else "train"
    gof = marginal_gof_table(cal, marginals, n_boot=study.gof_boot, split=gof_split)
    plain = gof[~gof["refit"]]
    meta = {"gof_split": gof_split, "gof_boot": study.gof_boot, "mean_sqrt_cvm": float(plain["sqrt_cvm"].mean()),
            "rejected_at_5pct": int((plain["p_value"] < 0.05).sum()),
            "figure": save_figure(marginals_plot(cal, marginals, gof_split, dataset), "cascades", f"marginals_{dataset}")}
    return publish_many(context, wh, {"cascade.marginals": params, "cascade.marginal_gof": gof}, _where(context), meta)


@dg.asset(key=["cascade", "copulas"], deps=[DATASET_RECORDS, dg.AssetKey(["cascade", "marginals"])], **_common)
def cascade_copulas(context: dg.AssetExecutionContext, config: CascadeStudyConfig,
                    warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Per chain pair: the thesis' Gumbel (tau inversion) and five ML families, AIC and Kendall CvM (Table 2.4);
    the Markov test (Table 2.3); Kendall tau of every pair (heatmap). Fitted on train; the copula goodness of fit
    is tested on the test split (Table 2.4, as the thesis runs it), with 200 bootstrap draws in the heavy study."""
    wh = warehouse.get()
    dataset = context.partition_key
    records = readers.cascade_records(wh, dataset)
    if records is None:
        return _skip(context)
    study = config.settings()
    cal, _ = cs.calibrated_records(records, dataset)
    marginals = readers.cascade_marginals(wh, dataset, list(cal.models))
    tables = cs.copula_tables(records, cal, marginals, study)
    copulas, taus = tables["cascade.copulas"], tables["cascade.tau"]
    thesis = copulas[copulas["family"] == "gumbel_tau"]
    meta = {"copula_boot": study.copula_boot, "n_pairs": int(len(thesis)),
            "gumbel_mean_cvm": float(thesis["cvm"].mean()), "gumbel_rejected_at_5pct": int((thesis["p_value"] < 0.05).sum()),
            "selected_families": copulas.loc[copulas["selected"], "family"].value_counts().to_dict(),
            "tau_figure": save_figure(tau_heatmap(taus, dataset), "cascades", f"tau_{dataset}")}
    return publish_many(context, wh, tables, _where(context), meta)


@dg.asset(key=["cascade", "curves"], deps=[DATASET_RECORDS, dg.AssetKey(["cascade", "copulas"])],
          check_specs=[dg.AssetCheckSpec(CURVE_CHECK, asset=["cascade", "curves"], blocking=True,
                                         partitions_def=dataset_partitions)], **_common)
def cascade_curves(context: dg.AssetExecutionContext, config: CascadeStudyConfig,
                   warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Test error-cost curves of RT (Gumbel and AIC copula), grid search and BO thresholds (Sec. 2.4)."""
    wh, records, why = _records_with_test(context, warehouse)
    if records is None:
        return _skip_checked(context, why)
    dataset = context.partition_key
    study = config.settings()
    chains = cs.chains_for(records)
    cascades = cs.study_cascades(chains, study)
    cal, _ = cs.calibrated_records(records, dataset)
    curves, extra = cs.cascade_curves(records, cal, dataset, chains, cascades, study)
    markov = cs.markov_error_table(cal, tuple(max(chains.values(), key=len)))
    extra["markov_gap_points_by_k"] = markov.groupby("k")["accuracy_gap_points"].mean().round(2).to_dict()
    ok = bool(curves["error"].between(0, 1).all() and (curves["cost"] >= 0).all())
    meta = {"study": study.name, "n_cascades": len(cascades), "resolution": study.resolution, **extra,
            "figure": save_figure(curves_plot(curves, dataset), "cascades", f"curves_{dataset}")}
    result = publish_many(context, wh, {"cascade.curves": curves, "cascade.markov_error": markov}, _where(context), meta)
    check = dg.AssetCheckResult(passed=ok, metadata={"min_error": float(curves["error"].min()),
                                                     "max_error": float(curves["error"].max()),
                                                     "min_cost": float(curves["cost"].min())})
    return _with_checks(result, check)


@dg.asset(key=["cascade", "protocols"], deps=[DATASET_RECORDS, dg.AssetKey(["cascade", "copulas"])],
          **{**_common, "code_version": PROTOCOLS_VERSION})
def cascade_protocols(context: dg.AssetExecutionContext, config: CascadeStudyConfig,
                      warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Tables 2.7 and 2.8 (RT vs grid search, full train set and n <= 30) under each protocol variant, labelled:
    grid levels (thesis text | authors' code), costs (per query | per-model mean), RT optimiser (pattern search |
    L-BFGS-B); all size-ordered Llama subsets at the thesis' 1/40 grid. Light study: the authors' protocol and
    the study's low-sample seeds; heavy: all eight variants; run config `protocols` picks others ([] skips)."""
    wh, records, why = _records_with_test(context, warehouse)
    if records is None:
        return _skip(context, why)
    dataset = context.partition_key
    chosen = config.protocol_set()
    if not chosen:
        return _skip(context, "protocol study off (run config protocols is empty)")
    study = config.settings()
    cal, _ = cs.calibrated_records(records, dataset)
    chains = cs.chains_for(records)
    samples, skipped = cs.training_samples(records, cal, dataset, max(chains.values(), key=len),
                                           study.low_sample_seeds)
    curves, auc, summary = cp.protocol_study(samples, chains, chosen)
    k3 = summary[summary["k_group"] == "k>=3"].set_index(["setting", "protocol"])["mean_pct_delta"]
    meta = {"resolution": cp.THESIS_RESOLUTION, "n_cascades": int(curves["cascade"].nunique()),
            "chain": curves["chain"].iloc[0], "low_sample_skipped": skipped,
            "mean_pct_delta_k3": {f"{s}:{p}": round(float(v), 3) for (s, p), v in k3.items()}}
    tables = {"cascade.protocol_curves": curves, "cascade.protocol_auc": auc, "cascade.protocol_summary": summary}
    return publish_many(context, wh, tables, _where(context), meta)


@dg.asset(key=["cascade", "auc"], deps=[dg.AssetKey(["cascade", "curves"])], **_common)
def cascade_auc(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """AUC of the test error-cost curves, %Delta vs RT and one-sided Wilcoxon p (Tables 2.7, 2.8)."""
    wh = warehouse.get()
    curves = wh.read("cascade.curves", _where(context))
    if curves.empty:
        return _skip(context, "no test curves for this dataset")
    auc, summary = cs.auc_tables(curves)
    k3 = summary[(summary["k_group"] == "k>=3") & (summary["setting"] == "full")].set_index("method")
    meta = {f"mean_pct_delta_k3_{m}": float(k3.loc[m, "mean_pct_delta"]) for m in k3.index}
    return publish_many(context, wh, {"cascade.auc": auc, "cascade.auc_summary": summary}, _where(context), meta)


@dg.asset(key=["cascade", "economics"], deps=[DATASET_RECORDS], **_common)
def cascade_economics(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Economic evaluation: reward per model on the (lambda_E, lambda_L) grid, optimal-model map, critical prices."""
    wh = warehouse.get()
    dataset = context.partition_key
    records = readers.cascade_records(wh, dataset)
    if records is None:
        return _skip(context)
    if cs.lacks(records, ["cost_usd", "latency_ms"]):
        return _skip(context, "no per-query cost or latency")
    tables = cs.economics_tables(records)
    meta = {"figure": save_figure(optimal_map_plot(tables["cascade.optimal_model_map"], dataset), "cascades",
                                  f"optimal_model_map_{dataset}"),
            "winners_lambda_latency_0": tables["cascade.critical_prices"]["system_b"].tolist()}
    return publish_many(context, wh, tables, _where(context), meta)


@dg.asset(key=["cascade", "two_model_cascades"], deps=[DATASET_RECORDS], **_common)
def cascade_two_model(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Ch. 3's cascades M_small -> M_big on consecutive Llama pairs: tuned test reward per price of error
    (App. 3D, Fig. 3.5) and the cascade error rate decomposition across thresholds (Fig. 3.6)."""
    wh = warehouse.get()
    dataset = context.partition_key
    records = readers.cascade_records(wh, dataset)
    if records is None:
        return _skip(context)
    if cs.lacks(records, ["cost_usd", "latency_ms"]) or not cs.has_test(records):
        return _skip(context, "needs per-query cost, latency and a test split")
    tables = cs.two_model_cascade_tables(records, dataset)
    fig = two_model_cascades_plot(tables["cascade.tuned_rewards"], tables["cascade.cer_curve"], dataset)
    meta = {"figure": save_figure(fig, "cascades", f"two_model_cascades_{dataset}"),
            "pairs": int(tables["cascade.cer_curve"][["small", "big"]].drop_duplicates().shape[0])}
    return publish_many(context, wh, tables, _where(context), meta)


@dg.asset(key=["cascade", "failfast"], deps=[DATASET_RECORDS], **_common)
def cascade_failfast(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """"Fail Fast, or Ask" on REAL records (Sec. 4.3, Table 4.2 shape), labelled data = real."""
    wh = warehouse.get()
    dataset = context.partition_key
    records = readers.cascade_records(wh, dataset)
    if records is None:
        return _skip(context)
    if cs.lacks(records, ["cost_usd", "latency_ms", "tokens_out"]):
        return _skip(context, "no per-query tokens, cost or latency")
    cal, _ = cs.calibrated_records(records, dataset)
    strong, _ = cs.failfast_pair(cal)
    if cs.distinct_values(cal, strong, "tokens_out") < 2:
        return _skip(context, f"output tokens of {strong} are constant: no uncertainty signal")
    table = cs.real_failfast(cal)
    meta = {"data": "real", "reasoning_model": table["reasoning_model"].iloc[0],
            "nonreasoning_model": table["nonreasoning_model"].iloc[0],
            "tokens_signal_rho": float(table["tokens_signal_rho"].iloc[0])}
    return publish_many(context, wh, {"cascade.failfast": table}, _where(context), meta)


@dg.asset(key=["cascade", "failfast_synthetic"], group_name="cascade", code_version=CODE_VERSION,
          pool=settings.writer_pool())
def cascade_failfast_synthetic(context: dg.AssetExecutionContext, config: CascadeStudyConfig,
                               warehouse: WarehouseResource) -> dg.MaterializeResult:
    """"Fail Fast, or Ask" on SYNTHETIC records (documented generator, Table 4.1 means), labelled data = synthetic."""
    n = 20_000 if config.settings() is cs.HEAVY else 4_000
    table = cs.synthetic_failfast(n)
    return publish_many(context, warehouse.get(), {"cascade.failfast_synthetic": table},
                        metadata={"data": "synthetic", "n": n})


cascade_assets = [cascade_calibration, cascade_marginals, cascade_copulas, cascade_curves, cascade_protocols, cascade_auc,
                  cascade_economics, cascade_two_model, cascade_failfast, cascade_failfast_synthetic]
