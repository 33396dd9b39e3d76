"""One HEART-UCB round on pools of 125, 75, 25 and 5 models (CUPID §4.3, Table 8: V1-V4): target under
0.2 s at M = 125.

A round is what the algorithm adds to a duel: posterior of every (model, objective) with L = K = 125
latent objectives (15,625 GP rows predicted), the HEART scores, the pair, the belief update and the
Laplace refit. Timed at round 25 (24 comparisons already stored, the paper's scalability horizon) on a
synthetic pool; RUCB's round (upper bounds, champion, opponent, win-matrix update) on the same pool is the
baseline measured in the same run. Prints the best-of-5 wall times and their ratio per pool size.

    .venv/bin/python benchmarks/bench_matching.py
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import copy
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compass.matching.baselines import RUCB
from compass.matching.heart import HeartOptions, HeartUCB

TARGET_SECONDS = 0.2
SIZES, WARM_ROUNDS, REPEATS = (125, 75, 25, 5), 24, 5


def warmed(matcher, utility: np.ndarray, rng: np.random.Generator):
    """`matcher` after WARM_ROUNDS duels decided by a hidden utility."""
    for t in range(1, WARM_ROUNDS + 1):
        i, j = matcher.select(t, 1.0)
        matcher.feedback(np.asarray(utility > np.quantile(utility, 0.75), float))
        matcher.observe(t, i, j, bool(utility[i] > utility[j]), 0.001)
    return matcher


def one_round(matcher, utility: np.ndarray) -> None:
    t = WARM_ROUNDS + 1
    i, j = matcher.select(t, 1.0)
    matcher.observe(t, i, j, bool(utility[i] > utility[j]), 0.001)
    matcher.best()


def best_round(matcher, utility: np.ndarray) -> float:
    """Minimum over REPEATS of one round's wall time, each from a fresh copy of the same warmed state."""
    times = []
    for _ in range(REPEATS):
        fresh = copy.deepcopy(matcher)
        start = time.perf_counter()
        one_round(fresh, utility)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    print(f"{'M = L':>6s} {'HEART-UCB s':>12s} {'RUCB s':>9s} {'ratio':>6s}")
    at_125 = None
    for K in SIZES:
        rng = np.random.default_rng(0)
        utility, prices = rng.normal(size=K), 10 ** rng.uniform(-1, 1.5, K)
        heart = warmed(HeartUCB(None, prices, prices / 2000, 1.0, 25, 0, HeartOptions()), utility, rng)
        rucb = warmed(RUCB(K, 0), utility, rng)
        ours, base = best_round(heart, utility), best_round(rucb, utility)
        at_125 = ours if K == 125 else at_125
        print(f"{K:6d} {ours:12.4f} {base:9.5f} {ours / base:6.0f}")
    print(f"HEART-UCB round at M = L = 125 with {WARM_ROUNDS} comparisons: {at_125:.3f} s (target < {TARGET_SECONDS} s; "
          f"paper Table 8: GP update 0.172 s + UCB scoring 0.547 s): {'OK' if at_125 < TARGET_SECONDS else 'MISSED'}")
    return 0 if at_125 < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
