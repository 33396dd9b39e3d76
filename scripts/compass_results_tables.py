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
    out += ["Policy values (Table 5 shape; sd across types or baseline rules):\n", pd.DataFrame(table5).to_markdown(index=False), ""]
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
    out += ["Selected models (Table 6 shape):\n", pd.DataFrame(table6).to_markdown(index=False), ""]
    boards = wh.read("compass.leaderboards", {"case_id": case})
    top = boards[boards["rank"] <= 5].pivot(index="rank", columns="scenario", values="model_id")
    out += ["Top 5 of each scenario leaderboard:\n", top.reindex(columns=[s for s in SCENARIOS if s in top.columns]).reset_index().to_markdown(index=False), ""]
    return "\n".join(out)


def main() -> None:
    wh = Warehouse(sys.argv[1] if len(sys.argv) > 1 else "var/warehouse.duckdb")
    for case in sorted(wh.query("select distinct case_id from compass.measures")["case_id"]):
        print(case_tables(wh, case))


if __name__ == "__main__":
    main()
