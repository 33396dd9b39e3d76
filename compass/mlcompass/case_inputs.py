"""Turning warehouse tables into a case study's inputs: x_raw, costs, the case's catalog, outcome rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.benchmark_choice import benchmark_choice
from compass.mlcompass.case_study import PER_INTERACTION, BenchmarkSpec, CostSpec, UtilitySpec
from compass.mlcompass.workload import CACHE_READ


def with_release_dates(scores: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """raw.benchmark_scores with each model's release_date from raw.models: what a coverage rule reads to tell
    the current models (`benchmark_choice`, step 1)."""
    dates = models.drop_duplicates("model_id").set_index("model_id").get("release_date")
    return scores.assign(release_date=scores["model_id"].map(dates) if dates is not None else None)


def build_x_raw(scores: pd.DataFrame, spec: BenchmarkSpec) -> pd.DataFrame:
    """The model x benchmark matrix x_raw of §4.3 (NaN where a model lacks a score): the chosen benchmarks and
    models of `benchmark_choice` (the spec's fixed list or its coverage rule), sorted by model and benchmark."""
    choice = benchmark_choice(scores, spec)
    return choice.wide.loc[choice.models, choice.benchmarks].sort_index()


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


def chosen_providers(costs: pd.DataFrame, spec: CostSpec, model_ids: pd.Index) -> pd.Series:
    """Per model, the provider whose price is the case's cost (§4.2): for `provider_aggregate` min (max), the
    cheapest (dearest) provider of the cost column; for another aggregate, e.g. "median of 3 providers". Absent
    for a cost read from raw.models, a price table without providers or a model without a price."""
    if spec.table == "models" or "provider" not in costs:
        return pd.Series(dtype=object)
    per_row = costs[spec.column] if spec.column != PER_INTERACTION else (
        costs["input_usd_per_mtok"] * spec.workload["input_tokens"]
        + costs["output_usd_per_mtok"] * spec.workload["output_tokens"])
    rows = costs.assign(_cost=per_row)[lambda f: f["model_id"].isin(model_ids) & (f["_cost"] > 0)]
    if spec.provider_aggregate in ("min", "max"):
        pick = rows.sort_values(["model_id", "_cost", "provider"], ascending=[True, spec.provider_aggregate == "min",
                                                                              True]).drop_duplicates("model_id")
        return pick.set_index("model_id")["provider"]
    n = rows.groupby("model_id")["provider"].nunique()
    return n.map(lambda k: f"{spec.provider_aggregate} of {k} provider{'s' if k > 1 else ''}")


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
    its raw cost (`model_costs`, NaN where it has none), the provider that price is from (`chosen_providers`)
    and, with a workload, its expected USD per interaction.

    Everything a case derives reads prices and attributes only through this table, so a price or attribute of
    a model outside the case leaves it, and everything downstream of it, unchanged."""
    rows = pd.DataFrame({"model_id": model_ids}).merge(attributes, on="model_id", how="left")
    rows["raw_cost"] = rows["model_id"].map(model_costs(costs, attributes, spec, model_ids))
    rows["provider"] = rows["model_id"].map(chosen_providers(costs, spec, model_ids)).astype(object)
    if spec.workload:
        rows[PER_INTERACTION] = rows["model_id"].map(interaction_costs(costs, spec))
    return rows


PROVIDER_PRICE_COLUMNS = ["model_id", "provider", "source", "input_usd_per_mtok", "output_usd_per_mtok", CACHE_READ]


def case_price_rows(costs: pd.DataFrame, model_ids: pd.Index) -> pd.DataFrame:
    """Every provider's token prices (raw.model_costs rows: input, output and, where stated, cache-read USD per
    million tokens) of the case's models: what a scenario's workload is priced from, per provider
    (`compass.mlcompass.workload`). Like the case's catalog, a price of a model outside the case leaves it alone."""
    rows = costs[costs["model_id"].isin(model_ids)].reindex(columns=PROVIDER_PRICE_COLUMNS)
    rows = rows.dropna(subset=["input_usd_per_mtok", "output_usd_per_mtok"])
    return rows.astype({CACHE_READ: float}).sort_values(["model_id", "provider", "source"], ignore_index=True)


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
