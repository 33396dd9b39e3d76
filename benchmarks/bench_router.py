"""Fitting one DR meta-router (seed 003 §3.3) on 5,000 queries with d = 50 and 500-tree random forests: target
under 10 s on 2 cores. The baseline, measured in the same run, is one plain random forest of the same size on
the same data (a pooled router); the DR meta-router fits five forests (propensity, two outcome models, the CATE
model and the final regression), so the ratio shows what debiasing costs over RouteLLM-style pooling.

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

TARGET_SECONDS = 10.0


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
    print(f"plain random forest (pooled router): {plain:6.2f} s")
    print(f"DR meta-router:                      {meta:6.2f} s  ({meta / plain:.1f}x the plain forest)")
    ok = meta < TARGET_SECONDS
    print(f"target < {TARGET_SECONDS:g} s on 2 cores: {'OK' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
