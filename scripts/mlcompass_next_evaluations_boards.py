"""The real boards' short lists of what to measure next (issue 49 items 1-3), recomputed from a materialized warehouse
with the current code and prices: per case x scenario `compass next-evals`'s text (the greedy cells, by value and
under a dollar budget, then the outcome evaluations), computed here from `read_inputs` + `next_evaluations_table`
(the asset's own two calls), so a warehouse materialized before the outcome candidates existed gives the same text
the next refresh would. Prices: compass.case_prices of that warehouse (the case's own price table) and LiveBench's
per-task questions and tokens on raw.benchmark_scores.

Usage: COMPASS_DB=/tmp/x/warehouse.duckdb PYTHONPATH=. .venv/bin/python scripts/mlcompass_next_evaluations_boards.py
       [--case frontier_api] [--scenario cost_aware_low ...] [--k 5] [--budget 100]
"""

from __future__ import annotations

import argparse
import time

from compass.mlcompass.next_evaluations_decision import next_evaluations_table
from pipelines.next_evals_cli import report
from resources.configs import cases, scenario_files
from resources.next_evaluation_inputs import read_inputs
from resources.warehouse import Warehouse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", action="append", help="case id (default: every case)")
    parser.add_argument("--scenario", action="append", help="scenario name (default: every shipped scenario)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--budget", type=float, default=100.0, help="USD for the second short list")
    args = parser.parse_args()
    wh = Warehouse()
    for case_id in args.case or sorted(cases()):
        case = cases()[case_id]
        for scenario in args.scenario or sorted(scenario_files()):
            start = time.time()
            inputs = read_inputs(wh, case, scenario)
            if inputs is None or inputs.draws is None:
                print(f"== {case_id} / {scenario}: " + ("no leaderboard" if inputs is None else "nothing unmeasured"))
                continue
            table = next_evaluations_table(inputs.draws, inputs.completed, inputs.cell_sd, inputs.gradient,
                                           inputs.cell_usd, correlation=inputs.correlation, outcomes=inputs.outcomes)
            if table.empty:
                print(f"== {case_id} / {scenario}: no cell for sale")
                continue
            table = table.assign(pick=inputs.pick["model_id"], pick_p_rank1=inputs.pick["p_rank1"],
                                 pick_rank_lo=inputs.pick["rank_lo"], pick_rank_hi=inputs.pick["rank_hi"])
            n_cells, n_out = int((table["kind"] == "cell").sum()), int((table["kind"] == "outcome").sum())
            print(f"== {case_id} / {scenario}: {n_cells} cells for sale, {n_out} outcome candidates, "
                  f"r {inputs.correlation:.2f} ({time.time() - start:.1f} s)")
            print(report(case_id, scenario, table, args.k, None))
            print(report(case_id, scenario, table, args.k, args.budget).split("\n", 2)[2])
            print()


if __name__ == "__main__":
    main()
