"""TF-IDF/LSA against WordLlama as the meta-router's query embedder on the embedded real labels (issue 46 item 1;
the "Query embeddings" section of docs/results/router.md).

Per dataset, embedder and Monte Carlo round (n_gold = 100, 10 rounds, 50-tree forests, d = 50: the design of the
"Paired comparisons" section), the same seeded split for both embedders (round i is `evaluate`'s round i: the split
depends on the seed only): every router's mean efficiency gain over the PMUR grid and Spearman's ρ between its ψ̂
and the realized gold gain r on the held-out queries. Reported as the mean over rounds with a 95 % Nadeau-Bengio
corrected resampled-t interval (`paired_comparisons`: the rounds re-split the same prompts), for each embedder
and for the paired difference WordLlama − TF-IDF. `*` where the interval excludes 0.

Usage: .venv/bin/python scripts/router_embedders.py [rounds]   (~10-20 min on 2 cores)
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.embeddings import TEXT_METHODS  # noqa: E402
from compass.router.evaluation import paired_comparisons  # noqa: E402
from compass.router.learners import LearnerSpec  # noqa: E402
from compass.router.study import StudyDesign, evaluate  # noqa: E402

REAL = {"arena_alpaca_mixtral": "arena, Mixtral", "arena_alpaca_claude21": "arena, Claude 2.1",
        "gsm8k_alpaca_mixtral": "GSM8K, Mixtral", "mmlu_alpaca_mixtral": "MMLU, Mixtral"}
ROUTERS = {"gold_only": "gold-only", "preference_only": "pref-only", "pooled": "pooled", "meta_r": "meta (R)",
           "meta_dr": "meta (DR)", "routellm_mf": "RouteLLM MF"}
EMBEDDERS = ("tfidf", "wordllama")
assert set(EMBEDDERS) == set(TEXT_METHODS)


def rounds_of(labels: pd.DataFrame, embedder: str, n_rounds: int) -> pd.DataFrame:
    """One row per (router, round): the round's mean gain over the usage grid and ψ̂'s Spearman ρ with r."""
    rows = []
    for rnd in range(n_rounds):
        design = StudyDesign(n_gold=(100,), mc_rounds=1, seed=rnd, learner=LearnerSpec(n_estimators=50),
                             routers=tuple(ROUTERS), embedder=embedder)
        _, last, rounds = evaluate(labels, design)
        r = last["test"]["outcome"].to_numpy(float)
        rho = {name: float(stats.spearmanr(psi, r).statistic) for name, psi in last["psi"].items()}
        rows.append(rounds.assign(round=rnd, spearman=rounds["router"].map(rho)))
    return pd.concat(rows, ignore_index=True).assign(embedder=embedder)


def cell(row) -> str:
    return f"{row.mean_difference:+.3f} ({row.lo:+.3f}, {row.hi:+.3f})" + ("*" if row.distinguishable else "")


def compare(rounds: pd.DataFrame, value: str) -> dict[tuple[str, str], str]:
    """{(router, column): cell} for each embedder against 0 and for WordLlama − TF-IDF, paired across rounds."""
    out = {}
    for router, part in rounds.groupby("router"):
        by_embedder = part.assign(mean_gain=part[value])
        for embedder, own in by_embedder.groupby("embedder"):
            row = paired_comparisons(own.assign(router=router), baselines=("random",)).iloc[0]
            out[(router, embedder)] = cell(row)
        diff = paired_comparisons(by_embedder.assign(router=by_embedder["embedder"]), baselines=("tfidf",))
        out[(router, "difference")] = cell(diff.iloc[0])
    return out


def main(n_rounds: int) -> None:
    labels = pd.read_parquet(ROOT / "data" / "route_labels.parquet")
    frames = []
    for dataset, name in REAL.items():
        for embedder in EMBEDDERS:
            frames.append(rounds_of(labels[labels["dataset"] == dataset], embedder, n_rounds).assign(dataset=name))
            print(f"... {dataset} {embedder} done", file=sys.stderr, flush=True)
    rounds = pd.concat(frames, ignore_index=True)
    for value, title in (("spearman", "Spearman ρ of ψ̂ with the realized gold gain r (held-out queries)"),
                         ("mean_gain", "gain over random (mean EG over the PMUR grid)")):
        rows = []
        for name in REAL.values():
            cells = compare(rounds[rounds["dataset"] == name], value)
            rows += [{"dataset": name, "router": label, "TF-IDF/LSA": cells[(router, "tfidf")],
                      "WordLlama": cells[(router, "wordllama")], "WordLlama − TF-IDF": cells[(router, "difference")]}
                     for router, label in ROUTERS.items()]
        print(f"\n{title}, {n_rounds} rounds:\n\n{pd.DataFrame(rows).to_markdown(index=False)}\n", flush=True)
    means = rounds.groupby(["embedder", "router"])["spearman"].mean().unstack("embedder")
    print(f"Spearman ρ averaged over datasets and rounds:\n\n{means.round(3).to_markdown()}\n")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
