"""What one more benchmark measurement costs in US dollars (issue 49 item 2; input to `next_evaluations`).

Measuring cell (m, j) means running benchmark j's q_j questions through model m. One rule for every cell:

    cost(m, j) = q_j x (T^in_j p^in_m + T^out_j p^out_m) / 1e6                          (1)

T^in_j, T^out_j the benchmark's input and output tokens per question, p^in_m, p^out_m the model's USD per million
input and output tokens (its cheapest provider by the 3:1 blend, `token_prices`). (A model's own LiveBench run
was once used instead; only measured cells have one and measured cells are never candidates, so the branch was
dead and is gone: second review of issue 49.)

Per benchmark (`benchmark_profiles`), from LiveBench's cost file (2026-06-25: 46 models x 23 tasks; its
per-task columns ride on the `livebench_task_<task>` score rows, `compass.ingest.connectors.livebench`):

  * a LiveBench task `livebench_task_<x>`: q_j = nq_<x>, T_j = the median over the file's runs of task x of its
    input and output tokens per question (out_<x>, and what the rest of the task's USD buys at input price). The
    tasks differ by three orders of magnitude: agentic coding (javascript, python, typescript) runs ~250,000-630,000
    input tokens per question, AMPS_Hard ~70. A category `livebench_<category>` or `livebench_global` is a mean of
    tasks, so measuring it runs them all: q_j = the sum of their nq, T_j their question-weighted mean (the
    connector writes both on the category rows);
  * not for sale (`NOT_PURCHASABLE`), cost NaN, so never a candidate of `next_evaluations` (its value is not
    computed and it is out of both rankings; the column still informs the imputation): vote tallies and
    composites (`lmarena_*`, `webdev_arena`, `wildbench_elo`: pairwise human or judge votes, not a question set one
    runs; `eci`, `livebench`: indices over other benchmarks), and agentic, long-context and video benchmarks
    (SWE-bench Verified's 500 tasks, terminal_bench, cybench, gso, fictionlivebench_*, video_mme, arc_agi_2, ...)
    for which we have no sourced token profile: a multi-turn agent run or a 120k-token context per task is not 50
    typical questions, and guessing its price would rank it on a made-up number;
  * another benchmark: q_j its published size (`KNOWN_QUESTIONS`), else the median LiveBench task's q; T_j the
    median LiveBench task's tokens (a stated approximation for a question-answer benchmark);
  * without any LiveBench cost data: q_j = `KNOWN_QUESTIONS` or 50, T_j = 1,500 input + 500 output tokens.

A LiveBench column (task or category) is priced from its own cost data even when its name matches a pattern above
(`livebench_agentic_coding` carries its tasks' measured tokens).

A model with no price at all costs the median over the priced models of the same benchmark (stated fallback).
"""

from __future__ import annotations

import fnmatch
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
#: Columns one cannot buy a measurement of at a known price (module docstring): cost NaN, never a candidate.
NOT_PURCHASABLE: tuple[str, ...] = (
    # votes and composites
    "lmarena_*", "webdev_arena", "wildbench_elo", "eci", "livebench",
    # agentic, long-context, video: no sourced token profile
    "swe_bench*", "swe_lancer*", "terminal_bench", "cybench", "cybersecurity_ctfs", "gso", "tau_bench*", "osworld*",
    "androidworld_sr", "mm_mind2web", "browsecomp", "weirdml", "arc_agi*", "fictionlivebench_*", "*mrcr*", "ruler",
    "longbench_v2", "graphwalks_*", "infinitebench_*", "nih_multi_needle", "video_mme*", "videomme*", "mlvu*",
    "lvbench", "longvideobench",
)
TASK_COLUMNS = ("n_questions", "input_tokens_per_question", "output_tokens_per_question")
PROFILE_COLUMNS = ["questions", "input_tokens", "output_tokens"]
DEFAULT_PROFILE = (50.0, 1500.0, 500.0)  # no LiveBench cost data: q, T^in, T^out
TASK_PREFIX = "livebench_task_"  # the connector's names of single LiveBench tasks


