"""Coverage of the 90 % rank intervals across model-effect sizes and worlds (docs/results/mlcompass.md, issues 29, 42).

Simulated catalogs (`compass.mlcompass.rank_coverage`, synthetic data with known truth): 40 models, a
share of them with outcome data, each model with its own logit-scale effect of sd `model_sd`. Default: for
each sd, the bootstrap of issue 11 (prompts, imputation, factor model) and the one of issue 29 (plus the
outcome models resampled and the model effects drawn) are run on the same catalogs. `--worlds`: in each world
of issue 42 (`WORLDS`: the project's, a saturating utility, outcome models from the bottom of the range, and
both), issue 29's bootstrap and the one that widens the model effects beyond the outcome models' range
(`reach`). Coverage is the share of (model, catalog) pairs whose actual rank lies in the interval, over all
models and over the true top 5, with standard errors over catalogs.

Usage: .venv/bin/python scripts/mlcompass_rank_coverage.py [--seeds 10] [--n-boot 60] [--outcome-models 8 4]
       .venv/bin/python scripts/mlcompass_rank_coverage.py --worlds [--seeds 40] [--first-seed 0] [--n-boot 60]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from compass.mlcompass.rank_coverage import WORLDS, coverage
from compass.mlcompass.rank_uncertainty import REACH

VARIANTS = {"issue 11 (prompts, imputation, factor model)": {"resample_models": False, "model_effects": False,
                                                             "reach": 0.0},
            "issue 29 (+ outcome models, model effects)": {"reach": 0.0}}
WORLD_VARIANTS = {"issue 29": {"reach": 0.0},
                  f"issue 42 (effects widened beyond the outcome range, reach {REACH:g})": {}}


def summary(per_seed: pd.DataFrame) -> dict[str, float | bool]:
    """Mean coverage (all, top 5) with standard errors over catalogs, width, tau_hat, support."""
    se = per_seed.std(ddof=1, numeric_only=True) / len(per_seed) ** 0.5
    return {"coverage": per_seed["coverage"].mean(), "se": se["coverage"],
            "top-5 coverage": per_seed["coverage_top5"].mean(), "top-5 se": se["coverage_top5"],
            "min over catalogs": per_seed["coverage"].min(), "mean width (ranks)": per_seed["width"].mean(),
            "tau_hat mean": per_seed["tau_hat"].mean(), "supported": bool(per_seed["supported"].all())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0, help="catalogs first-seed .. first-seed + seeds - 1")
    parser.add_argument("--n-boot", type=int, default=60)
    parser.add_argument("--sd", type=float, nargs="+", default=[0.0, 0.2, 0.5, 1.0])
    parser.add_argument("--outcome-models", type=int, nargs="+", default=[8])
    parser.add_argument("--worlds", action="store_true", help="the worlds of issue 42 instead of the sd sweep")
    args = parser.parse_args()
    rows, start, seeds = [], time.process_time(), range(args.first_seed, args.first_seed + args.seeds)
    if args.worlds:
        for name, world in WORLDS.items():
            for variant, options in WORLD_VARIANTS.items():
                per_seed = coverage(seeds, args.n_boot, world.model_sd, ceiling_share=world.ceiling_share,
                                    outcome_pool=world.outcome_pool, **options)
                rows.append({"world": name, "bootstrap": variant, **summary(per_seed)})
    for n_out in [] if args.worlds else args.outcome_models:
        for sd in args.sd:
            for name, options in VARIANTS.items():
                per_seed = coverage(seeds, args.n_boot, sd, n_outcome_models=n_out, **options)
                rows.append({"outcome models": n_out, "model-effect sd": sd, "bootstrap": name, **summary(per_seed)})
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"))
    print(f"\n{args.seeds} catalogs of 40 models per row, B = {args.n_boot}; CPU {time.process_time() - start:.0f} s")


if __name__ == "__main__":
    main()
