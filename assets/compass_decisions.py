"""ML Compass utilities (per case) and decisions (per case x scenario): §4.5-4.6, §5.6.

Utilities never read prices. The decisions read the fitted frontier, the
normalized costs and the utilities, and are partitioned by case x scenario so a
new scenario YAML computes only its partitions. The science is
`compass.mlcompass.decisions`.
"""

import dagster as dg
import numpy as np
import pandas as pd

from assets.compass_frontier import CASE_CATALOG, cost_side, measures
from assets.compass_inputs import CASE_BENCHMARKS, IMPUTATION_VALIDATION
from assets.partitions import case_partitions, decision_partitions
from compass.mlcompass import decisions as dec
from compass.mlcompass.case_inputs import build_x_raw
from compass.mlcompass.plots import targets_plot
from resources import readers, settings
from resources.configs import cases, scenario_for
from resources.publish import publish_assets, publish_many, save_figure
from resources.warehouse import WarehouseResource, frame_version

CODE_VERSION = "compass-decisions-6"  # 2: cost tie rule, outcome range, near-tie group; 3: imputed_no_better_share, dominance repair, measure names, beyond_outcome_range, interval label; 4: compass.decisions, versions; 5: the dominance repair in every bootstrap replicate
DECISION_KEYS = {name: dg.AssetKey(["compass", name])
                 for name in ("targets", "recommendations", "leaderboards", "policy_values", "lambda_path")}
_DESCRIPTIONS = {
    "targets": "Continuous targets (x*, c*): problems (4) per type, (5) mean, (6) robust; infeasibility flagged.",
    "recommendations": "Problem (7) per type / mean / robust, the projection variant, and Table 6's policies.",
    "leaderboards": "Deployment-aware leaderboard: Score_s(m) over feasible models; `binding` names what bites.",
    "policy_values": "Table 5: actual, MLC (per type, mean, robust) and single-metric baselines (mean ± sd).",
    "lambda_path": "The leader for every cost sensitivity λ >= 0 and the critical λ where it switches.",
}
# The case's catalog: the governance filters read its models' attributes and latency (readers.case_catalog).
_decision_deps = [cost_side, ["compass", "utilities"], measures, ["compass", "ces_shape"], ["raw", "benchmark_scores"],
                  CASE_CATALOG, IMPUTATION_VALIDATION]  # the board note on imputed cells no better than the mean


@dg.asset(key=["compass", "utilities"], deps=[measures, ["raw", "query_records"], ["raw", "interactions"]],
          partitions_def=case_partitions, code_version=CODE_VERSION, group_name="compass", pool=settings.writer_pool())
