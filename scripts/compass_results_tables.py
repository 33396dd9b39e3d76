"""Print the ML Compass tables of docs/results.md (paper Tables 3-6 shapes) from a materialized warehouse.

Usage: .venv/bin/python scripts/compass_results_tables.py [var/warehouse.duckdb]
"""

import sys

import pandas as pd

from resources.warehouse import Warehouse

POLICY_ORDER = ["actual_per_type", "mlc_per_type", "actual_mean", "mlc_mean", "mlc_robust", "baselines",
                "mlc_per_type_actual_cost", "mlc_mean_actual_cost", "mlc_robust_actual_cost"]
SCENARIOS = ["pure_capability", "cost_aware_low", "cost_aware_high", "constrained_single", "constrained_all"]


def fmt(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False, floatfmt=".3f")


def case_tables(wh: Warehouse, case: str) -> str:
    out = [f"### Case `{case}`\n"]
    loadings = wh.read("compass.loadings", {"case_id": case}).pivot(index="benchmark", columns="factor", values="loading")
    out += ["Sparsified promax loadings (Figure 2 shape):\n", loadings.round(2).fillna("").reset_index().to_markdown(index=False), ""]
    params = wh.read("compass.frontier", {"case_id": case}).set_index("parameter")["value"]
    out += ["Fitted frontier: " + ", ".join(f"{p}={params[p]:.3g}" for p in params.index), ""]
    tiers = wh.read("compass.tiers", {"case_id": case})
    rows = []
    for tier, part in tiers.groupby("tier"):
        eff = part.loc[part["pareto_efficient"], "model_id"]
        rows.append({"tier": tier, "n_models": len(part), "pareto_dominating (first 8)": ", ".join(sorted(eff)[:8]),
                     "n_dominated": int((~part["pareto_efficient"]).sum())})
    out += ["Tiers (Table 3 shape; tier 1 weakest):\n", fmt(pd.DataFrame(rows)), ""]
    util = wh.read("compass.utilities", {"case_id": case})
    weights = wh.read("compass.utility_weights", {"case_id": case}).pivot(index="context_group", columns="factor", values="weight")
    util = util.merge(weights.add_prefix("beta_").reset_index(), on="context_group")
    cols = ["context_group", "n_train", "n_test", "train_auc", "train_auc_sd", "test_auc", "test_auc_sd",
            *[c for c in util.columns if c.startswith("beta_")]]
    out += ["Utilities (Table 4 shape):\n", fmt(util[cols]), f"\nMean test AUC {util['test_auc'].mean():.3f}.", ""]
    values = wh.read("compass.policy_values", {"case_id": case})
    table5 = []
    for scenario in SCENARIOS:
        part = values[values["scenario"] == scenario].set_index("policy")
        row = {"setting": scenario}
        for p in POLICY_ORDER:
            if p in part.index:
                v, sd = part.loc[p, "value"], part.loc[p, "sd"]
                row[p] = f"{v:.3f}" + (f" ({sd:.3f})" if pd.notna(sd) else "")
        table5.append(row)
    out += ["Policy values (Table 5 shape; sd across types or baseline rules; every policy evaluated at actual cost; mlc_* selected on tier costs as in the paper, mlc_*_actual_cost selected on the evaluated metric itself, so best among single-model policies by construction):\n", pd.DataFrame(table5).to_markdown(index=False), ""]
    recs = wh.read("compass.recommendations", {"case_id": case})
    table6 = []
    for scenario in SCENARIOS:
        part = recs[recs["scenario"] == scenario]
        per_type = part[part["policy"] == "mlc_per_type"].set_index("context_group")["model_id"]
        actual = part[part["policy"] == "actual_per_type"].set_index("context_group")["model_id"]
        row = {"setting": scenario}
        for g in list(per_type.index)[:4]:
            row[f"{g}: MLC / actual"] = f"{per_type.get(g)} / {actual.get(g)}"
        mean = part.set_index("policy")["model_id"]
        row["mean: MLC / actual"] = f"{mean.get('mlc_mean')} / {mean.get('actual_mean')}"
        row["robust"] = mean.get("mlc_robust")
        table6.append(row)
    out += ["Selected models (Table 6 shape; MLC under the paper's protocol):\n", pd.DataFrame(table6).to_markdown(index=False), ""]
    boards = wh.read("compass.leaderboards", {"case_id": case})
    ranks = wh.read("compass.rank_uncertainty", {"case_id": case})
    extra = [c for c in ("near_leader", "interval_supported") if c in ranks]
    boards = boards.merge(ranks[["scenario", "model_id", "p_rank1", "rank_lo", "rank_hi", *extra]],
                          on=["scenario", "model_id"], how="left")
    interval = boards["rank_lo"].astype("Int64").astype(str) + "-" + boards["rank_hi"].astype("Int64").astype(str)
    if "interval_supported" in boards:
        interval = interval.mask(boards["interval_supported"].eq(False), "not supported")
    outside = boards["measures_outside"].fillna(0).gt(0) if "measures_outside" in boards else False
    boards["entry"] = (boards["model_id"] + " [" + interval + ", p1 " + boards["p_rank1"].round(2).astype(str) + "]"
                       + pd.Series("", index=boards.index).mask(outside, " (extrap.)"))
    top = boards[boards["rank"] <= 5].pivot(index="rank", columns="scenario", values="entry")
    out += ["Top 5 of each scenario leaderboard [90 % rank interval, P(rank 1)]; (extrap.): outside the outcome "
            "models' range on at least one measure:\n",
            top.reindex(columns=[s for s in SCENARIOS if s in top.columns]).reset_index().to_markdown(index=False), ""]
    if "near_leader" in boards:
        rows = []
        for scenario in [s for s in SCENARIOS if s in set(boards["scenario"])]:
            part = boards[boards["scenario"] == scenario].sort_values("rank")
            group = part[part["near_leader"].fillna(False).astype(bool)]
            cheapest = group.sort_values(["cost", "rank"]).iloc[0] if len(group) else part.iloc[0]
            rows.append({"setting": scenario, "leader": part["model_id"].iloc[0],
                         "leader cost": part["cost"].iloc[0], "models within noise of #1": len(group),
                         "cheapest of them": cheapest["model_id"], "its cost": cheapest["cost"],
                         "its score gap": part["score"].iloc[0] - cheapest["score"],
                         "top 10 extrapolated": int(outside[part.index[:10]].sum()) if "measures_outside" in boards else None})
        out += ["Near-ties (models the bootstrap cannot tell from the leader, p_ge_leader >= 5 %) and extrapolation:\n",
                fmt(pd.DataFrame(rows)), ""]
    return "\n".join(out)


