"""Fitting one DR meta-router (seed 003 §3.3) on 5,000 queries with d = 50 and 500-tree random forests (R
randomForest defaults, spec §2.9). The baseline, measured in the same run, is one plain random forest of the same
size on the same data (the pooled, RouteLLM-style router). The DR meta-router fits four forests of that size
(propensity, the preference outcome model, the CATE model and the final regression) and one on the 500 gold rows,
so the target is that debiasing costs at most 4x the plain forest: no refits beyond the method's own. LightGBM
(the XGBoost ablation, 300 boosting rounds, nuisances cross-fitted in 5 folds, one thread) is timed too.

An absolute target (under 10 s) was dropped: one 500-tree scikit-learn forest on these 5,000 rows takes 10-13 s
on 2 cores by itself, and LightGBM's random-forest mode is no faster (7.8 s with 255 leaves).

    .venv/bin/python benchmarks/bench_router.py
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.router.learners import LearnerSpec  # noqa: E402
from compass.router.routers import fit_router  # noqa: E402
from compass.router.synthetic import make_data  # noqa: E402

TARGET_RATIO = 4.0


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    # 500 gold + 4,500 preference training queries (the paper's n = 500 of 5,000), synthetic (spec §4)
    data = make_data(n_gs=500, N=5500, D=50, n_test=500, seed=0)
    spec = LearnerSpec(n_estimators=500, seed=0, n_jobs=2)
    cate = LearnerSpec(n_estimators=500, min_samples_leaf=50, seed=0, n_jobs=2)
    plain = timed(lambda: fit_router("pooled", spec, data.X_g, data.r, data.X_p, data.y))
    meta = timed(lambda: fit_router("meta_dr", spec, data.X_g, data.r, data.X_p, data.y, cate=cate))
    # one thread: LightGBM's OpenMP threads spin, and on a shared 2-core machine n_jobs=2 ran 15x slower
    fast = LearnerSpec("lightgbm", n_estimators=500, seed=0, n_jobs=1)
    boosted = timed(lambda: fit_router("meta_dr", fast, data.X_g, data.r, data.X_p, data.y))
    print(f"plain random forest (pooled router): {plain:6.2f} s")
    print(f"DR meta-router, random forests:      {meta:6.2f} s  ({meta / plain:.1f}x the plain forest)")
    print(f"DR meta-router, LightGBM:            {boosted:6.2f} s  ({boosted / plain:.2f}x the plain forest)")
    ok = meta / plain <= TARGET_RATIO
    print(f"target: DR meta-router <= {TARGET_RATIO:g}x the plain forest: {'OK' if ok else 'MISSED'}")
    return 0 if ok else 1

if __name__ == "__main__":
    raise SystemExit(main())
