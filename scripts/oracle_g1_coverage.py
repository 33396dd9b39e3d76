"""Coverage of the G = 1 oracle range and of its 95 % confidence interval by simulation (seed 002 §4.3.2).

Worlds, each drawn `--reps` times (seeded) per number of models L and prompt count N, at G = 1 (`--generations`):
* `pgm paper`, `pgm high_accuracy`: the synthetic PGM (`compass.oracle.synthetic.generate`, the two regimes of
  `compass.oracle.validation.REGIMES`), whose item difficulty varies widely;
* `homogeneous 0.99` (issue 47): every model right with probability 0.99 on every prompt, so the truth is 0.99 and
  many models answer every prompt right (the ceiling, where a normal standard error is 0);
* `gsm8k-like` (issue 47): accuracy near 97 %, item difficulty shared by all models (`shared_difficulty_draw`);
* with `--warehouse PATH`, `resampled livecodebench`, a world with the real data's nuisance (`resampled_draw`).
For each draw: whether the true oracle lies in the identified range [max(SOTA, split-sample), naive] (`headline`),
and in the 95 % interval, before (`normal_interval`, the normal bound replaced in issue 47) and after
(`range_interval`, Clopper–Pearson), with each interval's width. With `--warehouse PATH` it also prints, for every
real dataset of that warehouse, each model set's range and both intervals (what `oracle.summary` publishes as
headline_lo/hi, headline_ci_lo/hi). Results: docs/results/oracle.md, "The G = 1 range and its uncertainty".

    .venv/bin/python scripts/oracle_g1_coverage.py [--reps 200] [--generations 1] [--worlds NAME ...]
        [--warehouse var/warehouse.duckdb [--no-pgm]]
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


Draw = Callable[[int, int, int, int], tuple[pd.DataFrame, float]]  # (L, N, rep, G) -> (records, true oracle)


def normal_interval(p_hat: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The interval `range_interval` replaced in issue 47, kept here for the before/after table only: the same
    Bonferroni lower end and one-sided upper end, with normal bounds mean ∓ z · sd / √N over prompts, whose width
    is 0 when a model (or the per-prompt best) is right on every prompt."""
    from scipy.stats import norm

    p = np.asarray(p_hat, dtype=float)
    n, n_models = p.shape
    a = (1.0 - level) / 2.0
    se = p.std(axis=0, ddof=1) / np.sqrt(n)
    lo = float(np.max(p.mean(axis=0) - norm.ppf(1.0 - a / n_models) * se))
    best = p.max(axis=1)
    hi = float(best.mean() + norm.ppf(1.0 - a) * best.std(ddof=1) / np.sqrt(n))
    return max(lo, 0.0), min(hi, 1.0)


def records_from_rates(p: np.ndarray, generations: int, rng: np.random.Generator) -> pd.DataFrame:
    """Long records with `generations` Bernoulli(p_nl) outcomes per (prompt, model) cell, unit cost."""
    n, l = p.shape
    q, m, g = np.indices((n, l, generations))
    correct = rng.random((n, l, generations)) < p[:, :, None]
    return pd.DataFrame({"query_id": q.ravel().astype(str), "model_id": m.ravel().astype(str),
                         "generation": g.ravel(), "correct": correct.ravel().astype(float), "cost_usd": 1.0})


def pgm_draw(regime: str) -> Draw:
    """Draws from the synthetic PGM world of `regime`: (records, true oracle)."""
    def draw(n_models: int, n_prompts: int, rep: int, generations: int) -> tuple[pd.DataFrame, float]:
        data = generate(n_prompts, n_models, generations, seed=100_000 + 1000 * rep + n_models, **REGIMES[regime])
        return data.records, data.true_oracle
    return draw


def homogeneous_draw(accuracy: float) -> Draw:
    """Every model right with probability `accuracy` on every prompt (issue 47): the true oracle is `accuracy`
    (eq. 4, max over equal rates), the best single model's rate equals it, and near 1 many models are right on
    every prompt. Seeds 300,000 + 1000 · rep + L."""
    def draw(n_models: int, n_prompts: int, rep: int, generations: int) -> tuple[pd.DataFrame, float]:
        rng = np.random.default_rng(300_000 + 1000 * rep + n_models)
        return records_from_rates(np.full((n_prompts, n_models), accuracy), generations, rng), accuracy
    return draw


def shared_difficulty_draw(ability: float = 4.6, ability_sd: float = 0.3, difficulty_sd: float = 1.5,
                           interaction_sd: float = 0.5) -> Draw:
    """A gsm8k-like world (issue 47): logit p_nl = θ_l − d_n + e_nl, a Rasch model whose item difficulty
    d_n ~ Normal(0, `difficulty_sd`) is shared by every model, abilities θ_l ~ Normal(`ability`, `ability_sd`) and
    a small model-by-item term e_nl ~ Normal(0, `interaction_sd`), all redrawn per draw. The defaults give a mean
    accuracy near 0.97, a best model near 0.98 and a true oracle near 0.99 at L = 10, N = 300 (gsm8k: 9 models, 300
    prompts, SOTA 97.7 %, naive oracle 99.0 %). The truth is the mean over the drawn prompts of max_l p_nl
    (eq. 4). Seeds 400,000 + 1000 · rep + L."""
    def draw(n_models: int, n_prompts: int, rep: int, generations: int) -> tuple[pd.DataFrame, float]:
        rng = np.random.default_rng(400_000 + 1000 * rep + n_models)
        logit = (rng.normal(ability, ability_sd, n_models)[None, :] - rng.normal(0.0, difficulty_sd, n_prompts)[:, None]
                 + rng.normal(0.0, interaction_sd, (n_prompts, n_models)))
        p = 1.0 / (1.0 + np.exp(-logit))
        return records_from_rates(p, generations, rng), float(p.max(axis=1).mean())
    return draw


