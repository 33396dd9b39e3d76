"""Coverage of the 90 % rank intervals across model-effect sizes (docs/results/mlcompass.md, issue 29).

Simulated catalogs (`compass.mlcompass.rank_coverage`, synthetic data with known truth): 40 models, a
share of them with outcome data, each model with its own logit-scale effect of sd `model_sd`. For each
sd, the bootstrap of issue 11 (prompts, imputation, factor model) and the one of issue 29 (plus the
outcome models resampled and the model effects drawn) are run on the same catalogs; coverage is the
share of (model, catalog) pairs whose actual rank lies in the interval, with its standard error over
catalogs.

Usage: .venv/bin/python scripts/mlcompass_rank_coverage.py [--seeds 10] [--n-boot 60] [--outcome-models 8 4]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from compass.mlcompass.rank_coverage import coverage

VARIANTS = {"issue 11 (prompts, imputation, factor model)": {"resample_models": False, "model_effects": False},
            "issue 29 (+ outcome models, model effects)": {}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-boot", type=int, default=60)
    parser.add_argument("--sd", type=float, nargs="+", default=[0.0, 0.2, 0.5, 1.0])
    parser.add_argument("--outcome-models", type=int, nargs="+", default=[8])
    args = parser.parse_args()
    rows, start = [], time.process_time()
    for n_out in args.outcome_models:
        for sd in args.sd:
            for name, options in VARIANTS.items():
                per_seed = coverage(range(args.seeds), args.n_boot, sd, n_outcome_models=n_out, **options)
                rows.append({"outcome models": n_out, "model-effect sd": sd, "bootstrap": name,
                             "coverage": per_seed["coverage"].mean(),
                             "se": per_seed["coverage"].std(ddof=1) / len(per_seed) ** 0.5,
                             "min over catalogs": per_seed["coverage"].min(),
                             "mean width (ranks)": per_seed["width"].mean(),
                             "tau_hat mean": per_seed["tau_hat"].mean(),
                             "supported": bool(per_seed["supported"].all())})
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"))
    print(f"\n{args.seeds} catalogs of 40 models per row, B = {args.n_boot}; CPU {time.process_time() - start:.0f} s")


if __name__ == "__main__":
    main()
