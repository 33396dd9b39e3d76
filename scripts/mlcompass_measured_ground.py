"""docs/results/mlcompass.md, "A frontier case on measured ground" and "Imputed cells, validated the way they are
used": a case's top-10 imputed share per scenario, its benchmark choice with bridging counts, and the
leave-pattern-out validation of its imputation (RMSE vs the column mean and a one-factor imputation, coverage of
the nominal-90 % interval before and after the calibration), as markdown.

    .venv/bin/python scripts/mlcompass_measured_ground.py --db var/warehouse.duckdb
    # before (main's case file on main's warehouse):
    git show 20a4710:cases/frontier_api.yaml > /tmp/frontier_api_main.yaml
    .venv/bin/python scripts/mlcompass_measured_ground.py --db ../main/var/warehouse.read.duckdb \
        --case /tmp/frontier_api_main.yaml

The choice and the validation are recomputed from the warehouse's raw.benchmark_scores with the case file
given; the imputed shares are read from its compass.leaderboards (what the board published).
"""

from __future__ import annotations

import argparse
import time

import duckdb
import pandas as pd

from compass.mlcompass.benchmark_choice import benchmark_choice
from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.imputation_validation import board_patterns, pattern_holdout, pooled_summary, validation_table

FLOAT = ".2f"


def top10_imputed(con: duckdb.DuckDBPyConnection, case_id: str) -> pd.DataFrame:
    return con.sql(f"""select scenario, median(imputed_share) as median_imputed_share, max(imputed_share) as max_share,
                       count(*) as rows from compass.leaderboards where case_id = '{case_id}' and rank <= 10
                       group by scenario order by scenario""").df()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--case", default="cases/frontier_api.yaml")
    args = parser.parse_args()
    case = CaseStudy.from_yaml(args.case)
    con = duckdb.connect(args.db, read_only=True)
    scores = con.sql("select * from raw.benchmark_scores").df()
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
