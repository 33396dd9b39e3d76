"""Readers for per-query and per-interaction sources (query_records, interactions)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .common import AS_OF

LCB_SEED = 20240417
# LiveCodeBench lists `mistral-large-latest` as the API name of `Mistral-Large`; in the
# 2024-04-17 snapshot that alias meant mistral-large-2402, while LiteLLM's key of the
# same name now prices a later model, so the model is pinned here.
LCB_PINNED = {"Mistral-Large": "mistral-large-2402"}


QUERY_FIELDS = ("correct", "score", "confidence", "cost_usd", "latency_ms", "tokens_in", "tokens_out", "category")


def _stamp(df: pd.DataFrame, source: str, optional: tuple[str, ...] = QUERY_FIELDS) -> pd.DataFrame:
    """Add source/as_of and any absent `optional` field (null)."""
    absent = {c: None for c in optional if c not in df.columns}
    return df.assign(source=source, as_of=AS_OF[source], **absent)


def read_mmlu_pro(raw: Path) -> pd.DataFrame:
    """TIGER-Lab MMLU-Pro 5-shot predictions of 29 models: one row per (model, question)."""
    pred = pd.read_csv(raw / "mmlu_pro" / "predictions_long.csv.gz")
    questions = pd.read_csv(raw / "mmlu_pro" / "questions.csv.gz")
    df = pred.merge(questions[["question_id", "category"]], on="question_id", how="left", validate="many_to_one")
    if df["category"].isna().any():
        raise ValueError("mmlu_pro: predictions reference question_ids missing from questions.csv.gz")
    out = pd.DataFrame({
        "raw_name": df["model"], "dataset": "mmlu_pro", "split": "test", "query_id": df["question_id"].astype(str),
        "generation": 0, "correct": df["correct"].astype(float), "category": df["category"],
    })
    return _stamp(out, "mmlu_pro")


def lcb_samples(model_repr: str) -> int:
    """Samples per cell: 1 when the LiveCodeBench name says (n=1)/(N=1), else 10."""
    return 1 if re.search(r"\(n=1\)", model_repr, flags=re.IGNORECASE) else 10


def read_livecodebench(raw: Path, seed: int = LCB_SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """LiveCodeBench code generation (2024-04-17): expand pass@1 = 100 k/n to n generations.

    For an n=10 cell with k = round(pass@1 * n / 100) successes, the k successes are put at
    a seeded uniformly random subset of the 10 generation slots (cells visited in sorted
    (model, question_id) order with one numpy Generator(seed)), so the per-cell mean of
    `correct` equals pass@1/100 exactly. n=1 models get generation 0 only.
    Returns (query records, model metadata with HF/API name and release date).
    The API name of a `LCB_PINNED` model is replaced by its pinned id.
    """
    data = json.loads(gzip.decompress((raw / "livecodebench" / "performances_generation_2024-04-17.json.gz").read_bytes()))
    perf = pd.DataFrame(data["performances"]).sort_values(["model", "question_id"], ignore_index=True)
    perf["n"] = perf["model"].map(lcb_samples)
    k = np.rint(perf["pass@1"].to_numpy() * perf["n"].to_numpy() / 100.0).astype(int)
    if not np.allclose(k * 100.0 / perf["n"], perf["pass@1"]):
        raise ValueError("livecodebench: pass@1 values are not on the 100*k/n grid")
    n = perf["n"].to_numpy()
    keys = np.random.default_rng(seed).random((len(perf), 10))
    keys[np.arange(10)[None, :] >= n[:, None]] = np.inf  # unused slots of n=1 cells rank last
    ranks = keys.argsort(axis=1).argsort(axis=1)  # uniformly random order of the n used slots
    gens = []
    for g in range(10):
        has = n > g
        gens.append(pd.DataFrame({
            "raw_name": perf.loc[has, "model"], "query_id": perf.loc[has, "question_id"].astype(str),
            "generation": g, "correct": (ranks[has, g] < k[has]).astype(float),
            "category": perf.loc[has, "difficulty"],
        }))
    out = pd.concat(gens, ignore_index=True).assign(dataset="livecodebench", split="test")
    models = pd.DataFrame(data["models"])
    meta = pd.DataFrame({
        "raw_name": models["model_repr"], "api_name": models["model_repr"].map(LCB_PINNED).fillna(models["model_name"]),
        "release_date": pd.to_datetime(models["release_date"], unit="ms").dt.date,
    })
    return _stamp(out, "livecodebench"), meta


def read_cascades(raw: Path) -> pd.DataFrame:
    """Zellinger & Thomson rational-cascades per-query results (answer text dropped)."""
    c = pd.read_csv(raw / "rational_llm_cascades" / "per_query_model_confidence.csv.gz")
    out = pd.DataFrame({
        "raw_name": c["model"], "dataset": c["benchmark"], "split": c["split"], "query_id": c["query_idx"].astype(str),
        "generation": 0, "correct": c["correct"].astype(float), "confidence": c["raw_confidence"],
        "cost_usd": c["cost_usd"], "latency_ms": c["latency_ms"], "tokens_in": c["tokens_in"].astype(float),
        "tokens_out": c["tokens_out"].astype(float), "chain": c["chain"], "prompt_sha1": c["prompt_sha1"],
    })
    return _stamp(out, "rational_llm_cascades")


JUDGE_SLUGS = {"gpt-4-turbo-2024-04-09": "gpt4t", "gpt-4o-2024-05-13": "gpt4o"}


def read_wildbench_interactions(raw: Path) -> pd.DataFrame:
    """WildBench per-prompt checklist scores (1-10) -> interactions.

    The per-session task category lives in the HF dataset, not in this snapshot, so
    context_group is null; the response length goes into the context JSON.
    """
    w = pd.read_csv(raw / "wildbench" / "per_prompt_checklist_scores.csv.gz")
    unknown = set(w["judge"]) - set(JUDGE_SLUGS)
    if unknown:
        raise ValueError(f"wildbench: no slug for judge(s) {sorted(unknown)}")
    out = pd.DataFrame({
        "raw_name": w["model"], "dataset": "wildbench_" + w["wb_version"] + "_" + w["judge"].map(JUDGE_SLUGS),
        "interaction_id": w["session_id"].astype(str), "context_group": None, "user_id": None,
        "context": [json.dumps({"response_len_chars": int(n)}) for n in w["response_len_chars"]],
        "outcome": w["score_1to10"].astype(float), "outcome_kind": "rubric_1_10",
    })
    return _stamp(out, "wildbench", optional=())