def study_tables(wh: Warehouse, case: str) -> str:
    """EC Tables 8, 9-10 and 11-16 and the leave-models-out AUC of one case."""
    out = [f"### Robustness studies, case `{case}`\n"]
    table8 = wh.read("compass.variance_explained", {"case_id": case})
    wide = table8.pivot(index="n_factors", columns="variant", values="cumulative_variance")
    comm = table8.pivot(index="n_factors", columns="variant", values="communality").add_suffix(" (communality)")
    out += ["Variance explained (EC Table 8 shape; sum of squared loadings / p, and the rotation-invariant communality):\n",
            fmt(wide.join(comm).reset_index().astype({"n_factors": int})), ""]
    summary = wh.read("compass.frontier_sensitivity_summary", {"case_id": case})
    cols = ["variable", "value", "n_cells", "b_mean", "b_sd", "d_mean", "d_sd", "fit_error_mean", "pearson_mean", "spearman_mean"]
    cells = wh.read("compass.frontier_sensitivity", {"case_id": case})
    failed = cells.loc[cells["error"] != "", "error"].unique()
    out += ["Frontier sensitivity (EC Tables 9-10 shape, light grid; mean and sd over the cells sharing a value):\n",
            fmt(summary[cols]), f"\n{len(cells)} cells, {int((cells['error'] != '').sum())} failed"
            + (f" ({'; '.join(failed)})" if len(failed) else "") + ".", ""]
    robust = wh.read("compass.utility_robustness", {"case_id": case})
    means = robust.groupby(["variant", "estimator"], sort=False).agg(
        groups=("context_group", "size"), train_auc=("train_auc", "mean"), test_auc=("test_auc", "mean"),
        test_auc_sd_across_groups=("test_auc", lambda v: float(v.std(ddof=0)))).reset_index()
    out += ["Utility robustness (EC Tables 11-16 shape; mean over context groups):\n", fmt(means), ""]
    held = wh.read("compass.utility_held_out", {"case_id": case})
    cols = ["context_group", "n_models", "n_folds", "n_rows", "held_out_auc", "model_rate_auc", "held_out_spearman"]
    out += ["Leave-models-out AUC of the case's utility (folds of models; model_rate_auc = ranking models by "
            "their own observed rate, the ceiling for any utility of x; held_out_spearman = rank correlation of the "
            "held-out Û with the models' observed rates, per context):\n",
            fmt(held[[c for c in cols if c in held]]), ""]
    return "\n".join(out)


def main() -> None:
    wh = Warehouse(sys.argv[1] if len(sys.argv) > 1 else "var/warehouse.duckdb")
    for case in sorted(wh.query("select distinct case_id from compass.measures")["case_id"]):
        print(case_tables(wh, case))
        print(study_tables(wh, case))


if __name__ == "__main__":
    main()
