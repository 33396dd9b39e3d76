"""Tucker's phi of a refreshed measure in and out of sample, in simulated worlds built on a case's loadings
(`compass.mlcompass.congruence_study`; docs/results/mlcompass.md, "Congruence out of sample").

    python scripts/mlcompass_congruence_bias.py [--seeds 100] [--models 162] [--db var/warehouse.read.duckdb --case frontier_api]

Without --db the truth is frontier_api's loadings as published when the study was first written
(`FRONTIER_LOADINGS`: 12 benchmarks, 2 measures), so the table does not depend on a warehouse. 30-55 s for 100 seeds
on one core.
"""

from __future__ import annotations

import argparse
import time

import duckdb
import pandas as pd

from compass.mlcompass.congruence_study import FRONTIER_LOADINGS, N_MODELS, study


def published_loadings(db: str, case: str) -> pd.DataFrame:
    """The case's wide loadings (index benchmark, columns factor): the truth of the simulated catalogs."""
    with duckdb.connect(db, read_only=True) as con:
        long = con.execute("select benchmark, factor, loading from compass.loadings where case_id = ?", [case]).df()
    return long.pivot(index="benchmark", columns="factor", values="loading").fillna(0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None, help="read the truth from this warehouse's compass.loadings")
    parser.add_argument("--case", default="frontier_api")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--models", type=int, default=N_MODELS, help="models per simulated catalog")
    args = parser.parse_args()
    truth = FRONTIER_LOADINGS if args.db is None else published_loadings(args.db, args.case)
    start = time.perf_counter()
    table = study(truth, args.seeds, args.models)
    print(f"{truth.shape[0]} benchmarks x {truth.shape[1]} measures, {args.models} models, seeds 0-{args.seeds - 1} "
          f"per world ({time.perf_counter() - start:.0f} s)\n")
    print(table.to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
