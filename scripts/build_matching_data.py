"""Build the matchmaking data under data/matching/ from the raw folder. Offline and deterministic.

* matharena_tokens.csv: MathArena's AIME 2025 I table (raw/matharena/secondary.js), mean input and output
  tokens per problem for each model with a reasoning flag (thinking models: the o-series / R1 family).
* arena_bench_v1_answers.parquet: the 17 models' answers to the 300 arena-bench-v1 prompts
  (raw/arena_hard_auto/arena_bench_v1/), one row per (question_id, model) with the prompt text, for
  `compass match`.

    python scripts/build_matching_data.py --raw /work/shared/data/raw --out data/matching
"""

import argparse
import gzip
import json
import re
from pathlib import Path

import pandas as pd

REASONING = re.compile(r"^(o1|o3-mini|DeepSeek-R1|QwQ|gemini-2\.0-flash-thinking)")


def arena_answers(raw: Path) -> pd.DataFrame:
    folder = raw / "arena_hard_auto" / "arena_bench_v1"
    questions = pd.read_json(folder / "question.jsonl", lines=True)
    prompts = questions.set_index("question_id")["turns"].str[0]
    rows = []
    for path in sorted((folder / "model_answer").glob("*.jsonl.gz")):
        with gzip.open(path, "rt") as fh:
            for line in fh:
                answer = json.loads(line)
                rows.append((answer["question_id"], answer["model_id"], answer["choices"][0]["turns"][0]))
    table = pd.DataFrame(rows, columns=["question_id", "model", "response"])
    table.insert(1, "prompt", table["question_id"].map(prompts))
    return table.dropna(subset=["prompt"]).sort_values(["question_id", "model"]).reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--raw", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    text = (args.raw / "matharena" / "secondary.js").read_text()
    rows = {r.pop("question"): r for r in json.loads(text.split("=", 1)[1].strip().rstrip(";"))}
    table = pd.DataFrame({"input_tokens": pd.Series(rows["Input Tokens"]), "output_tokens": pd.Series(rows["Output Tokens"])})
    table = table.apply(pd.to_numeric, errors="coerce").dropna().round(1).rename_axis("model").reset_index()
    table.insert(1, "reasoning", table["model"].str.match(REASONING).astype(int))
    out = args.out / "matharena_tokens.csv"
    with out.open("w") as fh:
        fh.write("# MathArena AIME 2025 I (eth-sri/matharena.ai @ 8fdd9aba, static/js/secondary.js): mean tokens per problem;\n"
                 "# reasoning = thinking model. Built by scripts/build_matching_data.py.\n")
        table.sort_values(["reasoning", "model"]).to_csv(fh, index=False)
    arena_answers(args.raw).to_parquet(args.out / "arena_bench_v1_answers.parquet", index=False, compression="zstd")


if __name__ == "__main__":
    main()
