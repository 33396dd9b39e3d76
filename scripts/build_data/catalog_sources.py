"""Readers for aggregate benchmark sources -> (scores, metadata) frames keyed by raw name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .common import META_COLS, SCORE_COLS, frame, slug, to_date

# Epoch AI Benchmarking Hub: file -> (benchmark id, score column, stderr column, scale).
# Accuracy columns are converted to fractions when the file stores percents.
EPOCH_BENCHMARKS: dict[str, tuple[str, str, str | None, str]] = {
    "epoch_capabilities_index.csv": ("eci", "ECI Score", None, "index"),
    "gpqa_diamond.csv": ("gpqa_diamond", "mean_score", "stderr", "fraction"),
    "math_level_5.csv": ("math_level_5", "mean_score", "stderr", "fraction"),
    "otis_mock_aime_2024_2025.csv": ("otis_mock_aime", "mean_score", "stderr", "fraction"),
    "frontiermath.csv": ("frontiermath", "mean_score", "stderr", "fraction"),
    "frontiermath_tier_4.csv": ("frontiermath_tier_4", "mean_score", "stderr", "fraction"),
    "hle_external.csv": ("hle", "Accuracy", "Accuracy Standard Error", "fraction"),
    "simpleqa_verified.csv": ("simpleqa_verified", "mean_score", "stderr", "fraction"),
    "swe_bench_verified.csv": ("swe_bench_verified", "mean_score", "stderr", "fraction"),
    "swe_bench_bash.csv": ("swe_bench_bash", "% Resolved", None, "fraction"),
    "terminalbench_external.csv": ("terminal_bench", "Accuracy mean", "Accuracy SE", "fraction"),
    "aider_polyglot_external.csv": ("aider_polyglot", "Percent correct", None, "fraction"),
    "live_bench_external.csv": ("livebench", "Global average", None, "fraction"),
    "weirdml_external.csv": ("weirdml", "Accuracy", "Accuracy SE", "fraction"),
    "arc_agi_external.csv": ("arc_agi", "Score", None, "fraction"),
    "arc_agi_2_external.csv": ("arc_agi_2", "Score", None, "fraction"),
    "chess_puzzles.csv": ("chess_puzzles", "mean_score", "stderr", "fraction"),
    "simplebench_external.csv": ("simplebench", "Score (AVG@5)", None, "fraction"),
    "gso_external.csv": ("gso", "Score OPT@1", None, "fraction"),
    "cybench_external.csv": ("cybench", "Unguided % Solved", None, "fraction"),
    "fictionlivebench_external.csv": ("fictionlivebench_120k", "120k token score", None, "fraction"),
    "video_mme_external.csv": ("video_mme", "Overall (no subtitles)", None, "fraction"),
    "mmlu_external.csv": ("mmlu", "EM", None, "fraction"),
    "gsm8k_external.csv": ("gsm8k", "EM", None, "fraction"),
    "bbh_external.csv": ("bbh", "Average", None, "fraction"),
    "hella_swag_external.csv": ("hellaswag", "Overall accuracy", None, "fraction"),
    "wino_grande_external.csv": ("winogrande", "Accuracy", None, "fraction"),
    "trivia_qa_external.csv": ("triviaqa", "EM", None, "fraction"),
    "webdev_arena_external.csv": ("webdev_arena", "Arena Score", None, "elo"),
}


def _as_fraction(values: pd.Series) -> pd.Series:
    """Percent columns (any value > 1.5) are divided by 100; fractions pass through."""
    values = pd.to_numeric(values, errors="coerce")
    return values / 100.0 if values.max() > 1.5 else values


def read_epoch(raw: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Epoch AI Benchmarking Hub (CC-BY-4.0): one score per file row; ECI file gives metadata."""
    folder = raw / "epoch_ai_benchmarking_hub"
    scores = []
    for fname, (bench, col, se_col, scale) in EPOCH_BENCHMARKS.items():
        df = pd.read_csv(folder / fname)
        df = df[df["Model version"].notna() & pd.to_numeric(df[col], errors="coerce").notna()]
        score = _as_fraction(df[col]) if scale == "fraction" else pd.to_numeric(df[col])
        stderr = None
        if se_col is not None:
            se = pd.to_numeric(df[se_col], errors="coerce")
            stderr = se / 100.0 if pd.to_numeric(df[col]).max() > 1.5 else se
        scores.append(pd.DataFrame({
            "raw_name": df["Model version"].str.strip(), "benchmark": bench, "score": score,
            "score_scale": scale, "stderr": stderr,
        }))
    eci = pd.read_csv(folder / "epoch_capabilities_index.csv")
    access = eci["Model accessibility"]
    meta = pd.DataFrame({
        "raw_name": eci["Model version"].str.strip(),
        "display_name": eci["Display name"].fillna(eci["Model name"]),
        "organization": eci["Organization"],
        "release_date": to_date(eci["Release date"]),
        "open_weights": np.where(access.isna(), None, access.str.startswith("Open weights", na=False)),
    })
    return frame(pd.concat(scores, ignore_index=True), SCORE_COLS, "epoch_ai_hub"), frame(meta, META_COLS, "epoch_ai_hub")


def read_lmarena(raw: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """LMArena text leaderboard: one Bradley-Terry rating per category; stderr from the 95% CI."""
    board = json.loads((raw / "lmarena_arena_catalog" / "leaderboard-text.json").read_text())
    rows = [
        {
            "raw_name": name, "benchmark": f"lmarena_{slug(category)}", "score": r["rating"],
            "score_scale": "elo", "stderr": (r["rating_q975"] - r["rating_q025"]) / (2 * 1.959964),
        }
        for category, models in board.items()
        for name, r in models.items()
    ]
    scatter = json.loads((raw / "lmarena_arena_catalog" / "scatterplot-data.json").read_text())
    meta = pd.DataFrame([
        {
            "raw_name": s["model_api_name"], "display_name": s["name"], "organization": s.get("organization"),
            "open_weights": None if not s.get("license") else s["license"] != "Proprietary",
        }
        for s in scatter
    ])
    return frame(rows, SCORE_COLS, "lmarena_catalog"), frame(meta, META_COLS, "lmarena_catalog")


def read_livebench(raw: Path, release: str = "2026_01_08") -> pd.DataFrame:
    """LiveBench newest table: 23 tasks (percent -> fraction), 7 category means, global mean.

    Category score = mean of its tasks; global = mean of the category scores, as on the
    LiveBench site. Categories with a missing task are left missing for that model.
    """
    table = pd.read_csv(raw / "livebench" / f"table_{release}.csv")
    categories = json.loads((raw / "livebench" / f"categories_{release}.json").read_text())
    tasks = table.set_index("model") / 100.0
    cat_scores = pd.DataFrame({c: tasks[t].mean(axis=1, skipna=False) for c, t in categories.items()})
    wide = pd.concat([
        tasks.add_prefix("livebench_task_"),
        cat_scores.add_prefix("livebench_"),
        cat_scores.mean(axis=1, skipna=False).rename("livebench_global"),
    ], axis=1)
    wide.columns = [slug(c) for c in wide.columns]
    long = wide.rename_axis("raw_name").reset_index().melt("raw_name", var_name="benchmark", value_name="score")
    long = long.dropna(subset=["score"]).assign(score_scale="fraction")
    return frame(long, SCORE_COLS, "livebench")


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
