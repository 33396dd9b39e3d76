"""docs/results/mlcompass.md, "A frontier case on measured ground" and "Imputed cells, validated the way they are
used": a case's top-10 imputed share per scenario, its benchmark choice with bridging counts, and the
leave-pattern-out validation of its imputation (RMSE vs the column mean and a one-factor imputation, coverage of
the nominal-90 % interval before and after the calibration), as markdown.

    .venv/bin/python scripts/mlcompass_measured_ground.py --db var/warehouse.duckdb
    # before (main's case file on main's warehouse):
    git show 20a4710:cases/frontier_api.yaml > /tmp/frontier_api_main.yaml
    .venv/bin/python scripts/mlcompass_measured_ground.py --db ../main/var/warehouse.read.duckdb \
        --case /tmp/frontier_api_main.yaml
    # what the calibration alone does to the rank intervals (60 replicates with and without it):
    .venv/bin/python scripts/mlcompass_measured_ground.py --db var/warehouse.duckdb --ablation

The choice and the validation are recomputed from the warehouse's raw.benchmark_scores with the case file
given; the imputed shares are read from its compass.leaderboards (what the board published).
"""

from __future__ import annotations

import argparse
import time

import duckdb
import pandas as pd

from compass.mlcompass.benchmark_choice import benchmark_choice
from compass.mlcompass.case_inputs import with_release_dates
from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.imputation_validation import board_patterns, pattern_holdout, pooled_summary, validation_table

FLOAT = ".2f"


def top10_imputed(con: duckdb.DuckDBPyConnection, case_id: str) -> pd.DataFrame:
    return con.sql(f"""select scenario, median(imputed_share) as median_imputed_share, max(imputed_share) as max_share,
                       count(*) as rows from compass.leaderboards where case_id = '{case_id}' and rank <= 10
                       group by scenario order by scenario""").df()


def calibration_ablation(db: str, case: CaseStudy, scores: pd.DataFrame, n_boot: int = 60) -> pd.DataFrame:
    """Median width of the top-10 90 % rank intervals per scenario, the bootstrap run with the published
    noise scales and without them (same seed, same replicates otherwise)."""
    from compass.mlcompass import decisions as dec
    from compass.mlcompass import rank_uncertainty as ru
    from compass.mlcompass.case_inputs import build_x_raw, outcome_rows
    from resources import readers
    from resources.configs import scenario_for
    from resources.warehouse import Warehouse

    wh = Warehouse(db)
    x_raw = build_x_raw(scores, case.benchmarks)
    rows = outcome_rows(readers.outcome_records(wh, case.utility.datasets), wh.read("raw.interactions"), case.utility)
    reference = wh.read("compass.loadings", {"case_id": case.case_id}).drop(columns=["case_id"])
    costs = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")["cost"]
    widths = {}
    for label, scale in (("calibrated", readers.noise_scales(wh, case.case_id)), ("model sd", None)):
        reps = ru.bootstrap_replicates(x_raw, rows, case, n_boot, reference_loadings=reference, noise_scale=scale)
        for name in sorted(wh.read("compass.leaderboards", {"case_id": case.case_id})["scenario"].unique()):
            board = wh.read("compass.leaderboards", {"case_id": case.case_id, "scenario": name})
            table = dec.rank_uncertainty_frame(reps, costs, dec.numeric_lambda(scenario_for(name, case), case), board)
            top = table[table["rank"] <= 10]
            widths.setdefault(name, {})[label] = float((top["rank_hi"] - top["rank_lo"]).median())
    return pd.DataFrame(widths).T.rename_axis(f"top-10 rank interval, median width ({n_boot} replicates)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--case", default="cases/frontier_api.yaml")
    parser.add_argument("--ablation", action="store_true", help="only the rank intervals with and without calibration")
    args = parser.parse_args()
    case = CaseStudy.from_yaml(args.case)
    con = duckdb.connect(args.db, read_only=True)
    scores = with_release_dates(con.sql("select * from raw.benchmark_scores").df(),
                                con.sql("select * from raw.models").df())
    if args.ablation:
        con.close()
        print(calibration_ablation(args.db, case, scores).to_markdown(floatfmt=".1f"))
        return
    print(f"## {case.case_id} ({args.case}, {args.db})\n")
    print("### Top-10 rows: imputed share\n")
    print(top10_imputed(con, case.case_id).to_markdown(index=False, floatfmt=FLOAT), "\n")

    choice = benchmark_choice(scores, case.benchmarks)
    x = choice.wide.loc[choice.models, choice.benchmarks]
    chosen = choice.table[choice.table["chosen"]]
    share = x.reindex(choice.current.intersection(x.index)).isna().mean(axis=1)
    print(f"### Benchmark choice ({case.benchmarks.choose_by}): x_raw {x.shape[0]} models x {x.shape[1]} benchmarks, "
          f"{len(choice.current)} current models ({len(share)} in x_raw, their median imputed share "
          f"{share.median():.2f})\n")
    core = chosen[chosen["core"]]
    rest = chosen[~chosen["core"]]
    print(f"core: {len(core)} benchmarks; other chosen: {len(rest)}, of which sharing >= 1 / >= 5 models with the "
          f"core: {int((rest['n_bridging'] >= 1).sum())} / {int((rest['n_bridging'] >= 5).sum())}\n")
    print(chosen.drop(columns=["chosen"]).to_markdown(index=False, floatfmt=FLOAT), "\n")

    start = time.monotonic()
    held = pattern_holdout(x, choice.current)
    table = validation_table(x, choice.current, held=held)
    print(f"### Leave-pattern-out validation (rank {held.rank}, {time.monotonic() - start:.0f} s)\n")
    cols = ["benchmark", "n_cells", "n_donors", "rmse_imputed", "rmse_mean", "rmse_one_factor", "rmse_in_sample",
            "rmse_random", "coverage90", "noise_scale", "coverage90_calibrated", "coverage90_calibrated_cv"]
    print(table[table["n_cells"] > 0][cols].to_markdown(index=False, floatfmt=FLOAT), "\n")
    benchmarks = pd.Index(x.columns)
    rows = {"all patterns": pooled_summary(held, benchmarks)}
    patterns = board_patterns(x, choice.current)
    rows |= {f"pattern {p}: {n} current models lacking {len(benchmarks) - len(kept)}": pooled_summary(held, benchmarks, p)
             for p, (kept, n) in enumerate(patterns) if (held.cells["pattern"] == p).any()}
    summary = pd.DataFrame(rows).T
    summary.index.name = "held-out cells (weighted by current models per pattern)"
    print(summary.to_markdown(floatfmt=FLOAT))


if __name__ == "__main__":
    main()
