"""Turning warehouse tables into a case study's inputs: x_raw, costs, the case's catalog, outcome rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.case_study import PER_INTERACTION, BenchmarkSpec, CostSpec, UtilitySpec


def build_x_raw(scores: pd.DataFrame, spec: BenchmarkSpec) -> pd.DataFrame:
    """The model x benchmark matrix x_raw of §4.3 (NaN where a model lacks a score).

    One value per (model, benchmark): the first source in `source_priority`, then
    any other. Benchmarks covering too few models and models with too few
    benchmarks are dropped, alternately, until both thresholds hold.
    """
    chosen = [b for b in scores["benchmark"].unique() if spec.selects(b)]  # one pattern match per benchmark
    rows = scores[scores["benchmark"].isin(chosen)]
    if spec.models:
        rows = rows[rows["model_id"].isin(spec.models)]
    rank = {s: i for i, s in enumerate(spec.source_priority)}
    rows = rows.assign(_rank=rows["source"].map(rank).fillna(len(rank))).sort_values(["_rank", "source"])
    wide = rows.drop_duplicates(["model_id", "benchmark"]).pivot(index="model_id", columns="benchmark", values="score")
    for _ in range(20):
        keep_cols = wide.columns[wide.notna().sum() >= spec.min_models_per_benchmark]
        wide = wide[keep_cols]
        keep_rows = wide.index[wide.notna().sum(axis=1) >= spec.min_benchmarks_per_model]
        if len(keep_rows) == len(wide) and len(keep_cols) == wide.shape[1]:
            break
        wide = wide.loc[keep_rows]
    wide = wide.sort_index().sort_index(axis=1)
    wide.columns.name, wide.index.name = None, "model_id"
    return wide.astype(float)


def model_costs(costs: pd.DataFrame, models: pd.DataFrame, spec: CostSpec, model_ids: pd.Index) -> pd.Series:
    """Raw scalar cost per model (before normalization); models without one are absent."""
    if spec.table == "models":
        series = models.set_index("model_id")[spec.column]
    elif spec.column == PER_INTERACTION:
        series = interaction_costs(costs, spec)
    else:
        series = costs.groupby("model_id")[spec.column].agg(spec.provider_aggregate)
    series = series.reindex(model_ids).astype(float)
    return series[np.isfinite(series) & (series > 0)].rename("raw_cost")


def interaction_costs(costs: pd.DataFrame, spec: CostSpec) -> pd.Series:
    """Expected USD per interaction of every priced model (§4.2): input and output prices per million tokens
    times the workload's expected tokens, per provider, then aggregated over providers like the cost column."""
    tokens = spec.workload or {}
    per_row = (costs["input_usd_per_mtok"] * tokens["input_tokens"]
               + costs["output_usd_per_mtok"] * tokens["output_tokens"]) / 1e6
    return per_row.groupby(costs["model_id"]).agg(spec.provider_aggregate).rename(PER_INTERACTION)


def case_catalog_rows(costs: pd.DataFrame, attributes: pd.DataFrame, spec: CostSpec, model_ids: pd.Index) -> pd.DataFrame:
    """The model catalog as one case reads it (§4.2): a row per model of the case (`model_ids`, the rows of its
    x_raw) with its attributes (`attributes`: raw.models columns and latency_s, what governance filters read),
    its raw cost (`model_costs`, NaN where it has none) and, with a workload, its expected USD per interaction.

    Everything a case derives reads prices and attributes only through this table, so a price or attribute of
    a model outside the case leaves it, and everything downstream of it, unchanged."""
    rows = pd.DataFrame({"model_id": model_ids}).merge(attributes, on="model_id", how="left")
    rows["raw_cost"] = rows["model_id"].map(model_costs(costs, attributes, spec, model_ids))
    if spec.workload:
        rows[PER_INTERACTION] = rows["model_id"].map(interaction_costs(costs, spec))
    return rows


def outcome_rows(records: pd.DataFrame, interactions: pd.DataFrame, spec: UtilitySpec) -> pd.DataFrame:
    """Outcome rows [model_id, group (prompt/user), context_group, outcome] for utility learning (§4.5).

    query_records: one row per (query, model), outcome = correctness, context = query category. A prompt is
      keyed by dataset, split and query_id: query ids restart in each split (train query 7 and test query 7
      are different questions), and the within-prompt labels of §5.5 must not pool two questions.
    interactions: outcome = the rubric / rating value, context = context_group (or dataset).
    """
    if spec.source == "query_records":
        rows = records[records["dataset"].isin(spec.datasets)]
        out = pd.DataFrame({
            "model_id": rows["model_id"],
            "group": rows["dataset"] + ":" + _split(rows) + ":" + rows["query_id"].astype(str),
            "context_group": rows[spec.context] if spec.context else "all",
            "outcome": rows["correct"].astype(float),
        })
    elif spec.source == "interactions":
        rows = interactions[interactions["dataset"].isin(spec.datasets)]
        context = rows[spec.context] if spec.context else pd.Series("all", index=rows.index)
        out = pd.DataFrame({
            "model_id": rows["model_id"],
            "group": rows["dataset"] + ":" + rows["interaction_id"].astype(str),
            "context_group": context.fillna("all"),
            "outcome": rows["outcome"].astype(float),
        })
    else:
        raise ValueError(f"utility source '{spec.source}' has no outcome rows")
    return out.dropna(subset=["outcome"]).reset_index(drop=True)


def _split(rows: pd.DataFrame) -> pd.Series:
    """Each record's split ("" where the source has none)."""
    return rows["split"].fillna("").astype(str) if "split" in rows else pd.Series("", index=rows.index)
