"""What one more benchmark measurement costs in US dollars (issue 49 item 2; input to `next_evaluations`).

Measuring the unmeasured cell (m, j) means running benchmark j's questions through model m:

    cost(m, j) = q_j x c_m                                                             (1)

q_j the benchmark's question count, c_m the model's expected USD per question. c_m comes from LiveBench's
cost file (per model: `cost_per_question`, `input_price_per_million`, `output_price_per_million`, over its
tasks; 46 models in the 2026-06-25 file):

  * a model in the file: its own cost_per_question;
  * any other model with a blended price p_m (USD per million tokens, data/model_costs.parquet):
    c_m = t x p_m / 1e6, with t = median over the file's models of cost_per_question x 1e6 / p_m, the
    file's "expected tokens per question" at the blended price (p = (input + output price) / 2 there);
  * a model with no price at all: the median c_m of the priced models (stated fallback, `FALLBACK`).

Question counts: LiveBench tasks from the file's nq_<task> columns, a few public benchmark sizes
(`KNOWN_QUESTIONS`, the test splits as published), and otherwise the median LiveBench task size (the
fallback rule: Arena-style columns are votes, not questions, and are priced as if they were a LiveBench
task, a stated approximation).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

#: Public sizes of common benchmarks (evaluation split). Anything else falls back (module docstring).
KNOWN_QUESTIONS: dict[str, int] = {
    "gpqa_diamond": 198, "hf_gpqa": 448, "gpqa": 448, "mmlu": 14042, "hf_mmlu_pro": 12032, "mmlu_pro": 12032,
    "gsm8k": 1319, "hellaswag": 10042, "humaneval": 164, "math": 5000, "math_level_5": 1324,
    "hf_math_lvl5": 1324, "hf_ifeval": 541, "hf_bbh": 6511, "hf_musr": 756, "winogrande": 1267,
    "simpleqa_verified": 1000, "aider_polyglot": 225, "otis_mock_aime": 45,
}

FALLBACK = "median"


def livebench_questions(cost_file: pd.DataFrame) -> pd.Series:
    """Questions per LiveBench task (the file's nq_<task> columns, median over models): benchmark -> count."""
    cols = [c for c in cost_file.columns if c.startswith("nq_")]
    return pd.Series({c[3:]: float(cost_file[c].median()) for c in cols}, name="questions")


def question_counts(benchmarks: list[str] | pd.Index, cost_file: pd.DataFrame | None = None,
                    known: Mapping[str, int] | None = None) -> pd.Series:
    """q_j of (1) for every benchmark: LiveBench's nq_<task>, else `known` (default KNOWN_QUESTIONS), else the
    median LiveBench task size (50 when no file is given). Returns benchmark -> count (float), no NaN."""
    live = livebench_questions(cost_file) if cost_file is not None else pd.Series(dtype=float)
    table = dict(KNOWN_QUESTIONS if known is None else known)
    fallback = float(live.median()) if len(live) else 50.0
    out = {b: float(live[b]) if b in live.index else float(table.get(b, fallback)) for b in benchmarks}
    return pd.Series(out, name="questions")


def usd_per_question(models: list[str] | pd.Index, blended_price: pd.Series,
                     cost_file: pd.DataFrame | None = None) -> pd.Series:
    """c_m of (1): model -> expected USD per question (module docstring's three rules). blended_price: model -> USD
    per million tokens (NaN = unknown)."""
    models = pd.Index(models)
    price = blended_price.reindex(models).astype(float)
    tokens = 2000.0  # without a cost file: an assumed 2,000 tokens per question
    own = pd.Series(np.nan, index=models)
    if cost_file is not None and len(cost_file):
        p = (cost_file["input_price_per_million"] + cost_file["output_price_per_million"]) / 2
        ratio = cost_file["cost_per_question"] * 1e6 / p
        tokens = float(ratio[np.isfinite(ratio) & (p > 0)].median())
        own = cost_file.set_index("model")["cost_per_question"].reindex(models).astype(float)
    c = own.where(own.notna(), price * tokens / 1e6)
    fallback = float(c.median()) if c.notna().any() else tokens * 1.0 / 1e6
    return c.fillna(fallback).rename("usd_per_question")


def cell_costs(x_raw: pd.DataFrame, questions: pd.Series, per_question: pd.Series) -> pd.DataFrame:
    """USD cost of measuring every cell, eq. (1): q_j x c_m (same shape as x_raw; observed cells too, the caller
    masks them). Raises when a benchmark or a model lacks its factor."""
    q = questions.reindex(x_raw.columns).to_numpy(dtype=float)
    c = per_question.reindex(x_raw.index).to_numpy(dtype=float)
    if np.isnan(q).any() or np.isnan(c).any():
        raise ValueError("cell_costs: every benchmark needs a question count and every model a USD per question")
    return pd.DataFrame(np.outer(c, q), index=x_raw.index, columns=x_raw.columns)
