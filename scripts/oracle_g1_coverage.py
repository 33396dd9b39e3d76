"""Coverage of the G = 1 oracle range and of its 95 % confidence interval on synthetic PGM data (seed 002 §4.3.2).

Synthetic data only (`compass.oracle.synthetic.generate`, the two regimes of `compass.oracle.validation.REGIMES`).
For each regime, number of models L and prompt count N, `--reps` seeded draws at G = 1: how often the true oracle
lies in the identified range [max(SOTA, split-sample), naive] (`headline`) and in its interval (`range_interval`).
With `--warehouse PATH` it also prints, for every real dataset of that warehouse, each model set's range and its
interval (what `oracle.summary` publishes as headline_lo/hi, headline_ci_lo/hi).
Results: docs/results/oracle.md, "The G = 1 range and its uncertainty".

    .venv/bin/python scripts/oracle_g1_coverage.py [--reps 200] [--warehouse var/warehouse.duckdb]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compass.oracle.headline import headline, range_interval  # noqa: E402
from compass.oracle.naive import naive_oracle  # noqa: E402
from compass.oracle.records import build_arrays  # noqa: E402
from compass.oracle.split_sample import split_sample_oracle  # noqa: E402
from compass.oracle.synthetic import generate  # noqa: E402
from compass.oracle.validation import REGIMES  # noqa: E402


def coverage(regime: str, n_models: int, n_prompts: int, reps: int) -> dict:
    covered, ci_covered, width = [], [], []
    for r in range(reps):
        data = generate(n_prompts, n_models, 1, seed=100_000 + 1000 * r + n_models, **REGIMES[regime])
        arrays = build_arrays(data.records, dataset="g1")
        sota = float(arrays.p_hat.mean(axis=0).max())
        head = headline(float("nan"), sota, naive_oracle(arrays)[0], split_sample_oracle(arrays)[0])
        lo, hi = range_interval(arrays.p_hat)
        covered.append(head.lo <= data.true_oracle <= head.hi)
        ci_covered.append(lo <= data.true_oracle <= hi)
        width.append(hi - lo - (head.hi - head.lo))
    return {"regime": regime, "n_models": n_models, "n_prompts": n_prompts, "reps": reps,
            "range_covers": np.mean(covered), "ci95_covers": np.mean(ci_covered),
            "ci_extra_width_points": 100 * np.mean(width)}


def real_ranges(path: str) -> pd.DataFrame:
    """Each real dataset's identified range and its 95 % interval, per model set, from a warehouse's records."""
    from resources import readers
    from resources.warehouse import Warehouse

    wh = Warehouse(path)
    rows = []
    for dataset in sorted(wh.query("select distinct dataset from oracle.summary")["dataset"]):
        for ms in readers.oracle_dataset(wh, dataset).sets:
            arrays = ms.arrays
            head = headline(float("nan"), float(arrays.p_hat.mean(axis=0).max()), naive_oracle(arrays)[0],
                            split_sample_oracle(arrays)[0])
            lo, hi = range_interval(arrays.p_hat)
            rows.append({"dataset": dataset, "model_set": ms.name, "G": arrays.min_generations,
                         "prompts": arrays.n_prompts, "range_lo": head.lo, "range_hi": head.hi, "ci95_lo": lo,
                         "ci95_hi": hi})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--warehouse", help="also print the real datasets' ranges from this warehouse")
    args = parser.parse_args()
    if args.warehouse:
        with pd.option_context("display.width", 160, "display.float_format", "{:.4f}".format):
            print(real_ranges(args.warehouse).to_string(index=False))
    rows = [coverage(regime, l, n, args.reps) for regime in REGIMES for l in (2, 5, 10, 20) for n in (200, 1000)]
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
    print(f"worst CI coverage {table['ci95_covers'].min():.3f} (nominal 0.95); worst range coverage "
          f"{table['range_covers'].min():.3f}")


if __name__ == "__main__":
    main()