def resampled_draw(truth: np.ndarray) -> Draw:
    """Draws from a world with the real data's nuisance: `truth` = a real dataset's (prompt x model) success
    rates over G >= 2 generations (livecodebench, G = 10), taken as the true p_nl. Each draw picks L of its models
    and resamples N of its prompts (with replacement), then Bernoulli(p_nl) outcomes per cell; the true oracle
    is the mean over the drawn prompts of max_l p_nl (eq. 4). No PGM assumption: the difficulty distribution and
    the models' dependence are the real ones."""
    def draw(n_models: int, n_prompts: int, rep: int, generations: int = 1) -> tuple[pd.DataFrame, float]:
        rng = np.random.default_rng(200_000 + 1000 * rep + n_models)
        p = truth[rng.integers(0, truth.shape[0], n_prompts)][:, rng.choice(truth.shape[1], n_models, replace=False)]
        return records_from_rates(p, generations, rng), float(p.max(axis=1).mean())
    return draw


def coverage(world: str, draw: Draw, n_models: int, n_prompts: int, reps: int, generations: int = 1) -> dict:
    """Coverage of the range and of both intervals (before: `normal_interval`, after: `range_interval`) over
    `reps` draws, with mean widths in points."""
    covered, before, after, width_before, width_after = [], [], [], [], []
    for r in range(reps):
        records, true_oracle = draw(n_models, n_prompts, r, generations)
        arrays = build_arrays(records, dataset="g1")
        sota = float(arrays.p_hat.mean(axis=0).max())
        head = headline(float("nan"), sota, naive_oracle(arrays)[0], split_sample_oracle(arrays)[0])
        covered.append(head.lo <= true_oracle <= head.hi)
        for hits, widths, (lo, hi) in ((before, width_before, normal_interval(arrays.p_hat)),
                                       (after, width_after, range_interval(arrays.p_hat))):
            hits.append(lo <= true_oracle <= hi)
            widths.append(hi - lo)
    return {"world": world, "G": generations, "n_models": n_models, "n_prompts": n_prompts, "reps": reps,
            "range_covers": np.mean(covered), "before_covers": np.mean(before), "after_covers": np.mean(after),
            "before_width": 100 * np.mean(width_before), "after_width": 100 * np.mean(width_after)}


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
            before, after = normal_interval(arrays.p_hat), range_interval(arrays.p_hat)
            rows.append({"dataset": dataset, "model_set": ms.name, "G": arrays.min_generations,
                         "prompts": arrays.n_prompts, "range_lo": head.lo, "range_hi": head.hi,
                         "before_lo": before[0], "before_hi": before[1], "after_lo": after[0], "after_hi": after[1]})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--generations", type=int, default=1, help="generations per cell in every world")
    parser.add_argument("--worlds", nargs="*", help="only these worlds (names as printed)")
    parser.add_argument("--models", type=int, nargs="*", default=[2, 5, 10, 20])
    parser.add_argument("--prompts", type=int, nargs="*", default=[200, 300, 1000])
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
    worlds: dict[str, Draw] = {} if args.no_pgm else {
        **{f"pgm {regime}": pgm_draw(regime) for regime in REGIMES},
        "homogeneous 0.99": homogeneous_draw(0.99), "gsm8k-like": shared_difficulty_draw()}
    if args.warehouse:
        try:
            worlds["resampled livecodebench"] = resampled_draw(real_truth(args.warehouse))
        except ValueError as exc:
            parser.error(f"--warehouse {args.warehouse}: {exc}")
    if args.worlds:
        unknown = sorted(set(args.worlds) - set(worlds))
        if unknown:
            parser.error(f"unknown worlds {unknown}; known: {sorted(worlds)}")
        worlds = {name: draw for name, draw in worlds.items() if name in args.worlds}
    rows = []
    for world, draw in worlds.items():
        for n in args.prompts:
            for l in args.models:
                rows.append(coverage(world, draw, l, n, args.reps, args.generations))
                print(f"done: {world}, L = {l}, N = {n}", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    worst = table.groupby("world")[["range_covers", "before_covers", "after_covers"]].min()
    widths = table.groupby("world")[["before_width", "after_width"]].mean()
    with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
        print(table.to_string(index=False))
        print("\nworst coverage per world (nominal 0.95) and mean width, points:")
        print(worst.join(widths).to_string())


if __name__ == "__main__":
    main()
