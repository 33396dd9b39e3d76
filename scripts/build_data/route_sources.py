"""Routing labels (seed 003, Meta-router) for raw.route_labels: gold-standard and preference labels for
M_p = gpt-4-1106-preview against a cheaper M_a, from three public sources (shared/data/README.md, D0).

* gold, rubric: arena-bench-v1 GPT-4 reference-guided grades (1-10) of both models on the same prompt,
  r = grade(M_p) - grade(M_a); prompt text from question.jsonl; answer lengths from model_answer/.
* gold, correctness: RouteLLM's per-question MMLU and GSM8K correctness of the pair, r in {-1, 0, 1}.
* preference: AlpacaEval 2's chain-of-thought GPT-4-Turbo judge (`alpaca_eval_cot_gpt4_turbo_fn`, the one
  annotator present for every M_a) on 805 instructions, y = +1 when M_p's output is preferred.

Gold and preference prompts are different pools (the paper's q ~ Q, q' ~ Q'). Output token counts are
characters / 4 (no tokenizer is shipped), null where the source has no answer text or length.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

from compass.ingest.canonical import canonical_id

AS_OF = {"arena_bench_v1": "2023-12-14", "routellm": "2024-07-01", "alpaca_eval": "2024-06-07"}
PRIMARY = "gpt-4-1106-preview"
# dataset -> (gold source, arena / alpaca name of M_a)
DATASETS = {
    "arena_alpaca_mixtral": ("arena", "Mixtral-8x7B-Instruct-v0.1"),
    "arena_alpaca_claude21": ("arena", "claude-2.1"),
    "gsm8k_alpaca_mixtral": ("gsm8k", "Mixtral-8x7B-Instruct-v0.1"),
    "mmlu_alpaca_mixtral": ("mmlu", "Mixtral-8x7B-Instruct-v0.1"),
}
ARENA_NAMES = {"Mixtral-8x7B-Instruct-v0.1": "mistralai/Mixtral-8x7B-Instruct-v0.1", "claude-2.1": "claude-2.1"}
ALPACA_JUDGE = "alpaca_eval_cot_gpt4_turbo_fn"
MMLU_SAMPLE, MMLU_SEED = 2000, 20240701  # of RouteLLM's 14,042 MMLU questions (keeps data/ small)
CHARS_PER_TOKEN = 4.0
COLUMNS = ["dataset", "query_id", "query_text", "model_p", "model_a", "label_kind", "outcome",
           "tokens_out_p", "tokens_out_a", "source", "as_of"]


def _answer_tokens(raw: Path, model_file: str) -> pd.Series:
    path = raw / "arena_hard_auto" / "arena_bench_v1" / "model_answer" / f"{model_file}.jsonl.gz"
    rows = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines() if line.strip()]
    return pd.Series({r["question_id"]: len(r["choices"][0]["turns"][0]) / CHARS_PER_TOKEN for r in rows})


def _arena_gold(raw: Path, m_a: str) -> pd.DataFrame:
    base = raw / "arena_hard_auto" / "arena_bench_v1"
    grades = pd.read_csv(base / "gpt4_reference_grades.csv.gz").pivot_table(
        index="question_id", columns="model", values="score_1_10")
    pair = grades[[PRIMARY, ARENA_NAMES[m_a]]].dropna()
    questions = pd.read_json(base / "question.jsonl", lines=True).set_index("question_id")
    return pd.DataFrame({
        "query_id": pair.index, "query_text": questions.loc[pair.index, "turns"].str[0].to_numpy(),
        "outcome": (pair[PRIMARY] - pair[ARENA_NAMES[m_a]]).to_numpy(),
        "tokens_out_p": _answer_tokens(raw, PRIMARY).reindex(pair.index).to_numpy(),
        "tokens_out_a": _answer_tokens(raw, m_a).reindex(pair.index).to_numpy(),
        "source": "arena_bench_v1", "as_of": AS_OF["arena_bench_v1"]})


def _routellm_gold(raw: Path, benchmark: str) -> pd.DataFrame:
    df = pd.read_csv(raw / "routellm" / "gs_gpt4_1106_preview_vs_mixtral_8x7b.csv.gz")
    df = df[df["source"].str.split("/").str[0] == benchmark].reset_index()
    if benchmark == "mmlu":
        df = df.sample(MMLU_SAMPLE, random_state=MMLU_SEED).sort_values("index")
    return pd.DataFrame({
        "query_id": benchmark + "-" + df["index"].astype(str), "query_text": df["prompt"].to_numpy(),
        "outcome": df["r"].astype(float).to_numpy(), "tokens_out_p": None, "tokens_out_a": None,
        "source": "routellm", "as_of": AS_OF["routellm"]})


def _alpaca_preferences(raw: Path, m_a: str) -> pd.DataFrame:
    df = pd.read_csv(raw / "alpaca_eval" / "annotations" / "alpacaeval2_vs_gpt4_1106_preview.csv.gz")
    df = df[(df["m_a"] == m_a) & (df["annotator"] == ALPACA_JUDGE)].dropna(subset=["y_mp_minus_ma"])
    return pd.DataFrame({
        "query_id": df["qid"].to_numpy(), "query_text": df["instruction"].to_numpy(),
        "outcome": df["y_mp_minus_ma"].clip(-1, 1).to_numpy(),
        "tokens_out_p": (df["len_p"] / CHARS_PER_TOKEN).to_numpy(), "tokens_out_a": (df["len_a"] / CHARS_PER_TOKEN).to_numpy(),
        "source": "alpaca_eval", "as_of": AS_OF["alpaca_eval"]})


def read_route_labels(raw: Path, catalog: set[str]) -> pd.DataFrame:
    """raw.route_labels rows of every dataset in DATASETS; both models must be catalogue models."""
    frames = []
    for dataset, (gold_source, m_a) in DATASETS.items():
        model_p, model_a = canonical_id(PRIMARY), canonical_id(m_a)
        missing = {model_p, model_a} - catalog
        if missing:
            raise ValueError(f"route_labels {dataset}: models {sorted(missing)} are not in the catalogue")
        gold = _arena_gold(raw, m_a) if gold_source == "arena" else _routellm_gold(raw, gold_source)
        for kind, part in (("gold", gold), ("preference", _alpaca_preferences(raw, m_a))):
            frames.append(part.assign(dataset=dataset, model_p=model_p, model_a=model_a, label_kind=kind))
    out = pd.concat([f.astype({"tokens_out_p": float, "tokens_out_a": float}) for f in frames], ignore_index=True)
    out["as_of"] = pd.to_datetime(out["as_of"]).dt.date
    return out[COLUMNS].assign(embedding=None)