def utilities(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One utility Û_g per context group (§4.5): estimator, repeated-split AUCs, normalized weights β̂, the fitted Û."""
    wh, case = warehouse.get(), cases()[context.partition_key]
    tables = dec.case_utility_tables(case, readers.measures(wh, case.case_id),
                                     readers.outcome_records(wh, case.utility.datasets), wh.read("raw.interactions"))
    table = tables["compass.utilities"]
    warning = dec.negative_coefficients(tables["compass.utility_weights"])
    if warning:
        context.log.warning(f"case {case.case_id}: {warning}")
    return publish_many(context, wh, tables, {"case_id": case.case_id},
                        metadata={"groups": len(table), "utility_form": case.utility.form,
                                  "negative_coefficients": warning or "none",
                                  "mean_test_auc": float(table.get("test_auc", pd.Series([np.nan])).mean())})


@dg.multi_asset(
    specs=[dg.AssetSpec(key, deps=_decision_deps, description=_DESCRIPTIONS[name], group_name="compass",
                        code_version=CODE_VERSION)
           for name, key in DECISION_KEYS.items()],
    partitions_def=decision_partitions,
    pool=settings.writer_pool(),
    can_subset=False,
)
def decisions(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    """All decisions of one case x scenario from one read of the inputs (§4.6, §5.6): they share every input,
    so computing them together costs one step instead of four."""
    wh = warehouse.get()
    keys = context.partition_key.keys_by_dimension
    case = cases()[keys["case"]]
    where = {"case_id": case.case_id, "scenario": keys["scenario"]}
    try:
        inputs = readers.decision_inputs(wh, case, scenario_for(keys["scenario"], case))
    except dec.NotApplicable as skip:
        context.log.warning(str(skip))
        wh.delete_rows([f"compass.{name}" for name in DECISION_KEYS], where)
        for key in DECISION_KEYS.values():
            yield dg.MaterializeResult(asset_key=key, metadata={"skipped": str(skip)},
                                       data_version=dg.DataVersion(f"skipped:{frame_version(pd.DataFrame([str(skip)]))}"))
        return
    target_rows, wide = dec.targets_frame(inputs)
    selections = dec.selections_frame(inputs)
    recs = dec.recommendations_frame(inputs, target_rows, selections)
    # the measures this board was ranked on: the run summary pairs it only with rank intervals of the same ones
    board = dec.leaderboard_frame(inputs).assign(
        measures_version=",".join(wh.data_versions("compass.measures", {"case_id": case.case_id}) or []))
    values = dec.policy_values_frame(inputs, selections)
    mean_pick = recs.loc[recs["policy"] == "mlc_mean", "model_id"]
    figure = save_figure(targets_plot(inputs.measures, inputs.costs, wide, list(mean_pick.dropna()),
                                      f"{case.case_id} / {inputs.scenario.name}"),
                         case.case_id, f"targets_{inputs.scenario.name}")
    path = dec.lambda_path_frame(board)
    # One transaction for the five tables: a case x scenario's decisions are never half-published.
    yield from publish_assets(context, wh, {
        DECISION_KEYS["targets"]: ({"compass.targets": target_rows},
                                   {"feasible": bool(wide["feasible"].any()), "targets_vs_selected": figure}),
        DECISION_KEYS["recommendations"]: ({"compass.recommendations": recs},
                                           {"mlc_mean": str(mean_pick.iloc[0]) if len(mean_pick) else "-"}),
        DECISION_KEYS["leaderboards"]: ({"compass.leaderboards": board},
                                        {"feasible_models": len(board), "top": ", ".join(board["model_id"].head(5)),
                                         "utility_source": dec.utility_source(inputs),
                                         "filters": inputs.filter_note or "none", "targets_vs_selected": figure}),
        DECISION_KEYS["policy_values"]: ({"compass.policy_values": values},
                                         {"mlc_mean": float(values.set_index("policy").loc["mlc_mean", "value"])}),
        DECISION_KEYS["lambda_path"]: ({"compass.lambda_path": path},
                                       {"switches": max(len(path) - 1, 0),
                                        "leaders": " -> ".join(path["model_id"].astype(str))}),
    }, where)


@dg.asset(key=["compass", "rank_uncertainty"], deps=[["compass", "rank_bootstrap"], DECISION_KEYS["leaderboards"],
                                                    ["raw", "benchmark_scores"], CASE_BENCHMARKS],
          partitions_def=decision_partitions, code_version=CODE_VERSION, group_name="compass", pool=settings.writer_pool())
def rank_uncertainty(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """How sure each leaderboard rank is: p_rank1, p_top5 and the 90 % rank interval over the case's bootstrap
    replicates (imputation, factor model and utilities refitted), for the models the leaderboard ranks; and the
    decision (compass.decisions): point leader, P(rank 1) leader and the cheapest model within the scenario's
    tolerance of the leader. Both carry the leaderboard's and the measures' data versions they were computed on
    (board_version, measures_version), so no reader pairs them with another run's picks."""
    wh = warehouse.get()
    keys = context.partition_key.keys_by_dimension
    case = cases()[keys["case"]]
    where = {"case_id": case.case_id, "scenario": keys["scenario"]}
    board = wh.read("compass.leaderboards", where)
    if board.empty:  # skipped or infeasible scenario: nothing to rank (an empty frame would type every column text)
        wh.delete_rows(["compass.rank_uncertainty", "compass.decisions"], where)
        return dg.MaterializeResult(metadata={"skipped": "no leaderboard rows"}, data_version=dg.DataVersion("empty"))
    scenario = dec.numeric_lambda(scenario_for(keys["scenario"], case), case)
    if scenario.axes:  # axis scores are not bootstrapped (compass.mlcompass.task_axes): no interval is claimed
        wh.delete_rows(["compass.rank_uncertainty", "compass.decisions"], where)
        return dg.MaterializeResult(metadata={"skipped": "task-axis utility: no bootstrap"},
                                    data_version=dg.DataVersion("axes"))
    if len(board):  # the decisions resolved its measure names (a refused scenario publishes no board)
        scenario = readers.named_measures(wh, case, scenario)
    costs = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")["cost"]
    replicates = readers.rank_replicates(wh, case.case_id)
    observed = build_x_raw(readers.case_scores(wh), case.benchmarks)  # the board's dominance, in every replicate
    table = dec.rank_uncertainty_frame(replicates, costs, scenario, board, observed)
    decision = dec.decision_rows(board, table, scenario, replicates, costs, observed)
    versions = {"board_version": ",".join(sorted(board["data_version"].unique())),
                "measures_version": ",".join(wh.data_versions("compass.measures", {"case_id": case.case_id}) or [])}
    top = table.sort_values("p_rank1", ascending=False).head(3)
    picks = decision.set_index("rule")["model_id"].to_dict()
    return publish_many(context, wh, {"compass.rank_uncertainty": table.assign(**versions),
                                      "compass.decisions": decision.assign(**versions)}, where,
                        metadata={"n_boot": int(table["n_boot"].max()),
                                  "p_rank1": ", ".join(f"{r.model_id} {100 * r.p_rank1:.0f} %" for r in top.itertuples()),
                                  "tolerance": float(decision["tolerance"].iloc[0]),
                                  **{rule: str(m) for rule, m in picks.items()}})


compass_decision_assets = [utilities, decisions, rank_uncertainty]
