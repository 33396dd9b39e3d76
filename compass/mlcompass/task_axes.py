"""Task axes a scenario weights or floors by name (issue 48 item 2), and the skills that name the measures.

The measures C1, C2, ... of §4.3 are what the benchmarks share; a platform team asks for a task ("coding",
"maths"). A task axis is read straight off the benchmarks that measure the task (`TASK_AXES`, the one place the
mapping is stated), not off the factors: on frontier_api a least-squares fit of the coding axis on C1, C2 explains
R² 0.63 of it and ranks first a model observed on no coding benchmark at all (`r2_on_measures` in
compass.task_axes says this per case and axis).

Axis score (in [0, 1]) of model m on axis a, over the case's models:
    A_a(m) = mean over the axis benchmarks b observed for m of (x_bm - min_b) / (max_b - min_b),
min and max over the case's models observed on b. A benchmark observed on fewer than `MIN_MODELS` of the case's
models is left out (a min-max over so few is no scale). Nothing is imputed: a model observed on none of an axis's
benchmarks has no score on it, and a scenario weighting or flooring that axis leaves it out and says so (the
factor imputation would put back mostly the general factor, the R² above).

A scenario's axis weights replace the case's utility (as person weights do, §4.5):
    Û(m) = Σ_a w_a A_a(m) / Σ_a w_a,      Score_s(m) = Û(m) - λ c(m)   (§4.6),
and an axis floor R_a keeps only the models with A_a(m) >= R_a (as a raw floor does, footnote 6 (ii)). The
continuous target x* (§4.6, Problems 4-6) needs Û as a function of the measures: there Û is the non-negative
least-squares fit of the weighted axis score on the measures (`AxisUtility`).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from compass.ingest.errors import IngestError

# axis -> the benchmark ids (raw.benchmark_scores.benchmark) that measure it; a benchmark may serve two axes
# (agentic coding is both). Ids absent from a case's catalog are simply not used there.
TASK_AXES: dict[str, tuple[str, ...]] = {
    "coding": ("livebench_coding", "livebench_agentic_coding", "swe_bench_verified", "aider_polyglot",
               "terminal_bench", "livecodebench", "humaneval", "mbpp", "lmarena_coding"),
    "maths": ("livebench_mathematics", "frontiermath_v2", "frontiermath_tier_4_v2", "otis_mock_aime", "aime_2024",
              "aime_2025", "math_level_5", "hf_math_lvl5", "lmarena_math"),
    "agentic": ("livebench_agentic_coding", "terminal_bench", "swe_bench_verified", "tau_bench_retail",
                "tau_bench_airline", "bfcl"),
    "long_context": ("fictionlivebench_120k", "openai_mrcr_2_needle_128k", "graphwalks_bfs_128k",
                     "graphwalks_parents_128k", "lmarena_long_user"),
    "writing": ("lmarena_creative_writing", "lmarena_industry_writing_and_literature_and_language",
                "livebench_language"),
}
# Spellings a person may use for an axis.
AXIS_ALIASES = {"long context": "long_context", "long-context": "long_context", "math": "maths"}
#: A benchmark enters an axis of a case when at least this many of the case's models were observed on it.
MIN_MODELS = 5
AXIS_TABLE_COLUMNS = ["axis", "benchmark", "n_models_observed", "used", "n_models_axis", "benchmark_agreement",
                      "r2_on_measures"]

# The skill a benchmark measures, first matching pattern wins: the words that name a measure from its loadings
# (compass.mlcompass.measure_names.label). Unmatched benchmarks name themselves.
SKILLS: tuple[tuple[str, str], ...] = (
    ("*agentic_coding*", "agentic coding"), ("terminal_bench", "agentic coding"), ("swe_bench*", "agentic coding"),
    ("*coding*", "coding"), ("*code*", "coding"), ("aider*", "coding"), ("humaneval*", "coding"),
    ("mbpp*", "coding"), ("webdev_arena", "coding"),
    ("*if", "instruction following"), ("*ifeval*", "instruction following"), ("*_if_*", "instruction following"),
    ("*math*", "maths"), ("frontiermath*", "maths"), ("aime*", "maths"), ("*aime", "maths"), ("gsm8k*", "maths"),
    ("*gpqa*", "science"), ("simpleqa*", "factual recall"), ("triviaqa", "factual recall"),
    ("*data_analysis*", "data analysis"), ("*reasoning*", "reasoning"), ("*bbh*", "reasoning"),
    ("*musr*", "reasoning"), ("arc_agi*", "reasoning"), ("*language*", "writing"), ("*writing*", "writing"),
    ("*mmlu*", "knowledge"), ("lmarena_*", "chat preference"), ("wildbench_*", "chat preference"),
)


def skill(benchmark: str) -> str:
    """The skill `benchmark` measures (`SKILLS`), or the benchmark id itself."""
    return next((name for pattern, name in SKILLS if fnmatch.fnmatchcase(benchmark, pattern)), benchmark)


def axis_name(name: object) -> str | None:
    """The axis `name` refers to (an axis or an `AXIS_ALIASES` spelling), None if it is none."""
    key = AXIS_ALIASES.get(str(name).strip().lower(), str(name).strip().lower())
    return key if key in TASK_AXES else None


def parse_axes(spec: object, origin: str, key: str, floor: bool) -> dict[str, float]:
    """A scenario's `axes: {coding: 1.0}` (weights: finite, >= 0, not all zero) or `axis_floors: {coding: 0.6}`
    (`floor`: in [0, 1]) as axis -> number; else an IngestError naming the file `origin` and the key."""
    if not isinstance(spec, Mapping) or not spec:
        raise IngestError(origin, None, key, f"expected a mapping axis -> number over {list(TASK_AXES)}, got {spec!r}")
    out: dict[str, float] = {}
    for name, value in spec.items():
        where, axis = f"{key}.{name}", axis_name(name)
        if axis is None:
            raise IngestError(origin, None, where, f"unknown axis {name!r}; known axes: {', '.join(TASK_AXES)}")
        number = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
        if floor and not (number and 0 <= value <= 1):
            raise IngestError(origin, None, where, f"an axis floor must be a number in [0, 1], got {value!r}")
        if not floor and not (number and value >= 0):
            raise IngestError(origin, None, where, f"an axis weight must be a finite number >= 0, got {value!r}")
        if axis in out:
            raise IngestError(origin, None, where, f"axis {axis} given twice")
        out[axis] = float(value)
    if not floor and sum(out.values()) <= 0:
        raise IngestError(origin, None, key, f"axis weights are all zero: {out}")
    return out


def axis_benchmarks(raw_scores: pd.DataFrame, axis: str) -> list[str]:
    """The benchmarks of `axis` observed on at least MIN_MODELS of the models of `raw_scores` (wide, index model)."""
    present = [b for b in TASK_AXES[axis] if b in raw_scores.columns]
    return [b for b in present if raw_scores[b].notna().sum() >= MIN_MODELS]


def normalized(raw_scores: pd.DataFrame, benchmarks: list[str]) -> pd.DataFrame:
    """Each benchmark min-max scaled over the models observed on it (a constant column scales to 1)."""
    x = raw_scores[benchmarks].astype(float)
    span = (x.max() - x.min()).replace(0.0, np.nan)
    return ((x - x.min()) / span).fillna(1.0).where(x.notna())


def axis_scores(raw_scores: pd.DataFrame, axes: list[str]) -> pd.DataFrame:
    """A_a(m) for every model of `raw_scores` and axis of `axes` (NaN where m is observed on none of a's
    benchmarks); the module docstring's formula."""
    out = {}
    for axis in axes:
        used = axis_benchmarks(raw_scores, axis)
        out[axis] = normalized(raw_scores, used).mean(axis=1) if used else pd.Series(np.nan, index=raw_scores.index)
    return pd.DataFrame(out, index=raw_scores.index)


