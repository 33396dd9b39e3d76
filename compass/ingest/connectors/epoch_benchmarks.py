"""Epoch AI Benchmarking Hub export (CC-BY-4.0): the benchmark-data ZIP or folder of CSVs.

One score per file row (`Model version` x the file's score column); accuracy columns become
fractions when the file stores percents (any value > 1.5), with their standard error. The
Epoch Capabilities Index file gives `eci` (scale `index`) and model metadata (display name,
organization, release date, open weights); every benchmark file's `Release date` and
`Organization` columns give the release date and developer of the model versions it scores.
Files are found by their base name, so a ZIP's `benchmark_data/` prefix does not matter; every
file below is required.

`parse_update` reads a *partial* newer export (the 2026-09 repackaging: a subset of the files,
FrontierMath re-run as `_v2` files, which become their own benchmarks because their problem sets
and runs differ) and `merge_update` lays it over a full parse: per (model version, benchmark) the
newer file's rows win. Rows with a non-empty `Source URL` (hand-added vendor-reported rows, not
Epoch runs) are dropped in both.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from compass.ingest.connectors.base import (
    META_COLS, SCORE_COLS, FormatChange, Parsed, Payload, SingleFile, frame, keep_unreadable, read_csv, screen,
    to_date,
)

# file -> (benchmark id, score column, stderr column, scale).
BENCHMARKS: dict[str, tuple[str, str, str | None, str]] = {
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
# Files a newer partial export carries under new names: re-runs on a new version, so new benchmark ids.
UPDATE_FILES: dict[str, tuple[str, str, str | None, str]] = {
    "frontiermath_tiers_1_3_v2.csv": ("frontiermath_v2", "mean_score", "stderr", "fraction"),
    "frontiermath_tier_4_v2.csv": ("frontiermath_tier_4_v2", "mean_score", "stderr", "fraction"),
}
ECI = "epoch_capabilities_index.csv"
MODEL = "Model version"
ECI_META = (MODEL, "Display name", "Model name", "Organization", "Release date", "Model accessibility")
ROW_META = ("Release date", "Organization")
VENDOR_ROW = "Source URL"  # filled only on rows a curator added from a vendor's announcement


def _percent(values: pd.Series) -> bool:
    num = pd.to_numeric(values, errors="coerce")
    return bool(num[np.isfinite(num)].max() > 1.5)  # an infinite score is a bad row (screen), not a percent


def _file_rows(name: str, data: bytes, spec: tuple[str, str, str | None, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, per-row metadata) of one benchmark file; vendor-reported rows are left out."""
    bench, col, se_col, scale = spec
    df = read_csv(EpochBenchmarks.name, name, data, [MODEL, col] + ([se_col] if se_col else []))
    if VENDOR_ROW in df.columns:
        df = df[df[VENDOR_ROW].isna()]
    df = df[df[MODEL].notna() & df[col].notna()]
    percent = scale == "fraction" and _percent(df[col])
    score = keep_unreadable(df[col], pd.to_numeric(df[col], errors="coerce") / (100.0 if percent else 1.0))
    stderr = np.nan
    if se_col is not None:
        stderr = pd.to_numeric(df[se_col], errors="coerce") / (100.0 if percent else 1.0)
    names = df[MODEL].str.strip()
    scores = pd.DataFrame({"raw_name": names, "benchmark": bench, "score": score, "score_scale": scale, "stderr": stderr})
    meta = pd.DataFrame({"raw_name": names, **{c.lower().replace(" ", "_"): df[c] if c in df else None for c in ROW_META}})
    return scores, meta


def _meta_rows(rows: list[pd.DataFrame]) -> pd.DataFrame:
    """One metadata row per model version from the benchmark files: its first stated release date and
    organisation (files in BENCHMARKS order)."""
    meta = pd.concat(rows, ignore_index=True)
    meta["release_date"] = to_date(meta["release_date"])
    firsts = [meta.dropna(subset=[c]).drop_duplicates("raw_name").set_index("raw_name")[c]
              for c in ("release_date", "organization")]
    return pd.concat(firsts, axis=1).rename_axis("raw_name").reset_index()


class EpochBenchmarks(SingleFile):
    name = "epoch_benchmarks"
    source = "epoch_ai_hub"

    def parse(self, payload: Payload) -> Parsed:
        by_base = {path.rsplit("/", 1)[-1]: data for path, data in payload.files.items()}
        missing = [f for f in BENCHMARKS if f not in by_base]
        if missing:
            raise FormatChange(self.name, payload.name, missing[0], f"the export lacks the file {missing[0]!r}")
        parts = [_file_rows(f, by_base[f], spec) for f, spec in BENCHMARKS.items()]
        eci = read_csv(self.name, ECI, by_base[ECI], ECI_META)
        if eci.empty:
            raise FormatChange(self.name, ECI, MODEL, "the capabilities index has no rows")
        access = eci["Model accessibility"]
        meta = pd.DataFrame({
            "raw_name": eci[MODEL].str.strip(),
            "display_name": eci["Display name"].fillna(eci["Model name"]),
            "organization": eci["Organization"],
            "release_date": to_date(eci["Release date"]),
            "open_weights": np.where(access.isna(), None, access.str.startswith("Open weights", na=False)),
        })
        meta = (pd.concat([meta, _meta_rows([m for _, m in parts])], ignore_index=True)  # the index first
                .groupby("raw_name", sort=False).first().reset_index())
        return self._parsed([s for s, _ in parts], meta, payload)

    def parse_update(self, payload: Payload) -> Parsed:
        """A partial newer export: whichever BENCHMARKS / UPDATE_FILES files it holds (at least one)."""
        by_base = {path.rsplit("/", 1)[-1]: data for path, data in payload.files.items()}
        known = {**BENCHMARKS, **UPDATE_FILES}
        present = [f for f in known if f in by_base and f != ECI]
        if not present:
            raise FormatChange(self.name, payload.name, "gpqa_diamond.csv", "the update holds no known benchmark file")
        parts = [_file_rows(f, by_base[f], known[f]) for f in present]
        return self._parsed([s for s, _ in parts], _meta_rows([m for _, m in parts]), payload)

    def _parsed(self, scores: list[pd.DataFrame], meta: pd.DataFrame, payload: Payload) -> Parsed:
        as_of = payload.as_of or dt.date.today()
        return screen(self.name, payload.name, {
            "benchmark_scores": frame(pd.concat(scores, ignore_index=True), SCORE_COLS, self.source, as_of),
            "models": frame(meta, META_COLS, self.source, as_of)})


def merge_update(full: Parsed, update: Parsed) -> Parsed:
    """`full` with `update` laid over it: the update's rows replace every (model version, benchmark) it scores;
    the metadata rows of both are kept (the models table takes one value per field)."""
    old, new = full["benchmark_scores"], update["benchmark_scores"]
    replaced = pd.MultiIndex.from_frame(old[["raw_name", "benchmark"]]).isin(
        pd.MultiIndex.from_frame(new[["raw_name", "benchmark"]]))
    return Parsed({"benchmark_scores": pd.concat([old[~replaced], new], ignore_index=True),
                   "models": pd.concat([update["models"], full["models"]], ignore_index=True)}, full.dropped)
