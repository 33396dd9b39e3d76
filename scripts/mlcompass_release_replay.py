"""The issue's release replayed through the `frontier_api` assets on a copy of a warehouse (docs/results/mlcompass.md).

Copies WAREHOUSE to OUT, adds the release of issue 42 (the best LiveBench row, +3 on every category, as model
`kimi-k4-max-effort`, scored by LiveBench alone) to raw.benchmark_scores, re-materializes compass/measures with its
blocking check, then the case's capability side, cost side and utilities, and prints: the measure registry
(compass.measure_names), the check, what each shipped scenario does with the renewed measures (refused, or the
top of its board).

Usage: .venv/bin/python scripts/mlcompass_release_replay.py WAREHOUSE OUT
"""

from __future__ import annotations

import shutil
import sys

import dagster as dg
import pandas as pd

from assets.compass_checks import measures_keep_their_meaning
from assets.compass_decisions import utilities
from assets.compass_frontier import case_catalog, ces_shape, cost_side, measures, tiers
from assets.partitions import case_partitions
from compass.mlcompass import decisions as dec
from compass.mlcompass.case_inputs import build_x_raw
from resources import readers
from resources.configs import cases, scenario_files, scenario_for
from resources.warehouse import Warehouse, WarehouseResource
from scripts.mlcompass_measure_stability import releases

CASE = "frontier_api"


def main() -> None:
    source, db = sys.argv[1], sys.argv[2]
    shutil.copyfile(source, db)
    wh, case = Warehouse(db), cases()[CASE]
    leaders = {name: wh.read("compass.leaderboards", {"case_id": CASE, "scenario": name, "rank": 1})["model_id"]
               for name in scenario_files()}
    scores = wh.read("raw.benchmark_scores")
    release = releases(build_x_raw(readers.case_scores(wh), case.benchmarks), [0], ["kimi-k4-max-effort"]).drop(columns="_copy_of")
    rows = release.rename_axis("model_id").reset_index().melt("model_id", var_name="benchmark", value_name="score")
    like = scores[scores["source"] == "livebench"].iloc[0]
    rows = rows.dropna().assign(**{c: like[c] for c in scores.columns if c not in rows.columns})[scores.columns]
    wh.replace("raw.benchmark_scores", pd.concat([scores, rows], ignore_index=True))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(case_partitions.name, [CASE])
    run = dg.materialize([measures, measures_keep_their_meaning, tiers, ces_shape, case_catalog, cost_side, utilities],
                         partition_key=CASE, instance=instance, resources={"warehouse": WarehouseResource(path=db)},
                         raise_on_error=False)
    checks = {e.check_name: e.passed for e in run.get_asset_check_evaluations()}
    print(f"assets materialized: {run.success}; checks: {checks}\n")
    names = wh.read("compass.measure_names", {"case_id": CASE})
    print(names[["factor", "name", "status", "congruence", "previous_factor", "replaced_by"]]
          .to_markdown(index=False, floatfmt=".3f") + "\n")
    for line in names.loc[names["status"] == "renewed", "changed"]:
        print(f"* {line}")
    print()
    for name in scenario_files():
        try:
            board = dec.leaderboard_frame(readers.decision_inputs(wh, case, dec.numeric_lambda(scenario_for(name, case), case)))
            rank = board.set_index("model_id")["rank"]
            before = ", ".join(f"{m} now #{rank[m]}" if m in rank else f"{m} off the board" for m in leaders[name])
            print(f"* {name}: {len(board)} models, top 3 {', '.join(board['model_id'].head(3))}; "
                  f"rank 1 before the release: {before or '-'}")
        except dec.NotApplicable as exc:
            print(f"* {name}: REFUSED ({exc})")


if __name__ == "__main__":
    main()
