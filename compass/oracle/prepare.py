"""Real-data preparation and analysis tables of the Capability Frontier oracle (seed 002): what `oracle/*` publishes.

Generic preparation, no per-dataset code (`prepare`):
* prompts are keyed by (split, query_id): the cascade datasets reuse query ids
  across their train and test splits;
* models answering < 95% of the prompts the best-covered model answers are
  dropped, then only prompts every remaining model answered are kept (mmlu_pro:
  one model lacks ~14% of the prompts); both are listed in metadata;
* cost: `cost_usd` when every record carries it (`per_query_usd`); else price ×
  tokens from the cheapest provider (`tokens_x_price_usd`); else that
  provider's blended USD/Mtok as a relative per-query price
  (`blended_price_usd_per_mtok`). Quality never depends on cost, so quality
  outputs use every model (`model_set = all`); when some models have no price,
  the `all` rows carry NaN cost and every cost-based output is recomputed on the
  priced models only (`model_set = priced`). Unpriced models are listed in metadata;
* mixed G (livecodebench: two single-sample models) -> `drop_short_models`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.ingest.extracts import cheapest_prices
from compass.oracle.estimators import RECOMMENDED, quality_interval
from compass.oracle.records import OracleArrays, build_arrays, drop_short_models
from compass.oracle.report import OracleReport, analyze
from compass.oracle.single_models import single_models

# Bootstrap intervals only for the two estimators Table 6 compares, on the widest model
# set: other estimators cost up to 6 s per call on mmlu_pro, which 50 draws cannot afford.
BOOT_ESTIMATORS = ("naive", RECOMMENDED)
MIN_COVERAGE = 0.95
PLACEHOLDER_COST = 1.0  # uniform cost for the quality-only `all` set; never published


@dataclass(frozen=True)
class ModelSet:
    """One universe of models for one dataset: `all` (quality) or `priced` (quality and cost)."""

    name: str
    arrays: OracleArrays
    cost_known: bool


@dataclass
class Prepared:
    dataset: str
    cost_basis: str
    full: OracleArrays  # every model, before dropping short-G models (single-model table)
    sets: list[ModelSet]
    model_cost: pd.Series  # mean cost per query by model_id, NaN where unpriced
    meta: dict[str, object]  # published as asset metadata: basis, dropped and unpriced models


def prompt_keys(records: pd.DataFrame) -> pd.DataFrame:
    """Key prompts by split and query id (ids repeat across the splits of one dataset)."""
    if "split" not in records.columns or records["split"].isna().all():
        return records
    return records.assign(query_id=records["split"].fillna("").astype(str) + "/" + records["query_id"].astype(str))


def missing_model(dataset: str, where: dict[str, object]) -> ValueError:
    """The first record without a model_id, named by its split and query id (`where`)."""
    return ValueError(f"dataset {dataset!r}: the record of {', '.join(f'{c} {v!r}' for c, v in where.items())} "
                      "has no model_id")


def no_complete_prompt(dataset: str, models) -> ValueError:
    return ValueError(f"{dataset}: no prompt is answered by every model {sorted(models)}")


def negative_cost(dataset: str, models) -> ValueError:
    return ValueError(f"{dataset}: negative cost_usd for models {sorted(models)}")


def partial_cost(dataset: str, models) -> ValueError:
    """cost_usd on some records but not on those of `models` (the first five named)."""
    return ValueError(f"{dataset}: cost_usd is null on some records (models {sorted(models)[:5]}) but not all; "
                      "fill it or leave it empty for the whole dataset")


def low_coverage(coverage, min_coverage: float = MIN_COVERAGE):
    """The models (a mask over `coverage`, each model's prompts answered) covering < `min_coverage` of the best."""
    return coverage < min_coverage * coverage.max()


def complete_cases(records: pd.DataFrame, dataset: str, min_coverage: float = MIN_COVERAGE) -> tuple[pd.DataFrame, list[str], int]:
    """Drop models covering < `min_coverage` of the best coverage, then prompts some kept model skipped.

    Returns (records, dropped models, number of dropped prompts). A partially
    filled cell (some but not all of a model's generations) is left for
    `build_arrays` to reject.
    """
    coverage = records.groupby("model_id")["query_id"].nunique()
    dropped = sorted(coverage.index[low_coverage(coverage, min_coverage)])
    kept = records[~records["model_id"].isin(dropped)] if dropped else records  # a copy only when needed
    n_models = kept["model_id"].nunique()
    answered = kept.groupby("query_id")["model_id"].nunique()
    full = answered.index[answered == n_models]
    if len(full) == 0:
        raise no_complete_prompt(dataset, kept["model_id"].unique())
    complete = kept if len(full) == len(answered) else kept[kept["query_id"].isin(full)]
    return complete, dropped, int(len(answered) - len(full))


def model_prices(model_costs: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The cheapest provider's prices by model_id (ValueError when a price is negative)."""
    prices = cheapest_prices(model_costs).set_index("model_id")
    if (prices[["input_usd_per_mtok", "output_usd_per_mtok", "blended_usd_per_mtok"]] < 0).any().any():
        raise ValueError(f"{dataset}: raw.model_costs holds negative prices")
    return prices


def token_cost(tokens_in: np.ndarray, tokens_out: np.ndarray, input_usd_per_mtok: np.ndarray,
               output_usd_per_mtok: np.ndarray) -> np.ndarray:
    """USD of each record: its tokens at its model's prices per million tokens."""
    return (tokens_in * input_usd_per_mtok + tokens_out * output_usd_per_mtok) / 1e6


def record_costs(records: pd.DataFrame, model_costs: pd.DataFrame, dataset: str) -> tuple[pd.DataFrame, pd.Series | None, str, list[str]]:
    """Per-record or per-model cost, its basis, and the models with no cost at all.

    Returns (records, per-model cost or None, cost_basis, unpriced models). When
    records keep `cost_usd` it is complete for the priced models.
    """
    models = sorted(records["model_id"].unique())
    cost = records["cost_usd"] if "cost_usd" in records.columns else pd.Series(np.nan, index=records.index)
    if cost.notna().all():
        if (cost < 0).any():
            raise negative_cost(dataset, records.loc[cost < 0, "model_id"].unique())
        return records, None, "per_query_usd", []
    if cost.notna().any():
        raise partial_cost(dataset, records.loc[cost.isna(), "model_id"].unique())
    prices = model_prices(model_costs, dataset)
    unpriced = [m for m in models if m not in prices.index]
    tokens = [c for c in ("tokens_in", "tokens_out") if c in records.columns]
    if len(tokens) == 2 and records[tokens].notna().all().all():
        p = prices.reindex(records["model_id"])
        usd = token_cost(records["tokens_in"].to_numpy(), records["tokens_out"].to_numpy(),
                         p["input_usd_per_mtok"].to_numpy(), p["output_usd_per_mtok"].to_numpy())
        return records.assign(cost_usd=usd), None, "tokens_x_price_usd", unpriced
    return records.drop(columns=["cost_usd"], errors="ignore"), prices["blended_usd_per_mtok"], "blended_price_usd_per_mtok", unpriced


def _arrays(records: pd.DataFrame, model_cost: pd.Series | None, dataset: str, uniform: bool) -> OracleArrays:
    if uniform:
        records = records.drop(columns=["cost_usd"], errors="ignore")
        model_cost = pd.Series(PLACEHOLDER_COST, index=records["model_id"].unique())
    return build_arrays(records, model_cost, dataset)


def longest_g(arrays: OracleArrays, dataset: str) -> OracleArrays:
    """`drop_short_models`, with an error naming the dataset when fewer than 2 models share the largest G."""
    keep = arrays.generations == arrays.generations.max()
    if keep.sum() < 2:
        raise ValueError(f"{dataset}: only {list(arrays.model_ids[keep])} have the largest G "
                         f"({arrays.generations.max()}); oracle routing needs at least 2 models with that G")
    return drop_short_models(arrays)


def prepare(records: pd.DataFrame, model_costs: pd.DataFrame, dataset: str) -> Prepared:
    """Validate one dataset's records and build the model sets (see the module docstring)."""
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in raw.query_records")
    if "model_id" in records and records["model_id"].isna().any():
        row = records[records["model_id"].isna()].iloc[0]
        raise missing_model(dataset, {c: row[c] for c in ("split", "query_id") if c in records})
    records, low_coverage, n_dropped_prompts = complete_cases(prompt_keys(records), dataset)
    records, model_cost, basis, unpriced = record_costs(records, model_costs, dataset)
    full = _arrays(records, model_cost, dataset, uniform=bool(unpriced))
    every = longest_g(full, dataset)
    sets = [ModelSet("all", every, cost_known=not unpriced)]
    if unpriced:
        priced_records = records[~records["model_id"].isin(unpriced) & records["model_id"].isin(every.model_ids)]
        if priced_records["model_id"].nunique() >= 2:  # else no cost-based output; metadata says why
            sets.append(ModelSet("priced", _arrays(priced_records, model_cost, dataset, False), True))
    if "cost_usd" in records.columns:
        per_model = records.groupby("model_id")["cost_usd"].mean()
    else:
        per_model = model_cost.reindex(full.model_ids)
    return prepared(dataset, basis, full, sets, per_model, unpriced, low_coverage, n_dropped_prompts)


def prepared(dataset: str, basis: str, full: OracleArrays, sets: list[ModelSet], per_model: pd.Series,
             unpriced: list[str], low_coverage: list[str], n_dropped_prompts: int) -> Prepared:
    """The `Prepared` of the model sets, with the metadata the oracle assets publish."""
    short = sorted(set(full.model_ids) - set(sets[0].arrays.model_ids))
    meta = {
        "cost_basis": basis, "unpriced_models": unpriced, "short_g_models_dropped": short,
        "low_coverage_models_dropped": low_coverage, "prompts_dropped_incomplete": n_dropped_prompts,
        "model_sets": {s.name: int(s.arrays.n_models) for s in sets},
        "n_prompts": int(full.n_prompts),
    }
    return Prepared(dataset, basis, full, sets, per_model.reindex(full.model_ids), meta)


def _stamp(frame: pd.DataFrame, ms: ModelSet, basis: str, cost_cols: tuple[str, ...] = ("cost",)) -> pd.DataFrame:
    """Add model_set and cost_basis; blank the cost columns of a set whose costs are placeholders."""
    out = frame.assign(model_set=ms.name, cost_basis=basis if ms.cost_known else "none")
    if not ms.cost_known:
        out[list(cost_cols)] = np.nan
    return out


def single_models_table(prep: Prepared) -> pd.DataFrame:
    """oracle.single_models rows: every model (short-G ones too), real cost per query, NaN where unpriced."""
    table = single_models(prep.full).assign(generations=prep.full.generations)
    table["cost"] = prep.model_cost.to_numpy(dtype=float)
    table["cost_basis"] = np.where(table["cost"].notna(), prep.cost_basis, "none")
    return table


def analysis_tables(prep: Prepared, n_boot: int, seed: int = 0) -> tuple[dict[str, pd.DataFrame], dict[str, OracleReport]]:
    """oracle.estimates, oracle.frontier and oracle.summary rows from one `analyze` per model set."""
    estimates, fronts, summaries, reports = [], [], [], {}
    for ms in prep.sets:
        # A set without real costs publishes no frontier, so its α-sweep shrinks to α = 1 (saves ~half the time).
        report = analyze(ms.arrays, n_boot=0, alphas=None if ms.cost_known else np.array([1.0]), seed=seed)
        reports[ms.name] = report
        est = report.estimates.copy()
        boot = n_boot if ms is prep.sets[0] else 0  # intervals on the widest set only (runtime budget)
        if boot:
            identified = set(est.loc[est["identified"], "estimator"])
            for name in (n for n in BOOT_ESTIMATORS if n in identified):
                lo, hi = quality_interval(ms.arrays, name, boot, seed)
                est.loc[est["estimator"] == name, ["quality_lo", "quality_hi"]] = lo, hi
        est = est.assign(n_models=ms.arrays.n_models, n_prompts=ms.arrays.n_prompts, n_boot=boot)
        estimates.append(_stamp(est, ms, prep.cost_basis))
        if ms.cost_known:
            fronts.append(_stamp(report.frontier, ms, prep.cost_basis))
        naive_q = float(est.loc[est["estimator"] == "naive", "quality"].iloc[0])
        row = {**report.summary, "naive_quality": naive_q, "recommended_estimator": RECOMMENDED,
               "n_models": ms.arrays.n_models, "n_prompts": ms.arrays.n_prompts}
        summaries.append(_stamp(pd.DataFrame([row]), ms, prep.cost_basis,
                                ("sota_cost", "cost_saving_at_sota_quality", "aiq")))
    frontier_cols = ["model_set", "estimator", "alpha", "quality", "cost", "cost_basis"]
    tables = {
        "oracle.estimates": pd.concat(estimates, ignore_index=True),
        "oracle.frontier": pd.concat(fronts, ignore_index=True) if fronts else pd.DataFrame(columns=frontier_cols),
        "oracle.summary": pd.concat(summaries, ignore_index=True),
    }
    return tables, reports


def validate_n_boot(n: int) -> int:
    """Bootstrap draws must be 0 (no intervals) or at least 2."""
    if n < 0 or n == 1:
        raise ValueError(f"n_boot must be 0 or at least 2, got {n}")
    return n


def per_set_table(prep: Prepared, fn: Callable[[OracleArrays], pd.DataFrame]) -> pd.DataFrame:
    """`fn` on every model set, stamped with model_set and cost_basis (oracle.curve, oracle.posthoc)."""
    return pd.concat([_stamp(fn(ms.arrays), ms, prep.cost_basis) for ms in prep.sets], ignore_index=True)
