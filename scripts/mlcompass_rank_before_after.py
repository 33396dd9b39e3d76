"""A case's rank intervals before and after issue 29 (docs/results/mlcompass.md), from a materialized warehouse.

Before: issue 11's bootstrap (prompts, imputation, factor model). After: plus the outcome models resampled and
each model's own effect drawn (`compass.mlcompass.rank_uncertainty`). Same seed, same B, same leaderboards;
prints, per scenario, the top of the published leaderboard with both 90 % intervals and P(rank 1), and the
near-tie group after.

Usage: .venv/bin/python scripts/mlcompass_rank_before_after.py [case_id] [n_boot] [warehouse]
"""

from __future__ import annotations

import sys
import time

import pandas as pd

from compass.mlcompass.case_inputs import build_x_raw, outcome_rows
from compass.mlcompass.decisions import numeric_lambda, rank_uncertainty_frame
from compass.mlcompass.rank_uncertainty import bootstrap_replicates
from resources import readers
from resources.configs import cases, scenario_for
from resources.warehouse import Warehouse

SCENARIOS = ["pure_capability", "cost_aware_low", "cost_aware_high", "constrained_single", "constrained_all"]
TOP = 8


def main() -> None:
    case_id = sys.argv[1] if len(sys.argv) > 1 else "frontier_api"
    n_boot = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    wh = Warehouse(sys.argv[3] if len(sys.argv) > 3 else "var/warehouse.duckdb")
    case = cases()[case_id]
    x_raw = build_x_raw(readers.case_scores(wh), case.benchmarks)
    rows = outcome_rows(readers.outcome_records(wh, case.utility.datasets), wh.read("raw.interactions"), case.utility)
    reference = wh.read("compass.loadings", {"case_id": case_id}).drop(columns=["case_id"])
    costs = wh.read("compass.costs", {"case_id": case_id}).set_index("model_id")["cost"]
    start = time.process_time()
    before = bootstrap_replicates(x_raw, rows, case, n_boot, reference_loadings=reference, resample_models=False,
                                  model_effects=False)
    after = bootstrap_replicates(x_raw, rows, case, n_boot, reference_loadings=reference)
    print(f"case {case_id}: {after.n_outcome_models} outcome models, model-effect sd (logit) {after.model_effect_sd:.3f}, "
          f"B = {n_boot}, intervals supported: {after.interval_supported}; CPU {time.process_time() - start:.0f} s\n")
    for name in SCENARIOS:
        board = wh.read("compass.leaderboards", {"case_id": case_id, "scenario": name})
        if board.empty:
            continue
        scenario = numeric_lambda(scenario_for(name, case), case)
        old, new = (rank_uncertainty_frame(r, costs, scenario, board).set_index("model_id") for r in (before, after))
        top = board.sort_values("rank").head(TOP)
        table = pd.DataFrame({
            "rank": top["rank"].to_numpy(), "model": top["model_id"].to_numpy(),
            "normalized cost": top["cost"].to_numpy(),
            "90 % interval before": [f"{old.at[m, 'rank_lo']}-{old.at[m, 'rank_hi']}" for m in top["model_id"]],
            "P(rank 1) before": [old.at[m, "p_rank1"] for m in top["model_id"]],
            "90 % interval after": [f"{new.at[m, 'rank_lo']}-{new.at[m, 'rank_hi']}" for m in top["model_id"]],
            "P(rank 1) after": [new.at[m, "p_rank1"] for m in top["model_id"]],
            "within noise of #1 after": ["yes" if new.at[m, "near_leader"] else "" for m in top["model_id"]],
        })
        group = new[new["near_leader"]]
        cheapest = board[board["model_id"].isin(group.index)].sort_values(["cost", "rank"]).iloc[0]
        print(f"#### {name}\n\n{table.to_markdown(index=False, floatfmt='.3f')}\n\n"
              f"{len(group)} of {len(board)} models within the bootstrap's noise of #1 after; the cheapest: "
              f"{cheapest['model_id']} (normalized cost {cheapest['cost']:.3f}).\n")


if __name__ == "__main__":
    main()
