"""Which raw benchmarks form a case's x_raw (§4.3), and why: a fixed list, or the coverage of the current models.

The paper's x_raw is a complete matrix of benchmarks every model was run on. A live catalog is two nearly
disjoint blocks: current models scored by the newest source, older ones by the others. A fixed benchmark list
puts the current models on mostly imputed rows. `choose_by: coverage` re-makes the choice from the scores on
every refresh:

1. current models: those released within `current_days` of the newest release among the candidates (the scores'
   `release_date` column, joined from raw.models); a model with no known release date is not current. Without
   any release date (a user's own scores) the newest score date (`as_of`) stands in. The snapshot date alone
   cannot say which models are current: an export dated September 2026 re-publishes 2023 models' runs;
2. core: the candidates observed on at least `min_current_coverage` of the current models;
3. bridges: the other candidates, most-measured first (they measure the most of the rest of the catalog, the
   models the utility learns from among them), each kept when it shares at least `min_bridging` models with
   the core (the models that tie the two blocks in the factor model) and the current models' median share of
   imputed cells stays at most `max_imputed_share`;
4. models: those observed on at least `min_benchmarks_per_model` chosen benchmarks (then benchmarks with
   fewer than `min_models_per_benchmark` models go, alternately, as in the fixed rule).

`benchmark_choice` returns one row per candidate with its counts, whether it is chosen and why
(compass.case_benchmarks); `build_x_raw` (case_inputs) builds x_raw from the chosen ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.mlcompass.case_study import BenchmarkSpec

CHOICE_COLUMNS = ["benchmark", "source", "n_models", "n_current", "current_coverage", "n_bridging", "core", "chosen",
                  "reason"]


@dataclass(frozen=True)
class Choice:
    """The wide matrix of every candidate benchmark (before the model screen), the chosen benchmarks and models,
    the current models, and the per-benchmark record (`CHOICE_COLUMNS`)."""

    wide: pd.DataFrame
    benchmarks: list[str]
    models: pd.Index
    current: pd.Index
    table: pd.DataFrame


def candidate_matrix(scores: pd.DataFrame, spec: BenchmarkSpec) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """(wide, source, newest): model x benchmark matrix of the candidate scores (one value per cell: the first
    source in `source_priority`, then any other), each benchmark's source, and each model's date for step 1 of
    the module docstring: its release date where the scores carry any, else its newest score date."""
    names = [b for b in scores["benchmark"].unique() if spec.selects(b)]  # one pattern match per benchmark
    rows = scores[scores["benchmark"].isin(names)]
    if spec.sources:
        rows = rows[rows["source"].isin(spec.sources)]
    if spec.models:
        rows = rows[rows["model_id"].isin(spec.models)]
    rank = {s: i for i, s in enumerate(spec.source_priority)}
    rows = rows.assign(_rank=rows["source"].map(rank).fillna(len(rank))).sort_values(["_rank", "source"])
    rows = rows.drop_duplicates(["model_id", "benchmark"])
    wide = rows.pivot(index="model_id", columns="benchmark", values="score").astype(float)
    wide.columns.name, wide.index.name = None, "model_id"
    source = rows.groupby("benchmark")["source"].agg(lambda s: s.mode().iloc[0])
    return wide, source, model_dates(rows)


def model_dates(rows: pd.DataFrame) -> pd.Series:
    """Per model: its release date when any row carries one (NaT for the models without), else its newest `as_of`."""
    for column in ("release_date", "as_of"):
        if column in rows and rows[column].notna().any():
            return pd.to_datetime(rows[column]).groupby(rows["model_id"]).max()
    return pd.Series(dtype="datetime64[ns]")


def current_models(newest: pd.Series, days: int) -> pd.Index:
    """Models whose date (`model_dates`) is at most `days` older than the newest of all."""
    if newest.empty or newest.isna().all():
        return pd.Index([], name="model_id")
    return pd.Index(newest.index[newest >= newest.max() - pd.Timedelta(days=days)], name="model_id")


def _screen(wide: pd.DataFrame, spec: BenchmarkSpec) -> pd.DataFrame:
    """Drop benchmarks below `min_models_per_benchmark` and models below `min_benchmarks_per_model`,
    alternately, until both hold."""
    for _ in range(20):
        wide = wide[wide.columns[wide.notna().sum() >= spec.min_models_per_benchmark]]
        keep = wide.index[wide.notna().sum(axis=1) >= spec.min_benchmarks_per_model]
        if len(keep) == len(wide):
            break
        wide = wide.loc[keep]
    return wide


def _median_imputed(observed: pd.DataFrame, current: pd.Index, columns: list[str]) -> float:
    """Median share of imputed cells over the current models' rows restricted to `columns`."""
    rows = observed.loc[observed.index.intersection(current), columns]
    return float(1.0 - rows.mean(axis=1).median()) if len(rows) else 0.0


