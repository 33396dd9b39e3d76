"""Thesis Figs. 5.4 and 5.9-5.11 on our generator, the tables of docs/results/clusters.md (issue 30 item 4).

Fig. 5.4: 12 archetypes x 8 mixture models x 10 pairs (960 pairs; the thesis: 900). Figs. 5.9-5.10: the thesis'
two-cluster archetype in p = 2, 10, 30, 100 D, max_overlap 1e-7 ... 0.5 (min_overlap = max_overlap / 10), 20 data
sets per setting (the thesis: 100; COMPASS_HEAVY=1 runs 100 in the asset). Fig. 5.11: quantiles of the pairwise
LDA overlap per shipped archetype from var/clusters_results/overlaps.csv (scripts/clusters_results.py run).

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/clusters_figures.py  (~1.5 min of one core)
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.clusters.figures import approximation_summary, difficulty_curve, overlap_approximations  # noqa: E402

DIMS = (2, 10, 30, 100)
MAX_OVERLAPS = (1e-7, 1e-5, 1e-3, 1e-2, 0.05, 0.1, 0.2, 0.3, 0.5)


def main() -> None:
    start = time.process_time()
    print(approximation_summary(overlap_approximations(8)).to_markdown(index=False, floatfmt=".3f"))
    curve = difficulty_curve(DIMS, MAX_OVERLAPS, 20)
    for metric in ("ami", "silhouette"):
        for shape in ("convex", "distorted"):
            c = curve[curve["shape"] == shape].copy()
            c["cell"] = c[metric].map("{:.2f}".format) + " (" + c[f"{metric}_se"].map("{:.2f}".format) + ")"
            print(f"\n{metric}, {shape}: mean (SE) over 20 data sets\n")
            print(c.pivot(index="max_overlap", columns="dim", values="cell").to_markdown())
    overlaps = ROOT / "var" / "clusters_results" / "overlaps.csv"
    if overlaps.exists():
        o = pd.read_csv(overlaps)
        o = o[(o["generator"] == "thesis") & (o["shape"] == "convex")]
        q = o.groupby("archetype").agg(min_overlap=("requested_min", "first"), max_overlap=("requested_max", "first"),
                                       q10=("lda_overlap", lambda v: v.quantile(0.1)),
                                       median=("lda_overlap", "median"), q90=("lda_overlap", lambda v: v.quantile(0.9)),
                                       max=("lda_overlap", "max"))
        print("\nFig. 5.11: pairwise LDA overlap per archetype (convex, thesis generator)\n")
        print(q.to_markdown(floatfmt=".3g"))
    print(f"\nCPU {time.process_time() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
