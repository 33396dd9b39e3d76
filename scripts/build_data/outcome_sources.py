"""Per-query outcome sources whose models reach higher in the catalog than the 2024 sets (issue 42, item 6).

The utilities of a case are learned from per-query outcomes of the models that answered them (ML Compass §4.5);
they rank the whole catalog, so they should come from models as strong as those they rank. Of the per-query
sources in shared/data/raw (data/PROVENANCE.md, "Outcome sources"), two hold models newer than the 2024 sets:

* MathArena AIME 2025 I (2025-02-10): per problem, the % of 4 runs each of 16 models solved (o1, o3-mini,
  DeepSeek-R1, Gemini 2.0, ...); expanded to 4 generations, the first k = 4 x %/100 correct;
* LiveCodeBench self-repair (HEAD 2025-08-01): per problem, pass@1 of 17 models (o1-preview, o1-mini,
  Claude 3.5 Sonnet 2024-10, GPT-4o 2024-08, ...) from 10 samples (1 for an "(N=1)" model); expanded to n
  generations, the first k = n x pass@1/100 correct.

The other per-query sources reach no higher: LiveCodeBench execution / test generation stop at GPT-4o
2024-05, WildBench's per-prompt scores and arena-bench-v1's grades are 2023-24 models, MMLU-Pro's 29 models are
already in query_records; EvalPlus and Arena-Hard publish leaderboard aggregates only, no per-query outcome.

Effort and snapshot variants of one model ("o3-mini (high)", "GPT-4O-2024-08-06") resolve to its canonical id;
per dataset the best-scoring variant is kept (`best_variants`), as the benchmark scores keep theirs.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from compass.ingest.canonical import canonical_id

AS_OF = {"matharena": dt.date(2025, 2, 10), "livecodebench": dt.date(2025, 8, 1)}
MATHARENA_RUNS = 4
LCB_REPAIR = "performances_repair_HEAD-2025-08-01.json.gz"
# `mistral-large-latest` named a different model at each LiveCodeBench snapshot; which one answered is unknown.
AMBIGUOUS = {"Mistral-Large"}
_EFFORT = re.compile(r"\s*\((low|medium|high)\)$", flags=re.IGNORECASE)


def _expand(cells: pd.DataFrame, n: pd.Series, dataset: str, source: str) -> pd.DataFrame:
    """Cells [raw_name, query_id, pct, category] of pass rates in % of n runs -> one record per run, the first
    k = n x pct / 100 of them correct (so each cell's mean `correct` is pct / 100 exactly)."""
    k = np.rint(cells["pct"].to_numpy() * n.to_numpy() / 100.0)
    if not np.allclose(k * 100.0 / n.to_numpy(), cells["pct"]):
        raise ValueError(f"{dataset}: pass rates are not on the 100 k / n grid")
    reps = np.repeat(np.arange(len(cells)), n.to_numpy())
    generation = np.concatenate([np.arange(m) for m in n.to_numpy()])
    rows = cells.iloc[reps].reset_index(drop=True)
    return pd.DataFrame({
        "raw_name": rows["raw_name"], "dataset": dataset, "split": "test", "query_id": rows["query_id"].astype(str),
        "generation": generation, "correct": (generation < k[reps]).astype(float), "category": rows["category"],
        "score": None, "confidence": None, "cost_usd": None, "latency_ms": None, "tokens_in": None,
        "tokens_out": None, "source": source, "as_of": AS_OF[source],
    })


def _js_array(path: Path) -> list[dict]:
    """The JSON array assigned in a `var name = [...];` JavaScript file."""
    text = path.read_text()
    return json.loads(text[text.index("["): text.rindex("]") + 1])


def read_matharena(raw: Path) -> pd.DataFrame:
    """MathArena AIME 2025 I: one record per (model, problem, run)."""
    table = pd.DataFrame(_js_array(raw / "matharena" / "table_data.js")).set_index("question")
    table = table[[isinstance(q, int) for q in table.index]].astype(float)  # the problems, not the "Avg" / "Cost" rows
    cells = table.rename_axis(columns="raw_name").stack().rename("pct").reset_index()
    cells = cells.rename(columns={"question": "query_id"}).assign(category=None)
    return _expand(cells, pd.Series(MATHARENA_RUNS, index=cells.index), "matharena_aime_2025_i", "matharena")


def read_livecodebench_repair(raw: Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """LiveCodeBench self-repair (2025-08-01): records, and each leaderboard name's canonical id from its HF /
    API name (the leaderboard abbreviates, e.g. `LLama3.1-70b-Ins`)."""
    data = json.loads(gzip.decompress((raw / "livecodebench" / LCB_REPAIR).read_bytes()))
    perf = pd.DataFrame(data["performances"]).query("model not in @AMBIGUOUS")
    cells = pd.DataFrame({"raw_name": perf["model"], "query_id": perf["question_id"], "pct": perf["pass@1"],
                          "category": perf["difficulty"]}).sort_values(["raw_name", "query_id"], ignore_index=True)
    n = cells["raw_name"].str.contains(r"\(n=1\)", case=False).map({True: 1, False: 10})
    ids = {m["model_repr"]: canonical_id(m["model_name"]) for m in data["models"] if m["model_repr"] not in AMBIGUOUS}
    return _expand(cells, n, "livecodebench_repair", "livecodebench"), ids


def read_outcomes(raw: Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """Both sources' records (with `raw_name`) and the explicit raw name -> canonical id pairs they need."""
    matharena = read_matharena(raw)
    repair, ids = read_livecodebench_repair(raw)
    ids.update({name: canonical_id(_EFFORT.sub(lambda m: "_" + m.group(1).lower(), name))
                for name in matharena["raw_name"].unique() if _EFFORT.search(name)})
    return pd.concat([matharena, repair], ignore_index=True), ids


def best_variants(records: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, model_id), the records of the variant (raw spelling) with the highest mean `correct`
    (ties: the first spelling), so a model answers each query once per generation."""
    mean = records.groupby(["dataset", "model_id", "raw_name"])["correct"].mean().reset_index()
    best = (mean.sort_values(["dataset", "model_id", "correct", "raw_name"], ascending=[True, True, False, True])
            .drop_duplicates(["dataset", "model_id"]))
    return records.merge(best[["dataset", "raw_name"]], on=["dataset", "raw_name"])