def weighted_axis_utility(scores: pd.DataFrame, weights: Mapping[str, float]) -> pd.Series:
    """Û(m) = Σ_a w_a A_a(m) / Σ_a w_a over the weighted axes (NaN where an axis score is missing)."""
    w = pd.Series(weights, dtype=float)
    return scores[list(w.index)].mul(w, axis=1).sum(axis=1, min_count=len(w)) / w.sum()


def projection(measures: pd.DataFrame, target: pd.Series) -> tuple[np.ndarray, float, float]:
    """(β >= 0, intercept, R²) of the least-squares fit target ≈ β0 + βᵀx over the models with a target: how much
    of an axis the case's measures carry, and Û as a function of x for the continuous target."""
    seen = target.dropna().index.intersection(measures.index)
    if len(seen) < 2:
        return np.zeros(measures.shape[1]), float(target.mean()) if len(seen) else 0.0, float("nan")
    x, y = measures.loc[seen].to_numpy(float), target[seen].to_numpy(float)
    xc, yc = x - x.mean(axis=0), y - y.mean()
    beta, _ = nnls(xc, yc)
    resid = yc - xc @ beta
    total = float(yc @ yc)
    r2 = 1 - float(resid @ resid) / total if total > 0 else float("nan")
    return beta, float(y.mean() - x.mean(axis=0) @ beta), r2


