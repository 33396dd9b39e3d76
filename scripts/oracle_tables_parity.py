"""Every oracle table of the embedded datasets from one source tree, or the comparison of two such dumps (issue 45:
the memory-saving paths must not move a number).

`dump DIR`: with the tree to test on PYTHONPATH, `prepare` each dataset of data/query_records.parquet (prices:
data/model_costs.parquet), then `analysis_tables` (n_boot 20: the bootstrap intervals too), `single_models_table`
and the naive and post-hoc curves (`per_set_table`), one Parquet file per (dataset, table) in DIR.
`compare A B`: every file of A equal to B's (`assert_frame_equal`, exact) and none only in B; exit 1 otherwise.

    PYTHONPATH=/work/main .venv/bin/python scripts/oracle_tables_parity.py dump /tmp/parity/main
    PYTHONPATH=. .venv/bin/python scripts/oracle_tables_parity.py dump /tmp/parity/branch
    .venv/bin/python scripts/oracle_tables_parity.py compare /tmp/parity/main /tmp/parity/branch
"""

import argparse
import sys
import warnings
from pathlib import Path

import pandas as pd

DATA = Path(__file__).resolve().parents[1] / "data"


def dump(out: Path) -> None:
    from compass.oracle.naive import naive_curve
    from compass.oracle.posthoc import posthoc_curve
    from compass.oracle.prepare import analysis_tables, per_set_table, prepare, single_models_table

    out.mkdir(parents=True, exist_ok=True)
    records, costs = pd.read_parquet(DATA / "query_records.parquet"), pd.read_parquet(DATA / "model_costs.parquet")
    for dataset in sorted(records["dataset"].unique()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prep = prepare(records[records["dataset"] == dataset].reset_index(drop=True), costs, dataset)
            tables, _ = analysis_tables(prep, n_boot=20)
            tables |= {"single": single_models_table(prep), "curve": per_set_table(prep, naive_curve),
                       "posthoc": per_set_table(prep, posthoc_curve)}
        for name, table in tables.items():
            table.to_parquet(out / f"{dataset}.{name}.parquet")
        print(f"{dataset}: {len(tables)} tables", flush=True)


def compare(a: Path, b: Path) -> int:
    files, differ = sorted(a.glob("*.parquet")), 0
    for f in files:
        try:
            pd.testing.assert_frame_equal(pd.read_parquet(f), pd.read_parquet(b / f.name), check_exact=True)
        except (AssertionError, FileNotFoundError) as e:
            differ += 1
            print(f"{f.name}: {str(e).splitlines()[0]}")
    only_b = sorted({f.name for f in b.glob("*.parquet")} - {f.name for f in files})
    for name in only_b:
        print(f"{name}: only in {b}")
    print(f"{len(files)} tables compared, {differ} differ, {len(only_b)} only in the second folder")
    return 1 if differ or only_b or not files else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("dump", "compare"))
    parser.add_argument("dirs", nargs="+", type=Path)
    args = parser.parse_args()
    if args.command == "dump" and len(args.dirs) == 1:
        dump(args.dirs[0])
        return 0
    if args.command == "compare" and len(args.dirs) == 2:
        return compare(*args.dirs)
    parser.error("dump takes one folder, compare two")
    return 2


if __name__ == "__main__":
    sys.exit(main())
