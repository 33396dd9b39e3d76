"""Print the meta-router tables of docs/results/router.md (seed 003): efficiency gain on the embedded real labels
and on the spec's synthetic generator with known truth, each mean over the PMUR grid ± the mean Monte Carlo SE;
`paired`: every router against random, gold-only and preference-only routing paired across rounds (95 % t-intervals)
and ψ̂'s calibration (Spearman's ρ with the realized gold gain on held-out queries), n_gold = 100, 10 rounds, 50 trees.

`multi`: the App. A.2 N-model table on synthetic labels (10 rounds, 100-tree forests; ~12-30 min) and its paired
comparisons; `multi-real`: the three-model star graph on our arena labels (10 rounds, 100-tree forests) and its
paired comparisons (Nadeau & Bengio-corrected: the rounds re-split the same prompts).

Usage: .venv/bin/python scripts/router_results_tables.py [--embedder=tfidf] [real|synthetic|paired|multi|multi-real ...]
(real and synthetic by default; ~30-60 min; paired ~20 min). The query embedder is WordLlama by default (issue 46);
the tables of docs/results/router.md dated before it were printed with TF-IDF/LSA: `--embedder=tfidf` reproduces them.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.router.evaluation import calibration, paired_comparisons  # noqa: E402
from compass.router.learners import LearnerSpec  # noqa: E402
from compass.router.multi_study import evaluate_multi_real, evaluate_multi_synthetic  # noqa: E402
from compass.router.study import StudyDesign, evaluate, evaluate_synthetic  # noqa: E402

EMBEDDER = "wordllama"  # compass.embeddings.TEXT_METHODS; set by --embedder=
REAL = {"arena_alpaca_mixtral": "arena, Mixtral", "arena_alpaca_claude21": "arena, Claude 2.1",
        "gsm8k_alpaca_mixtral": "GSM8K, Mixtral", "mmlu_alpaca_mixtral": "MMLU, Mixtral"}
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
    design = StudyDesign(n_gold=(50, 100, 200), mc_rounds=10, learner=LearnerSpec(n_estimators=100),
                         embedder=EMBEDDER)
    parts = []
    for dataset, name in REAL.items():
        evaluation, *_ = evaluate(labels[labels["dataset"] == dataset], design)
        parts.append(evaluation.assign(dataset=name))
        print(f"... {dataset} done", file=sys.stderr, flush=True)
    return table(pd.concat(parts), ["dataset", "n_gold"])


def synthetic_table() -> pd.DataFrame:
    evaluation, _ = evaluate_synthetic(("A", "B"), (100, 500), mc_rounds=5, learner=LearnerSpec(n_estimators=100),
                                       N=3000, D=20, cate_min_leaf=50)
    return table(evaluation, ["preset", "n_gold"])


def paired_table() -> pd.DataFrame:
    """Per dataset and router: mean gain over random, and the paired differences against gold-only and
    preference-only, each 'mean (lo, hi)' with a star where the 95 % interval excludes 0; Spearman ρ of ψ̂."""
    labels = pd.read_parquet(ROOT / "data" / "route_labels.parquet")
    design = StudyDesign(n_gold=(100,), mc_rounds=10, learner=LearnerSpec(n_estimators=50), embedder=EMBEDDER)
    rows = []
    for dataset, name in REAL.items():
        _, last, rounds = evaluate(labels[labels["dataset"] == dataset], design)
        r_test = last["test"]["outcome"].to_numpy(float)
        for router, part in paired_comparisons(rounds).groupby("router", sort=False):
            cells = {b: f"{m:+.3f} ({lo:+.3f}, {hi:+.3f})" + ("*" if d else "") for b, m, lo, hi, d in
                     part[["baseline", "mean_difference", "lo", "hi", "distinguishable"]].itertuples(index=False)}
            rho = calibration(last["psi"][router], r_test)["spearman"].iloc[0]
            rows.append({"dataset": name, "router": COLUMNS.get(router, router), "vs random": cells.get("random"),
                         "vs gold-only": cells.get("gold_only", "–"), "vs pref-only": cells.get("preference_only", "–"),
                         "Spearman ψ̂ vs r (last round)": f"{rho:+.2f}"})
        print(f"... {dataset} done", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


MULTI = {"true_best": "true best per query", "best_single": "best single", "gold_only": "gold-only",
         "preference_only": "pref-only", "pooled": "pooled", "meta_dr": "meta (DR)", "meta_dr_btl": "meta (DR, BTL η)"}


def multi_table() -> pd.DataFrame:
    """App. A.2 on the synthetic N-model generator: mean true quality of the chosen models ± SE (share of queries
    sent to their truly best model), 10 rounds, 100-tree forests (the docs' design); then the paired comparisons."""
    runs, comparisons = evaluate_multi_synthetic((3, 4), (100, 300, 1000), 10, LearnerSpec(n_estimators=100))
    values = runs[["quality", "se", "best_share", "policy"]].itertuples(index=False)
    runs = runs.assign(cell=[f"{q:.3f} ± {se:.3f}" + ("" if p == "true_best" else f" ({b:.0%})") for q, se, b, p in values])
    wide = runs.pivot_table(index=["n_models", "n_gold"], columns="policy", values="cell", aggfunc="first")
    print(wide[[c for c in MULTI if c in wide]].rename(columns=MULTI).reset_index().to_markdown(index=False))
    return comparison_cells(comparisons, ["n_models", "n_gold"])


def multi_real_table() -> pd.DataFrame:
    """The three-model star graph on arena (GPT-4 against Mixtral and Claude 2.1), 10 rounds, 100-tree forests:
    mean grade relative to always-GPT-4 ± SE with the shares per model; then the paired comparisons."""
    labels = pd.read_parquet(ROOT / "data" / "route_labels.parquet")
    arena = labels[labels["dataset"].isin(["arena_alpaca_mixtral", "arena_alpaca_claude21"])]
    table, comparisons = evaluate_multi_real(arena, 10, LearnerSpec(n_estimators=100),
                                             routers=("pooled", "preference_only", "gold_only", "meta_dr",
                                                      "meta_dr_btl"), embedder=EMBEDDER)
    print(table.to_markdown(index=False, floatfmt="+.3f"))
    return comparison_cells(comparisons, ["budget"])


def comparison_cells(comparisons: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per cell and learned router: its paired difference with each baseline, 'mean (lo, hi)', '*' where
    the 95 % interval excludes 0 (`multi_study.multi_comparisons`)."""
    rows = comparisons.assign(
        baseline=comparisons["baseline"].map(lambda b: MULTI.get(b, b)),
        cell=[f"{m:+.3f} ({lo:+.3f}, {hi:+.3f})" + ("*" if d else "") for m, lo, hi, d in
              comparisons[["mean_difference", "lo", "hi", "distinguishable"]].itertuples(index=False)],
        router=comparisons["router"].map(lambda r: MULTI.get(r, r)))
    return rows[keys + ["router", "baseline", "mc_rounds", "resample_correction", "cell"]]


def main(which: list[str]) -> None:
    global EMBEDDER
    EMBEDDER = next((a.split("=", 1)[1] for a in which if a.startswith("--embedder=")), EMBEDDER)
    which = [a for a in which if not a.startswith("--embedder=")]
    for name in which or ["real", "synthetic"]:
        frame = {"real": real_table, "synthetic": synthetic_table, "paired": paired_table, "multi": multi_table,
                 "multi-real": multi_real_table}[name]()
        print(f"\n{name}:\n\n{frame.to_markdown(index=False)}\n", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