class AxisUtility:
    """Û(x) of an axis scenario as a utility of the measures (`compass.mlcompass.utilities.UtilityFn`): at a model's
    own measure vector, that model's weighted axis score (`weighted_axis_utility`); anywhere else (the continuous
    target's search), the non-negative least-squares projection β0 + βᵀx (`projection`)."""

    def __init__(self, measures: pd.DataFrame, utility: pd.Series):
        known = utility.dropna().index.intersection(measures.index)
        self.beta, self.intercept, self.r2 = projection(measures, utility)
        self._at = {tuple(row): float(utility[m]) for m, row in zip(known, measures.loc[known].to_numpy(float))}

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=float))
        fitted = self.intercept + x @ self.beta
        return np.array([self._at.get(tuple(row), f) for row, f in zip(x, fitted)])


def agreement(normalized_scores: pd.DataFrame) -> float:
    """Mean pairwise Spearman correlation of an axis's benchmarks over the models observed on both (pairs with
    fewer than MIN_MODELS shared models skipped): do the benchmarks that make the axis rank models alike?"""
    corr = normalized_scores.corr(method="spearman", min_periods=MIN_MODELS).to_numpy()
    upper = corr[np.triu_indices_from(corr, k=1)]
    upper = upper[np.isfinite(upper)]
    return float(upper.mean()) if upper.size else float("nan")


def axis_table(raw_scores: pd.DataFrame, measures: pd.DataFrame) -> pd.DataFrame:
    """compass.task_axes of one case: per axis and mapped benchmark, how many of the case's models (`raw_scores`,
    wide, index model) were observed on it and whether it enters the axis (>= MIN_MODELS); per axis, how many
    models have a score, how alike its benchmarks rank models (`agreement`) and how much of it the case's
    measures carry (R² of `projection`). Columns AXIS_TABLE_COLUMNS."""
    rows = []
    for axis, benchmarks in TASK_AXES.items():
        used = axis_benchmarks(raw_scores, axis)
        scores = axis_scores(raw_scores, [axis])[axis]
        agree = agreement(normalized(raw_scores, used)) if len(used) > 1 else float("nan")
        r2 = projection(measures, scores)[2]
        for bench in benchmarks:
            n = int(raw_scores[bench].notna().sum()) if bench in raw_scores else 0
            rows.append({"axis": axis, "benchmark": bench, "n_models_observed": n, "used": bench in used,
                         "n_models_axis": int(scores.notna().sum()), "benchmark_agreement": agree,
                         "r2_on_measures": r2})
    return pd.DataFrame(rows, columns=AXIS_TABLE_COLUMNS)


def axes_text(raw_scores: pd.DataFrame, axes: Mapping[str, float]) -> str:
    """'scenario axes coding=1 (7 benchmarks: ...), ...': what an axis scenario's utility is, for the board."""
    parts = [f"{a}={w:g} ({len(used)} benchmarks: {', '.join(used)})"
             for a, w in axes.items() for used in [axis_benchmarks(raw_scores, a)]]
    return ("scenario axes " + "; ".join(parts) + "; Û = their weighted mean of each model's min-max scaled scores "
            "on the benchmarks it was observed on")
