"""LiveBench release tables (`public/table_<date>.csv`, with `categories_<date>.json` and, from
the 2026-06-25 release on, `cost_<date>.csv` beside it).

benchmark_scores: the 23 tasks `livebench_task_<task>` (percent / 100), the 7 category means
`livebench_<category>` (mean of the category's tasks, missing if one task is) and
`livebench_global` (mean of the category means, as on the LiveBench site).
model_costs (when the cost file is present): the per-token list prices LiveBench priced each model
at (`input_price_per_million`, `output_price_per_million`), provider `list_price`; the cost file's
per-question USD (`cost_per_question`) rides along as an extra column. Its per-task columns ride along on the
`livebench_task_<task>` score rows, summed over their tasks on the category and global rows (extra columns,
`TASK_COST_COLUMNS`): `n_questions` (nq_<task>), `run_usd` (the
task's USD for that model's run), `output_tokens_per_question` (out_<task>) and `input_tokens_per_question` (what
the rest of the task's USD buys at the model's input price); what `compass.mlcompass.evaluation_costs` prices an
evaluation from.
`as_of` defaults to the release date in the file name.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

from compass.ingest.connectors.base import (
    COST_COLS, SCORE_COLS, FormatChange, Parsed, Payload, expect, frame, keep_unreadable, read_csv, read_json, screen,
    slug,
)
from compass.ingest.errors import IngestError

TABLE = re.compile(r"^table_(\d{4})_(\d\d)_(\d\d)\.csv$")
COST_FIELDS = ("model", "input_price_per_million", "output_price_per_million", "cost_per_question")
TASK_COST_COLUMNS = ("n_questions", "run_usd", "input_tokens_per_question", "output_tokens_per_question")


def release(name: str) -> str:
    """`2026_06_25` from `table_2026_06_25.csv` (a path prefix is ignored)."""
    match = TABLE.match(name.rsplit("/", 1)[-1])
    if match is None:
        raise IngestError(name, None, None, "livebench: expected a release table named table_YYYY_MM_DD.csv")
    return "_".join(match.groups())


class LiveBench:
    name = "livebench"
    source = "livebench"

    def siblings(self, name: str) -> list[str]:
        date = release(name)
        return [f"categories_{date}.json", f"cost_{date}.csv"]

    def parse(self, payload: Payload) -> Parsed:
        date = release(payload.name)
        categories_name, cost_name = self.siblings(payload.name)
        categories = expect(self.name, categories_name,
                            read_json(self.name, categories_name, payload.file(categories_name)), dict, "-")
        tasks_needed = [t for tasks in categories.values()
                        for t in expect(self.name, categories_name, tasks, list, "-")]
        table = read_csv(self.name, payload.name, payload.main(), ["model", *tasks_needed])
        raw = table.set_index("model")[tasks_needed]
        tasks = raw.apply(pd.to_numeric, errors="coerce") / 100.0
        cat_scores = pd.DataFrame({c: tasks[t].mean(axis=1, skipna=False) for c, t in categories.items()})
        wide = pd.concat([
            tasks.apply(lambda column: keep_unreadable(raw[column.name], column)).add_prefix("livebench_task_"),
            cat_scores.add_prefix("livebench_"),
            cat_scores.mean(axis=1, skipna=False).rename("livebench_global"),
        ], axis=1)
        wide.columns = [slug(c) for c in wide.columns]
        long = wide.rename_axis("raw_name").reset_index().melt("raw_name", var_name="benchmark", value_name="score")
        long = long.dropna(subset=["score"]).assign(score_scale="fraction")
        as_of = payload.as_of or dt.date(*map(int, date.split("_")))
        cost = read_csv(self.name, cost_name, payload.files[cost_name], COST_FIELDS) \
            if cost_name in payload.files else None
        if cost is not None:
            long = long.merge(task_costs(cost, categories), on=["raw_name", "benchmark"], how="left")
        tables = {"benchmark_scores": frame(long, [*SCORE_COLS, *(TASK_COST_COLUMNS if cost is not None else ())],
                                            self.source, as_of)}
        if cost is not None:
            if cost["input_price_per_million"].isna().all():
                raise FormatChange(self.name, cost_name, "input_price_per_million", "the price column is empty")
            prices = pd.DataFrame({
                "raw_name": cost["model"], "provider": "list_price",
                "input_usd_per_mtok": pd.to_numeric(cost["input_price_per_million"], errors="coerce"),
                "output_usd_per_mtok": pd.to_numeric(cost["output_price_per_million"], errors="coerce"),
                "cost_per_question_usd": pd.to_numeric(cost["cost_per_question"], errors="coerce"),
            })
            tables["model_costs"] = frame(prices, [*COST_COLS, "cost_per_question_usd"], self.source, as_of)
        return screen(self.name, payload.name, tables)


def task_costs(cost: pd.DataFrame, categories: dict[str, list[str]]) -> pd.DataFrame:
    """[raw_name, benchmark, *TASK_COST_COLUMNS] from the cost file's per-task columns (`<task>` USD of the run,
    `nq_<task>` questions, `out_<task>` output tokens per question); input tokens per question = (run USD / questions
    - output tokens x output price) / input price. A category `livebench_<category>` and `livebench_global` (means
    of tasks: measuring one runs all its tasks) get their tasks' summed questions and USD and question-weighted
    tokens per question (NaN when a task lacks its columns). Tasks the file lacks are left out. A value that is not
    a finite number, a negative one, a question count of 0 and whatever they make non-finite (an input price of 0
    divides by zero) are NaN: that cell is then not for sale, as for a non-numeric value."""
    def number(column: str) -> pd.Series:
        values = pd.to_numeric(cost[column], errors="coerce")
        return values.where(np.isfinite(values.astype(float)) & (values >= 0))
    p_in, p_out = number("input_price_per_million") / 1e6, number("output_price_per_million") / 1e6
    per_task = {}
    for task in [t for tasks in categories.values() for t in tasks]:
        if not {task, f"nq_{task}", f"out_{task}"} <= set(cost.columns):
            continue
        usd, n, out = number(task), number(f"nq_{task}").where(lambda q: q > 0), number(f"out_{task}")
        inp = ((usd / n - out * p_out) / p_in).clip(lower=0.0)
        per_task[task] = pd.DataFrame({"raw_name": cost["model"], "n_questions": n, "run_usd": usd,
                                       "input_tokens_per_question": inp, "output_tokens_per_question": out})
    groups = {f"livebench_task_{t}": [t] for t in per_task}
    groups |= {f"livebench_{c}": tasks for c, tasks in categories.items()}
    groups["livebench_global"] = [t for tasks in categories.values() for t in tasks]
    frames = []
    for benchmark, tasks in groups.items():
        if not all(t in per_task for t in tasks):
            continue
        parts = [per_task[t] for t in tasks]
        n = sum(p["n_questions"] for p in parts)
        frames.append(pd.DataFrame({
            "raw_name": cost["model"], "benchmark": slug(benchmark), "n_questions": n,
            "run_usd": sum(p["run_usd"] for p in parts),
            **{c: sum(p["n_questions"] * p[c] for p in parts) / n
               for c in ("input_tokens_per_question", "output_tokens_per_question")}}))
    columns = ["raw_name", "benchmark", *TASK_COST_COLUMNS]
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True)[columns]
    profile = out[list(TASK_COST_COLUMNS)]
    # a sum or product past float range: NaN, never inf
    return out.assign(**profile.where(np.isfinite(profile.astype(float))))
