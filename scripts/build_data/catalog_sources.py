"""Readers for the aggregate benchmark sources without a connector (LLM-Stats, WildBench, HF Open LLM
Leaderboard v2) -> (scores, metadata) frames keyed by raw name."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd

from compass.ingest.connectors.base import META_COLS, SCORE_COLS, slug, to_date

from .common import frame


def read_llmstats(raw: Path) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """LLM-Stats (CC-BY-4.0): self-reported scores in [0, 1] and model metadata.

    Returns (scores, metadata, number of dropped non-fraction scores such as Codeforces Elo).
    """
    folder = raw / "llmstats"
    s = pd.read_csv(folder / "derived_benchmark_scores_long.csv")
    keep = s["score"].between(0.0, 1.0)
    scores = pd.DataFrame({
        "raw_name": s.loc[keep, "model_id"], "benchmark": s.loc[keep, "dataset_name"].map(slug),
        "score": s.loc[keep, "score"], "score_scale": "fraction",
    })
    m = pd.read_csv(folder / "derived_models.csv")
    meta = pd.DataFrame({
        "raw_name": m["model_id"], "display_name": m["name"], "organization": m["organization"],
        "release_date": to_date(m["release_date"]),
        "open_weights": m["license"].map(lambda v: None if pd.isna(v) else str(v).lower() != "proprietary"),
        "params_b": m["param_count"] / 1e9, "context_window": m["input_context_size"],
    })
    return frame(scores, SCORE_COLS, "llmstats"), frame(meta, META_COLS, "llmstats"), int((~keep).sum())


WILDBENCH_CATEGORIES = ("Creative Tasks", "Planning & Reasoning", "Math & Data Analysis",
                        "Information/Advice seeking", "Coding & Debugging")


def read_wildbench_aggregates(raw: Path) -> pd.DataFrame:
    """WildBench leaderboard: WB score per task category (scale `index`, (mean rubric - 5) x 20) and WB-Elo."""
    stats = json.loads((raw / "wildbench" / "all_stat_wildbench.-1.json").read_text())
    rows = []
    for name, s in stats.items():
        for cat in WILDBENCH_CATEGORIES:
            value = s.get(f"WB_score.{cat}")
            if isinstance(value, (int, float)):
                rows.append({"raw_name": name, "benchmark": f"wildbench_{slug(cat)}", "score": value, "score_scale": "index"})
        if isinstance(s.get("WB_Elo"), (int, float)):
            rows.append({"raw_name": name, "benchmark": "wildbench_elo", "score": s["WB_Elo"], "score_scale": "elo"})
    return frame(rows, SCORE_COLS, "wildbench")


HF_BENCHMARKS = {"ifeval": "hf_ifeval", "bbh": "hf_bbh", "math": "hf_math_lvl5", "gpqa": "hf_gpqa",
                 "musr": "hf_musr", "mmlu_pro": "hf_mmlu_pro"}


def read_hf_v2(raw: Path) -> pd.DataFrame:
    """Open LLM Leaderboard v2 rows (all 4,576); selection happens after canonicalisation."""
    return pd.read_csv(raw / "open_llm_leaderboard_csv" / "huggingface_v2.csv")


def hf_v2_frames(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores (raw accuracies as fractions, not the leaderboard's normalised scores) and metadata."""
    scores = pd.concat([
        pd.DataFrame({"raw_name": rows["model_name"], "benchmark": bench,
                      "score": rows[f"evaluations_{key}_value"], "score_scale": "fraction"})
        for key, bench in HF_BENCHMARKS.items()
    ], ignore_index=True).dropna(subset=["score"])
    meta = pd.DataFrame({
        "raw_name": rows["model_name"], "display_name": rows["model_name"],
        "organization": rows["model_name"].str.split("/").str[0], "open_weights": True,
        "params_b": rows["metadata_params_billions"].where(rows["metadata_params_billions"] > 0),
    })
    return frame(scores, SCORE_COLS, "open_llm_leaderboard_v2"), frame(meta, META_COLS, "open_llm_leaderboard_v2")


# LMArena tables with a licence column, newest first: (folder, file, name column, source, as_of).
LMARENA_TABLES = (
    ("open_llm_leaderboard_csv", "lmarena_text.csv", "model", "lmarena_csv", None),  # 2025-08-06
    ("open_llm_leaderboard_csv", "lmsys.csv", "model", "lmarena_csv", None),  # 2025-07-18
    ("lmarena_arena_catalog", "leaderboard_with_pricing_2024-10-16.csv", "key", "lmarena_catalog", dt.date(2024, 10, 16)),
)


def read_lmarena_licences(raw: Path) -> pd.DataFrame:
    """Organisation and licence of the models on LMArena's leaderboard tables (LMARENA_TABLES): `open_weights`
    is False for `Proprietary`, True for any other stated licence, null where none is stated (`Unknown`, `-`).
    Metadata only; the scores come from LMArena's leaderboard JSON."""
    frames = []
    for folder, name, column, source, as_of in LMARENA_TABLES:
        rows = pd.read_csv(raw / folder / name).rename(columns={column: "raw_name", "License": "license",
                                                                 "Organization": "organization"})
        licence = rows["license"].where(~rows["license"].isin(["Unknown", "-"]))
        frames.append(frame(pd.DataFrame({
            "raw_name": rows["raw_name"], "organization": rows["organization"],
            "open_weights": licence.map(lambda v: None if pd.isna(v) else str(v).strip() != "Proprietary"),
        }), META_COLS, source, as_of))
    return pd.concat(frames, ignore_index=True)
