"""How far a case's outcome models reach into its leaderboards' top 10 (issue 42, item 6; docs/results/mlcompass.md).

From a materialized warehouse: the models whose per-query outcomes the case's utility is learned from (its
`utility.datasets`, or `--datasets`; `--records` reads query_records from a Parquet file instead of the
warehouse, e.g. the rebuilt `data/query_records.parquet` against an older warehouse), their range per measure,
and per scenario the top 10 of `compass.leaderboards`: the share inside that range on every measure and the
median / largest distance beyond it (`beyond_outcome_range`, measure units). `--time` also times one utility
fit and the rank bootstrap (B = 60, as `make run`) on those outcome rows.

Usage: .venv/bin/python scripts/mlcompass_outcome_reach.py [--db var/warehouse.duckdb] [--case frontier_api]
           [--datasets mmlu ...] [--records data/query_records.parquet] [--time]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import pandas as pd

from compass.mlcompass.case_inputs import build_x_raw, outcome_rows
from compass.mlcompass.case_utilities import fit_case_utilities, outcome_reach
from compass.mlcompass.rank_uncertainty import bootstrap_replicates
from resources import readers
from resources.configs import cases
from resources.warehouse import Warehouse

TOP = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="var/warehouse.duckdb")
    parser.add_argument("--case", default="frontier_api")
    parser.add_argument("--datasets", nargs="+", help="outcome datasets (default: the case's)")
    parser.add_argument("--records", help="query_records Parquet file to read instead of the warehouse's")
    parser.add_argument("--time", action="store_true", help="time the utility fit and the rank bootstrap")
    args = parser.parse_args()
    wh, case = Warehouse(args.db), cases()[args.case]
    spec = case.utility
    datasets = args.datasets or list(spec.datasets)
    records = pd.read_parquet(args.records) if args.records else wh.read("raw.query_records")
    records = records[records["dataset"].isin(datasets)]
    measures = wh.read("compass.measures", {"case_id": args.case}).pivot(index="model_id", columns="factor",
                                                                          values="value")
    trained = measures.index.intersection(records["model_id"].unique())
    span = ", ".join(f"{m} {measures.loc[trained, m].min():.2f}-{measures.loc[trained, m].max():.2f}"
                     for m in measures.columns)
    print(f"{args.case}: {len(trained)} outcome models with measures on {', '.join(datasets)}; they span {span}")
    boards = wh.read("compass.leaderboards", {"case_id": args.case})
    top = boards[boards["rank"] <= TOP]
    rows = [{"scenario": s, **outcome_reach(measures, trained, pd.Index(part["model_id"]))}
            for s, part in top.groupby("scenario", sort=True)]
    every = pd.Index(top["model_id"].unique())
    rows.append({"scenario": f"any top {TOP} (distinct models)", **outcome_reach(measures, trained, every)})
    leaders = measures.loc[every].agg(["min", "median", "max"]).round(2)
    print(f"top-{TOP} measures: " + "; ".join(
        f"{m} {leaders[m]['min']}-{leaders[m]['max']} (median {leaders[m]['median']})" for m in leaders.columns))
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"))
    if args.time:
        spec = replace(spec, datasets=tuple(datasets))
        x_raw = build_x_raw(readers.case_scores(wh), case.benchmarks)
        outcome = outcome_rows(records, wh.read("raw.interactions"), spec)
        reference = wh.read("compass.loadings", {"case_id": args.case}).drop(columns=["case_id"])
        start = time.process_time()
        fit_case_utilities(outcome, measures, spec)
        fit = time.process_time() - start
        case = replace(case, utility=spec)
        bootstrap_replicates(x_raw, outcome, case, 60, reference_loadings=reference)
        print(f"\n{len(outcome):,} outcome rows; CPU: utility fit {fit:.1f} s, rank bootstrap (B = 60) "
              f"{time.process_time() - start - fit:.1f} s")


if __name__ == "__main__":
    main()
