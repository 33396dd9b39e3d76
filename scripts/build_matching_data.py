"""Build the matchmaking data under data/matching/ from the raw folder. Offline and deterministic.

* matharena_tokens.csv: MathArena's AIME 2025 I table (raw/matharena/secondary.js), mean input and output
  tokens per problem for each model with a reasoning flag (thinking models: the o-series / R1 family).
* arena_bench_v1_answers.parquet: the 17 models' answers to the 300 arena-bench-v1 prompts
  (raw/arena_hard_auto/arena_bench_v1/), one row per (question_id, model) with the prompt text, for
  `compass match`.
* arena_bench_v1_prices.csv: the list price of each of those models in LMArena's price table of 2024-10-16
  (raw/lmarena_arena_catalog/leaderboard_with_pricing_2024-10-16.csv), matched by the table's key, display name or
  the model page its link names; empty where the table lists the model without a price. `compass match` uses it
  for the models the catalog (data/model_costs.parquet) has no price for.

    python scripts/build_matching_data.py --raw /work/shared/data/raw --out data/matching
"""

import argparse
import gzip
import json
import re
from pathlib import Path

import pandas as pd

from compass.ingest.aliases import alias_key

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


LMARENA_PRICES = "leaderboard_with_pricing_2024-10-16.csv"


def arena_prices(raw: Path, models: list[str]) -> pd.DataFrame:
    """One row per model of `models` that LMArena's 2024-10-16 price table lists (alias_key equal to its key, its
    display name or the last part of its link), with the table's prices (USD / 1M tokens, empty for '-') and the
    page it took them from."""
    table = pd.read_csv(raw / "lmarena_arena_catalog" / LMARENA_PRICES, dtype=str)
    spellings = {}
    for column in ("Link", "Model", "key"):  # later columns win: the key is LMArena's own id
        names = table[column].str.rstrip("/").str.split("/").str[-1] if column == "Link" else table[column]
        spellings.update({alias_key(n): i for i, n in names.items() if isinstance(n, str)})
    rows = [(m, table.loc[spellings[alias_key(m)]]) for m in models if alias_key(m) in spellings]
    price = lambda v: pd.to_numeric(v, errors="coerce")
    return pd.DataFrame({"model": [m for m, _ in rows], "lmarena_key": [r["key"] for _, r in rows],
                         "input_usd_per_mtok": [price(r["input_token_price"]) for _, r in rows],
                         "output_usd_per_mtok": [price(r["output_token_price"]) for _, r in rows],
                         "price_page": [r["source"] if r["source"] != "-" else None for _, r in rows],
                         "as_of": "2024-10-16"})


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
    answers = arena_answers(args.raw)
    answers.to_parquet(args.out / "arena_bench_v1_answers.parquet", index=False, compression="zstd")
    with (args.out / "arena_bench_v1_prices.csv").open("w") as fh:
        fh.write(f"# LMArena's price table (lmarena/arena-catalog @ cc15fee3, data/leaderboard_with_pricing.csv, "
                 f"2024-10-16): USD per 1M tokens\n# of the arena_bench_v1 models it lists; empty = listed without a "
                 f"price. Built by scripts/build_matching_data.py.\n")
        arena_prices(args.raw, sorted(answers["model"].unique())).to_csv(fh, index=False)


if __name__ == "__main__":
    main()
