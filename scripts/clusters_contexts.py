"""Issue 30 item 5: do segments of real prompts, as ML Compass contexts, beat one global model choice out of sample?

Runs compass.clusters.contexts.context_study on the embedded raw route labels (data/route_labels.parquet, gold rows:
query text and r(q), the gain of gpt-4-1106-preview over the alternative model) with the full design (k = 2, 4, 8
segments, 20 seeded splits, 30 % held out) and prints the tables of docs/results/clusters.md: per dataset and w
factor, the held-out gain of K-Means / EM-GMM segments and of random segments of the same sizes over the global
choice (paired SE over splits), the in-sample gain beside it, and the per-query ceiling.

Usage: OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/clusters_contexts.py [--embedder=tfidf]  (~35 s of one core)
The query embedder is WordLlama by default (issue 46); the tables of docs/results/clusters.md dated before it were
printed with TF-IDF/LSA, which `--embedder=tfidf` reproduces.
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

from compass.clusters.contexts import chosen_k, context_study, helps  # noqa: E402

N_ROUNDS, KS = 20, (2, 4, 8)


def cell(row: pd.Series) -> str:
    return f"{row['gain_vs_global']:+.4f} ({row['gain_vs_global_se']:.4f})"


def main(args: list[str]) -> None:
    embedder = next((a.split("=", 1)[1] for a in args if a.startswith("--embedder=")), "wordllama")
    labels = pd.read_parquet(ROOT / "data" / "route_labels.parquet")
    start = time.process_time()
    study = context_study(labels, KS, N_ROUNDS, embedder=embedder)
    print(f"query embedder: {embedder}")
    print(f"CPU {time.process_time() - start:.1f} s", file=sys.stderr)
    means = labels[labels["label_kind"] == "gold"].groupby("dataset")["outcome"].agg(["size", "mean"])
    print(means.to_markdown(floatfmt=".3f"))
    seg = study[study["method"].isin(["kmeans", "em_gmm", "random"])].copy()
    seg["cell"] = seg.apply(cell, axis=1)
    print("\nHeld-out gain over the global choice, per query in r's units: mean (paired SE over splits)\n")
    print(seg.pivot_table(index=["dataset", "k", "method"], columns="w_factor", values="cell", aggfunc="first")
          .to_markdown())
    at1 = study[study["w_factor"] == 1.0].pivot_table(index=["dataset", "k"], columns="method",
                                                       values=["held_out", "in_sample"])
    print("\nAt w = mean r (f = 1): held-out and in-sample utility relative to always M_a\n")
    print(at1.round(4).to_markdown())
    wins = helps(study)
    print(f"\nCells beating both references by > 2 SE: {len(wins)} of {len(study[study['method'].isin(['kmeans', 'em_gmm'])])}\n")
    print(wins.groupby(["dataset", "method"]).size().to_markdown())
    print("\nk published as contexts:", {d: chosen_k(g) for d, g in study.groupby("dataset")})


if __name__ == "__main__":
    main(sys.argv[1:])
