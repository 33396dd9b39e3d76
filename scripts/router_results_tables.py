"""Print the two meta-router tables of docs/results.md (seed 003): efficiency gain on the embedded real labels
and on the spec's synthetic generator with known truth, each mean over the PMUR grid ± the mean Monte Carlo SE.

Usage: .venv/bin/python scripts/router_results_tables.py [real|synthetic ...]   (both by default; ~30-60 min)
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.router.learners import LearnerSpec  # noqa: E402
from compass.router.study import StudyDesign, evaluate, evaluate_synthetic  # noqa: E402

REAL = {"arena_alpaca_mixtral": "arena, Mixtral", "arena_alpaca_claude21": "arena, Claude 2.1",
        "gsm8k_alpaca_mixtral": "GSM8K, Mixtral"}
COLUMNS = {"oracle": "oracle", "gold_only": "gold-only", "preference_only": "pref-only", "pooled": "pooled",
           "mean_shift": "mean-shift", "meta_r": "meta (R)", "meta_dr": "meta (DR)",
           "meta_dr_overlap": "meta (DR, overlap)"}


def table(evaluation: pd.DataFrame, row_keys: list[str]) -> pd.DataFrame:
    """One row per row_keys, one column per router: 'mean ± mean SE' over the PMUR grid."""
    summary = evaluation.groupby(row_keys + ["router"]).agg(gain=("expected_gain", "mean"), se=("se", "mean"))
    cells = (summary["gain"].map("{:.3f}".format) + " ± " + summary["se"].map("{:.3f}".format)).unstack("router")
    return cells[[c for c in COLUMNS if c in cells.columns]].rename(columns=COLUMNS).reset_index()


def real_table() -> pd.DataFrame:
    labels = pd.read_parquet(ROOT / "data" / "route_labels.parquet")
    design = StudyDesign(n_gold=(50, 100, 200), mc_rounds=10, learner=LearnerSpec(n_estimators=100))
    parts = []
    for dataset, name in REAL.items():
        evaluation, *_ = evaluate(labels[labels["dataset"] == dataset], design)
        parts.append(evaluation.assign(dataset=name))
        print(f"... {dataset} done", file=sys.stderr, flush=True)
    return table(pd.concat(parts), ["dataset", "n_gold"])


def synthetic_table() -> pd.DataFrame:
    evaluation = evaluate_synthetic(("A", "B"), (100, 500), mc_rounds=5, learner=LearnerSpec(n_estimators=100),
                                    N=3000, D=20, cate_min_leaf=50)
    return table(evaluation, ["preset", "n_gold"])


def main(which: list[str]) -> None:
    for name in which or ["real", "synthetic"]:
        frame = {"real": real_table, "synthetic": synthetic_table}[name]()
        print(f"\n{name}:\n\n{frame.to_markdown(index=False)}\n", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
