"""Coverage of the G = 1 oracle range and of its 95 % confidence interval by simulation (seed 002 §4.3.2).

Synthetic PGM worlds (`compass.oracle.synthetic.generate`, the two regimes of `compass.oracle.validation.REGIMES`).
For each regime, number of models L and prompt count N, `--reps` seeded draws at G = 1: how often the true oracle
lies in the identified range [max(SOTA, split-sample), naive] (`headline`) and in its interval (`range_interval`).
With `--warehouse PATH` it also prints, for every real dataset of that warehouse, each model set's range and its
interval (what `oracle.summary` publishes as headline_lo/hi, headline_ci_lo/hi), and adds a third world with the
real data's nuisance (`resampled_draw`): livecodebench's G = 10 success rates taken as the truth, models and prompts
resampled, one generation drawn per cell.
Results: docs/results/oracle.md, "The G = 1 range and its uncertainty".

    .venv/bin/python scripts/oracle_g1_coverage.py [--reps 200] [--warehouse var/warehouse.duckdb [--no-pgm]]
"""

import argparse
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compass.oracle.headline import headline, range_interval  # noqa: E402
from compass.oracle.naive import naive_oracle  # noqa: E402
from compass.oracle.records import build_arrays  # noqa: E402
from compass.oracle.split_sample import split_sample_oracle  # noqa: E402
from compass.oracle.synthetic import generate  # noqa: E402
from compass.oracle.validation import REGIMES  # noqa: E402


def pgm_draw(regime: str) -> Callable[[int, int, int], tuple[pd.DataFrame, float]]:
    """G = 1 draws from the synthetic PGM world of `regime`: (records, true oracle)."""
    def draw(n_models: int, n_prompts: int, rep: int) -> tuple[pd.DataFrame, float]:
        data = generate(n_prompts, n_models, 1, seed=100_000 + 1000 * rep + n_models, **REGIMES[regime])
        return data.records, data.true_oracle
    return draw


def resampled_draw(truth: np.ndarray) -> Callable[[int, int, int], tuple[pd.DataFrame, float]]:
    """G = 1 draws from a world with the real data's nuisance: `truth` = a real dataset's (prompt x model) success
    rates over G >= 2 generations (livecodebench, G = 10), taken as the true p_nl. Each draw picks L of its models
    and resamples N of its prompts (with replacement), then one Bernoulli(p_nl) outcome per cell; the true oracle
    is the mean over the drawn prompts of max_l p_nl (eq. 4). No PGM assumption: the difficulty distribution and
    the models' dependence are the real ones."""
    def draw(n_models: int, n_prompts: int, rep: int) -> tuple[pd.DataFrame, float]:
        rng = np.random.default_rng(200_000 + 1000 * rep + n_models)
        p = truth[rng.integers(0, truth.shape[0], n_prompts)][:, rng.choice(truth.shape[1], n_models, replace=False)]
        q, m = np.indices(p.shape)
        records = pd.DataFrame({"query_id": q.ravel().astype(str), "model_id": m.ravel().astype(str), "generation": 0,
                                "correct": (rng.random(p.size) < p.ravel()).astype(float), "cost_usd": 1.0})
        return records, float(p.max(axis=1).mean())
    return draw


def coverage(world: str, draw: Callable[[int, int, int], tuple[pd.DataFrame, float]], n_models: int,
             n_prompts: int, reps: int) -> dict:
    covered, ci_covered, width = [], [], []
    for r in range(reps):
        records, true_oracle = draw(n_models, n_prompts, r)
        arrays = build_arrays(records, dataset="g1")
        sota = float(arrays.p_hat.mean(axis=0).max())
        head = headline(float("nan"), sota, naive_oracle(arrays)[0], split_sample_oracle(arrays)[0])
        lo, hi = range_interval(arrays.p_hat)
        covered.append(head.lo <= true_oracle <= head.hi)
        ci_covered.append(lo <= true_oracle <= hi)
        width.append(hi - lo - (head.hi - head.lo))
    return {"world": world, "n_models": n_models, "n_prompts": n_prompts, "reps": reps,
            "range_covers": np.mean(covered), "ci95_covers": np.mean(ci_covered),
            "ci_extra_width_points": 100 * np.mean(width)}


def real_truth(path: str, dataset: str = "livecodebench") -> np.ndarray:
    """The (prompt x model) success rates of the widest model set of a G >= 2 dataset in a warehouse."""
    from resources import readers
    from resources.warehouse import Warehouse

    arrays = readers.oracle_dataset(Warehouse(path), dataset).sets[0].arrays
    if arrays.min_generations < 2:
        raise ValueError(f"{dataset}: needs >= 2 generations per model to serve as a world's truth")
    return np.asarray(arrays.p_hat, dtype=float)


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
    parser.add_argument("--no-pgm", action="store_true", help="only the resampled real world (needs --warehouse)")
    args = parser.parse_args()
    if args.no_pgm and not args.warehouse:
        parser.error("--no-pgm needs --warehouse (the resampled world's truth comes from its records)")
    if args.warehouse and not Path(args.warehouse).is_file():
        parser.error(f"--warehouse {args.warehouse}: no such file")
    if args.warehouse:
        with pd.option_context("display.width", 160, "display.float_format", "{:.4f}".format):
            print(real_ranges(args.warehouse).to_string(index=False))
    worlds = {} if args.no_pgm else {f"pgm {regime}": pgm_draw(regime) for regime in REGIMES}
    if args.warehouse:
        try:
            worlds["resampled livecodebench"] = resampled_draw(real_truth(args.warehouse))
        except ValueError as exc:
            parser.error(f"--warehouse {args.warehouse}: {exc}")
    rows = [coverage(world, draw, l, n, args.reps) for world, draw in worlds.items() for l in (2, 5, 10, 20)
            for n in (200, 1000)]
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
    print(f"worst CI coverage {table['ci95_covers'].min():.3f} (nominal 0.95); worst range coverage "
          f"{table['range_covers'].min():.3f}")


if __name__ == "__main__":
    main()
