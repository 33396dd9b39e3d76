"""How well the sources join on the same model (issue 42, items 3 and 9), from the embedded default tables.

Prints, for docs/results/mlcompass.md:
* the resolver's precision and recall on the labelled cross-source name pairs (its misses listed);
* how many models appear in two or more sources (any table, and benchmark scores), and how many of the
  frontier case's models (x_raw of `cases/frontier_api.yaml` on these tables) have scores from >= 2 sources;
* how many LiveBench models carry an Epoch score;
* how many of the frontier case's models have each governance attribute known.

Usage: .venv/bin/python scripts/mlcompass_source_join.py [--data data] [--pairs tests/fixtures/names/...csv]
A pair fixture with a duplicate pair or a bad label is bad input: one line naming the file and key, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from compass.ingest.errors import IngestError
from compass.ingest.name_pairs import predict, read_pairs, score
from compass.mlcompass.case_inputs import build_x_raw, with_release_dates
from compass.mlcompass.case_study import load_cases

ROOT = Path(__file__).resolve().parents[1]
ATTRIBUTES = ("open_weights", "context_window", "release_date", "modality")


def pair_lines(path: Path) -> list[str]:
    pairs = read_pairs(path.read_text(), str(path))
    s = score(pairs)
    wrong = pairs[predict(pairs) != pairs["same_model"]]
    lines = [f"name pairs: {s.n_pairs} ({s.n_same} same model, {s.n_pairs - s.n_same} not); "
             f"precision {s.precision:.3f} ({s.true_pos}/{s.true_pos + s.false_pos}), "
             f"recall {s.recall:.3f} ({s.true_pos}/{s.true_pos + s.false_neg})"]
    lines += [f"  miss: {r.name_a} ({r.source_a}) / {r.name_b} ({r.source_b}), labelled {r.same_model}: {r.note}"
              for r in wrong.itertuples()]
    return lines


def table_lines(data: Path) -> list[str]:
    scores = with_release_dates(pd.read_parquet(data / "benchmark_scores.parquet"), pd.read_parquet(data / "models.parquet"))
    aliases = pd.read_parquet(data / "model_aliases.parquet")
    models = pd.read_parquet(data / "models.parquet").set_index("model_id")
    named = aliases.assign(source=aliases["sources"].str.split(",")).explode("source")
    any_sources = named.groupby("model_id")["source"].nunique()
    score_sources = scores.groupby("model_id")["source"].nunique()
    case = load_cases([ROOT / "cases"])["frontier_api"]
    board = build_x_raw(scores, case.benchmarks).index
    in_case = scores[scores["benchmark"].map(case.benchmarks.selects) & scores["model_id"].isin(board)]
    livebench = set(scores.loc[scores["source"] == "livebench", "model_id"])
    epoch = set(scores.loc[scores["source"] == "epoch_ai_hub", "model_id"])
    lines = [
        f"models: {len(models)}; named by >= 2 sources: {(any_sources >= 2).sum()}; "
        f"benchmark scores from >= 2 sources: {(score_sources >= 2).sum()}",
        f"frontier_api models: {len(board)}; with scores from >= 2 sources: "
        f"{(score_sources.reindex(board).fillna(0) >= 2).sum()} (any benchmark), "
        f"{(in_case.groupby('model_id')['source'].nunique().reindex(board).fillna(0) >= 2).sum()} (the case's benchmarks)",
        f"LiveBench models with an Epoch score: {len(livebench & epoch)} of {len(livebench)}",
        f"frontier_api LiveBench models with a non-LiveBench case column: "
        f"{in_case[(in_case['source'] != 'livebench') & in_case['model_id'].isin(livebench)]['model_id'].nunique()} "
        f"of {len(livebench & set(board))}; observed cells of x_raw: {build_x_raw(scores, case.benchmarks).notna().mean().mean():.1%}",
    ]
    priced = board[board.isin(pd.read_parquet(data / "model_costs.parquet")["model_id"])]
    for label, ids in (("frontier_api", board), (f"frontier_api with a price ({len(priced)})", priced)):
        known = models.reindex(ids)
        lines += [f"{label} {a} known: {known[a].notna().sum()} of {len(ids)} "
                  f"({known[a].notna().mean():.1%}); unknown: {known[a].isna().sum()}"
                  for a in ATTRIBUTES if a in known.columns]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data", help="folder of the raw-table Parquet files")
    parser.add_argument("--pairs", type=Path, default=ROOT / "tests" / "fixtures" / "names" / "cross_source_pairs.csv")
    args = parser.parse_args(argv)
    try:
        lines = pair_lines(args.pairs) if args.pairs.is_file() else [f"no pair fixture at {args.pairs}"]
    except IngestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines + table_lines(args.data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
