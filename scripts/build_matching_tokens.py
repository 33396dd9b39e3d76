"""Build data/matching/matharena_tokens.csv from MathArena's AIME 2025 I table (raw/matharena/secondary.js):
mean input and output tokens per problem for each model with a reasoning flag (thinking models and the
o-series / R1 family). Offline and deterministic.

    python scripts/build_matching_tokens.py --raw /work/shared/data/raw --out data/matching
"""

import argparse
import json
import re
from pathlib import Path

import pandas as pd

REASONING = re.compile(r"^(o1|o3-mini|DeepSeek-R1|QwQ|gemini-2\.0-flash-thinking)")


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
                 "# reasoning = thinking model. Built by scripts/build_matching_tokens.py.\n")
        table.sort_values(["reasoning", "model"]).to_csv(fh, index=False)


if __name__ == "__main__":
    main()