def purchasable(benchmark: str, patterns: tuple[str, ...] = NOT_PURCHASABLE) -> bool:
    """False for a column matching one of `patterns` (`NOT_PURCHASABLE`, module docstring)."""
    return not any(fnmatch.fnmatch(benchmark, p) for p in patterns)


def benchmark_profiles(benchmarks: list[str] | pd.Index, scores: pd.DataFrame | None = None,
                       known: Mapping[str, int] | None = None,
                       not_purchasable: tuple[str, ...] = NOT_PURCHASABLE) -> pd.DataFrame:
    """q_j, T^in_j, T^out_j of (1) for every benchmark (module docstring's rules): benchmark -> PROFILE_COLUMNS,
    NaN for a column not for sale (`purchasable` against `not_purchasable`, unless LiveBench's cost data price it;
    () restores the earlier rule, every column at the median task's profile: an ablation). scores: long rows
    [benchmark, n_questions, input_tokens_per_question, output_tokens_per_question] (raw.benchmark_scores; rows
    without them are ignored)."""
    have = scores is not None and set(TASK_COLUMNS) <= set(scores.columns)
    rows = scores.dropna(subset=list(TASK_COLUMNS)) if have else pd.DataFrame(columns=["benchmark", *TASK_COLUMNS])
    tasks = rows.groupby("benchmark")[list(TASK_COLUMNS)].median().set_axis(PROFILE_COLUMNS, axis=1)
    single = tasks[tasks.index.str.startswith(TASK_PREFIX)]  # the typical task: not a category's sum of tasks
    typical = single.median() if len(single) else pd.Series(DEFAULT_PROFILE, index=PROFILE_COLUMNS)
    sizes = dict(KNOWN_QUESTIONS if known is None else known)
    out = pd.DataFrame([typical.to_numpy()] * len(benchmarks), index=pd.Index(benchmarks), columns=PROFILE_COLUMNS)
    out["questions"] = [float(sizes.get(b, typical["questions"])) for b in out.index]
    out.loc[[not purchasable(b, not_purchasable) for b in out.index]] = np.nan
    live = out.index.intersection(tasks.index)
    out.loc[live] = tasks.loc[live].to_numpy()
    return out.astype(float)


def token_prices(prices: pd.DataFrame, models: list[str] | pd.Index) -> pd.DataFrame:
    """p^in_m, p^out_m of (1): per model the provider row with the lowest 3:1 blend (3 input + output) / 4 of
    `prices` (rows [model_id, input_usd_per_mtok, output_usd_per_mtok], e.g. compass.case_prices); NaN = unpriced."""
    rows = prices.dropna(subset=["input_usd_per_mtok", "output_usd_per_mtok"])
    rows = rows.assign(_blend=(3 * rows["input_usd_per_mtok"] + rows["output_usd_per_mtok"]) / 4)
    cheapest = rows.sort_values(["_blend", "model_id"]).drop_duplicates("model_id").set_index("model_id")
    return cheapest[["input_usd_per_mtok", "output_usd_per_mtok"]].reindex(pd.Index(models)).astype(float)


def cell_costs(profiles: pd.DataFrame, prices: pd.DataFrame) -> pd.DataFrame:
    """USD of measuring every cell (rows = prices' models, columns = profiles' benchmarks), eq. (1); an unpriced
    model the column's median over the priced models; NaN for a whole column not for sale (profile NaN)."""
    q = profiles["questions"].to_numpy(dtype=float)
    per_question = (np.outer(prices["input_usd_per_mtok"].to_numpy(dtype=float), profiles["input_tokens"])
                    + np.outer(prices["output_usd_per_mtok"].to_numpy(dtype=float), profiles["output_tokens"])) / 1e6
    usd = pd.DataFrame(per_question * q, index=prices.index, columns=profiles.index)
    if prices.isna().all(axis=None):
        raise ValueError("cell_costs: no model has a price")
    return usd.fillna(usd.median())
