"""How often meta_cv's one-SE rule serves a member other than the simplest when all members are equal in expectation
(issue 46 fourth review, finding 4): fold score = the fold's difficulty (shared by every member) + independent noise
per member and fold, five members, K folds. The served rule (`routers.one_se_choice`: Nadeau-Bengio-corrected paired
SE, no member over a simpler one with a higher mean) beside the third review's rule (uncorrected paired SE s/√K, no
such condition), replayed here from the same fold scores.

Usage: .venv/bin/python scripts/one_se_null_rate.py [--worlds 4000] [--seed 0]
"""

import argparse
import sys

import numpy as np

from compass.router.routers import CV_CANDIDATES, one_se_choice


def third_review_choice(scores: dict[str, np.ndarray]) -> str:
    """The rule before this fix: the first member within s/√K of its paired fold differences with the best."""
    means = {name: float(np.mean(v)) for name, v in scores.items()}
    best = scores[max(means, key=means.__getitem__)]
    k = len(best)
    return next(name for name, v in scores.items()
                if max(means.values()) - means[name] <= np.std(best - v, ddof=1) / np.sqrt(k))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worlds", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("| K folds | served rule: non-simplest | third review's rule: non-simplest |\n|---|---|---|")
    for k in (3, 5):
        served = before = 0
        for _ in range(args.worlds):
            difficulty = rng.normal(0.0, 0.1, k)
            scores = {m: difficulty + rng.normal(0.0, 0.02, k) for m in CV_CANDIDATES}
            served += one_se_choice(scores) != CV_CANDIDATES[0]
            before += third_review_choice(scores) != CV_CANDIDATES[0]
        print(f"| {k} | {100 * served / args.worlds:.0f} % | {100 * before / args.worlds:.0f} % |")


if __name__ == "__main__":
    main(sys.argv[1:])