def benchmark_choice(scores: pd.DataFrame, spec: BenchmarkSpec) -> Choice:
    """The benchmark choice of a case (module docstring): fixed (`choose_by: fixed`) or by coverage."""
    wide, source, newest = candidate_matrix(scores, spec)
    observed = wide.notna()
    current = current_models(newest, spec.current_days)
    n_models = observed.sum()
    n_current = observed.reindex(current).sum() if len(current) else n_models * 0
    coverage = n_current / max(len(current), 1)
    core = [b for b in wide.columns if coverage[b] >= spec.min_current_coverage and n_models[b] >= spec.min_models_per_benchmark]
    reason: dict[str, str] = {}
    if spec.choose_by == "fixed":
        chosen = list(wide.columns)
        reason.update({b: "fixed list" for b in chosen})
    else:
        chosen = list(core)
        reason.update({b: f"core: observed on {n_current[b]} of {len(current)} current models" for b in core})
        in_core = observed[core].any(axis=1) if core else pd.Series(False, index=wide.index)
        for b in sorted(set(wide.columns) - set(core), key=lambda b: (-n_models[b], b)):
            shared = int((observed[b] & in_core).sum())
            if n_models[b] < spec.min_models_per_benchmark:
                reason[b] = f"observed on {n_models[b]} models, fewer than min_models_per_benchmark"
            elif shared < spec.min_bridging:
                reason[b] = f"shares {shared} models with the core, fewer than min_bridging {spec.min_bridging}"
            elif (share := _median_imputed(observed, current, chosen + [b])) > spec.max_imputed_share + 1e-9:
                reason[b] = f"would make the current models' median imputed share {share:.2f} > max_imputed_share"
            else:
                chosen.append(b)
                reason[b] = f"bridge: shares {shared} models with the core, observed on {n_models[b]} models"
    final = _screen(wide[chosen], spec) if chosen else wide.iloc[:0, :0]
    kept = set(final.columns)
    for b in set(chosen) - kept:
        reason[b] = "fewer than min_models_per_benchmark models with min_benchmarks_per_model chosen benchmarks"
    table = pd.DataFrame({
        "benchmark": wide.columns, "source": source.reindex(wide.columns).to_numpy(),
        "n_models": n_models.to_numpy(int), "n_current": n_current.reindex(wide.columns).to_numpy(int),
        "current_coverage": coverage.reindex(wide.columns).to_numpy(float),
        "n_bridging": _bridging(observed.loc[final.index], core, list(final.columns)).reindex(wide.columns).to_numpy(float),
        "core": wide.columns.isin(core), "chosen": wide.columns.isin(list(kept)),
        "reason": [reason[b] for b in wide.columns],
    })
    return Choice(wide, sorted(kept), final.index.sort_values(), current, table.sort_values(
        ["chosen", "core", "n_models", "benchmark"], ascending=[False, False, False, True]).reset_index(drop=True))


def _bridging(observed: pd.DataFrame, core: list[str], chosen: list[str]) -> pd.Series:
    """Per chosen benchmark, the models observed on it and on the other block (core vs the rest): for a core
    benchmark the models that also have a chosen non-core benchmark, for the others those that have a core one.
    NaN where one block is empty (nothing to bridge)."""
    core = [b for b in core if b in chosen]
    rest = [b for b in chosen if b not in core]
    if not core or not rest:
        return pd.Series(np.nan, index=chosen, dtype=float)
    in_core, in_rest = observed[core].any(axis=1), observed[rest].any(axis=1)
    return pd.Series({b: float((observed[b] & (in_rest if b in core else in_core)).sum()) for b in chosen})
