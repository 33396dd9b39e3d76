"""Tucker's phi of a refreshed measure in and out of sample, in simulated worlds built on a case's published
loadings (`compass.mlcompass.congruence_study`; docs/results/mlcompass.md, "Congruence out of sample").

    python scripts/mlcompass_congruence_bias.py [--db var/warehouse.read.duckdb] [--case frontier_api] [--seeds 200]
"""

from __future__ import annotations

import argparse

import duckdb
import pandas as pd

from compass.mlcompass.congruence_study import study


def published_loadings(db: str, case: str) -> tuple[pd.DataFrame, str]:
    """The case's wide loadings (index benchmark, columns factor), the truth of the simulated catalogs, and their
    data version (printed with the table: the study depends on them)."""
    with duckdb.connect(db, read_only=True) as con:
        long = con.sql(f"select benchmark, factor, loading, data_version from compass.loadings "
                       f"where case_id = '{case}'").df()
    return (long.pivot(index="benchmark", columns="factor", values="loading").fillna(0.0),
            ",".join(sorted(long["data_version"].unique())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="var/warehouse.read.duckdb")
    parser.add_argument("--case", default="frontier_api")
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args()
    truth, version = published_loadings(args.db, args.case)
    print(f"{args.case} loadings from {args.db} (data version {version}), {args.seeds} seeds per world\n")
    print(study(truth, args.seeds).to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
