"""Typed readers of the published tables: the one way the assets, the CLI, reports and benchmarks read the warehouse.

Each reader names the table it reads, returns it in the shape the science in
`compass/` takes (wide measures, a Series of parameters, a `DecisionInputs`, a
`Prepared` oracle dataset), and fails with a message naming the table and the
asset to materialize when a row it needs is missing.
"""

from __future__ import annotations

import dataclasses
import functools

import dagster as dg
import numpy as np
import pandas as pd

from compass.cascades.marginals import MixedBetaMarginal
from compass.cascades.study import checked_marginals
from compass.cascades.wide import WideRecords
from compass.ingest.aliases import alias_lookup
from compass.ingest.errors import IngestError
from compass.ingest.extracts import PRICE_COLUMNS, cheapest_prices, no_prices
from compass.ingest.load import TABLE_ORDER
from compass.mlcompass.case_inputs import build_x_raw, with_release_dates
from compass.mlcompass.case_study import BenchmarkSpec, CaseStudy
from compass.mlcompass.ces_fit import CESFit, ces_from_parameters
from compass.mlcompass.cost_fit import DEFAULT_D
from compass.mlcompass.changes import Snapshot, previous_version, published_versions, snapshot, version_live_at
from compass.mlcompass.axis_decisions import with_axes
from compass.mlcompass.decisions import (
    DecisionInputs, NotApplicable, with_filters, with_measured, with_monthly_budget, with_person_weights, with_workload,
)
from compass.mlcompass.frontier import CESFrontier
from compass.mlcompass.measure_names import ACTIVE, MeasureRefused, resolve_references, summary
from compass.mlcompass.measures import wide_loadings
from compass.mlcompass.rank_uncertainty import Replicates
from compass.mlcompass.scenarios import Scenario
from compass.mlcompass.sensitivity import CAPABILITY_AXES, CAPABILITY_COLUMNS, CELL_TIER_COLUMNS, CapabilityCells
from compass.mlcompass.utility_models import utilities_from_rows
from compass.oracle.dense import prepare_dense
from compass.oracle.prepare import Prepared, prepare
from compass.embeddings import Embedder
from resources import prepared_store
from resources.cascade_matrix import NoRows, cascade_matrix
from resources.configs import scenario_files
from resources.oracle_extract import dense_records
from resources.query_extract import read_records
from resources.query_frames import coded_records
from resources.warehouse import STAMP_COLUMNS, Warehouse


def one_connection(reader):
    """Decorator: `reader(wh, ...)` does all its reads on one connection (`Warehouse.reading`), not one per read."""
    @functools.wraps(reader)
    def wrapped(wh: Warehouse, *args, **kwargs):
        with wh.reading():
            return reader(wh, *args, **kwargs)
    return wrapped


# ---------------------------------------------------------------- raw


def model_lookup(wh: Warehouse) -> dict[str, str]:
    """Alias key -> canonical model id, from raw.models and raw.model_aliases."""
    models = wh.read("raw.models")
    aliases = wh.read("raw.model_aliases")
    if aliases.empty:
        aliases = pd.DataFrame({"alias": [], "model_id": []})
    return alias_lookup(aliases, models.get("model_id", pd.Series(dtype=str)))


def key_and_model_faults(wh: Warehouse, table: str, key: list[str], model_columns: list[str]) -> tuple[int, int, int]:
    """(rows, rows repeating an earlier row's key (nulls equal), model names that are not a raw.models id (a null
    counts)) of `table`, counted in DuckDB without reading the rows out."""
    if not wh.table_exists(table):
        return 0, 0, 0
    cols = ", ".join(f'"{k}"' for k in key)
    unknown = " + ".join(f'coalesce(count_if(not coalesce("{c}" in (select model_id from raw.models), false)), 0)'
                         for c in model_columns) or "0"
    with wh.connect(read_only=True) as con:
        rows, faults = con.execute(f"select count(*), {unknown} from {table}").fetchone()
        dup = con.execute(f"select coalesce(sum(n - 1), 0) from (select count(*) as n from {table} group by {cols})"
                          ).fetchone()[0]
    return int(rows), int(dup), int(faults)


def datasets(wh: Warehouse) -> list[str]:
    """The datasets of raw.query_records (one partition each)."""
    if not wh.table_exists("raw.query_records"):
        return []
    return sorted(wh.query("select distinct dataset from raw.query_records")["dataset"])


def outcome_records(wh: Warehouse, names: tuple[str, ...]) -> pd.DataFrame:
    """raw.query_records of the named datasets, the columns a case's outcome rows need."""
    if not names:
        return pd.DataFrame(columns=["dataset", "query_id", "model_id", "correct", "category"])
    marks = ", ".join("?" for _ in names)
    return wh.query(
        f"select dataset, split, query_id, model_id, correct, category from raw.query_records where dataset in ({marks})",
        list(names),
    )


# ---------------------------------------------------------------- datasets (per-dataset extracts)


def dataset_records(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """One dataset's records as datasets/records published them (datasets.query_records), without the stamps (never
    read out: two strings and a timestamp per row)."""
    records = pd.DataFrame()
    if wh.exists():
        with wh.connect(read_only=True) as con:
            records = read_records(con, dataset, exclude=tuple(STAMP_COLUMNS))
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in datasets.query_records; materialize datasets/records first")
    return records


def dataset_prices(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """The cheapest price of each of the dataset's models (datasets.model_prices); empty when it has per-call costs."""
    prices = wh.read("datasets.model_prices", {"dataset": dataset})
    return prices[PRICE_COLUMNS] if not prices.empty else no_prices()


# ---------------------------------------------------------------- cascade


@one_connection
def cascade_records(wh: Warehouse, dataset: str) -> WideRecords | None:
    """The dataset's generation-0 cascade records as (query x model) matrices (`compass.cascades.wide`), built in
    DuckDB (`cascade_matrix`), or None when none carries a confidence; prepared once per extract version and shared
    by the partition's cascade assets (`prepared_store`)."""
    return prepared_store.shared(wh, "cascade", dataset, lambda: _cascade_matrix(wh, dataset),
                                 prepared_store.encode_wide, prepared_store.decode_wide)


def _cascade_matrix(wh: Warehouse, dataset: str) -> WideRecords | None:
    try:
        if not wh.table_exists("datasets.query_records"):
            raise NoRows(dataset)
        with wh.connect(read_only=True) as con:
            return cascade_matrix(con, dataset)
    except NoRows:
        raise ValueError(f"dataset {dataset!r}: no rows in datasets.query_records; materialize datasets/records "
                         "first") from None
    except ValueError as exc:
        raise ValueError(f"dataset {dataset!r}: {exc}") from None


def cascade_marginals(wh: Warehouse, dataset: str, models: list[str]) -> dict[str, MixedBetaMarginal]:
    """The marginals cascade/marginals fitted for `dataset`, rebuilt from cascade.marginals (no EM refit)."""
    return checked_marginals(wh.read("cascade.marginals", {"dataset": dataset}), dataset, models)


# ---------------------------------------------------------------- oracle


# What `compass.oracle.prepare.prepare` reads; the tokens only when some record lacks a cost (`record_costs`).
ORACLE_COLUMNS = ("split", "query_id", "model_id", "generation", "correct", "cost_usd", "category")


def _coded_records(wh: Warehouse, dataset: str, columns: tuple[str, ...], prompt_key: bool = False) -> pd.DataFrame:
    """`query_frames.coded_records` of datasets.query_records (ValueError naming the asset when it has no rows)."""
    with wh.connect(read_only=True) as con:
        if not wh.table_exists("datasets.query_records"):
            records = pd.DataFrame()
        else:
            records = coded_records(con, dataset, columns, prompt_key=prompt_key)
    if records.empty:
        raise ValueError(f"dataset {dataset!r}: no rows in datasets.query_records; materialize datasets/records first")
    return records


@one_connection
def oracle_dataset(wh: Warehouse, dataset: str) -> Prepared:
    """One dataset's records and prices, prepared for the oracle (`compass.oracle.prepare.prepare`); the records as
    dense tensors DuckDB fills (`_prepare_oracle`), keyed by prompt in DuckDB. Prepared once per extract and price
    version and shared by the partition's oracle assets (`prepared_store`)."""
    return prepared_store.shared(wh, "oracle", dataset, lambda: _prepare_oracle(wh, dataset),
                                 prepared_store.encode_prepared, prepared_store.decode_prepared,
                                 tables=("datasets.model_prices",))


def _prepare_oracle(wh: Warehouse, dataset: str) -> Prepared:
    """The dense tensors DuckDB fills (`oracle_extract`), prepared by `prepare_dense`, which raises `prepare`'s errors
    itself; a dataset with no records is read as (zero) rows, whose error names the asset to materialize."""
    dense = None
    if wh.table_exists("datasets.query_records"):
        with wh.connect(read_only=True) as con:
            dense = dense_records(con, dataset)
    if dense is not None:
        return prepare_dense(dense, dataset_prices(wh, dataset), dataset)
    # no records or no such columns: `prepare`'s error (tokens read for `record_costs`, as `dense_records` reads them)
    records = _coded_records(wh, dataset, ORACLE_COLUMNS + ("tokens_in", "tokens_out"), prompt_key=True)
    return prepare(records, dataset_prices(wh, dataset), dataset)


# ---------------------------------------------------------------- ML Compass


def measures(wh: Warehouse, case_id: str) -> pd.DataFrame:
    """compass.measures of a case as a wide frame: index model_id, columns C1..Ck."""
    long = wh.read("compass.measures", {"case_id": case_id})
    if long.empty:
        raise ValueError(f"case {case_id}: no rows in compass.measures; materialize compass/measures first")
    return long.pivot(index="model_id", columns="factor", values="value").sort_index()


def measure_labels(wh: Warehouse, case_id: str) -> pd.Series:
    """factor -> "C1 (general, strongest in maths and data analysis: loads on 9 of 12 benchmarks; ...)": each current
    measure's label and summary (compass.measure_names; re-read from compass.loadings where a registry published
    before issue 48 lacks them); empty before the measures are published."""
    names = wh.read("compass.measure_names", {"case_id": case_id}) if wh.table_exists("compass.measure_names") else None
    loadings = wh.read("compass.loadings", {"case_id": case_id}) if wh.table_exists("compass.loadings") else None
    if loadings is None or loadings.empty:
        return pd.Series(dtype=object)
    wide = wide_loadings(loadings[["benchmark", "factor", "loading"]]).fillna(0.0)
    current = (names[names["status"].isin(ACTIVE)].set_index("factor") if names is not None and len(names)
               else pd.DataFrame(index=wide.columns))
    text = current.get("summary", pd.Series(dtype=object)).reindex(wide.columns)
    return pd.Series({f: text[f] if isinstance(text[f], str) else summary(wide[f]) for f in wide.columns})


def tiers(wh: Warehouse, case_id: str) -> pd.DataFrame:
    """compass.tiers of a case: model_id, tier, pareto_efficient, peel_layer."""
    return wh.read("compass.tiers", {"case_id": case_id}).drop(columns=["case_id"])


def frontier_parameters(wh: Warehouse, case_id: str) -> pd.Series:
    """compass.frontier of a case (both stages) as parameter -> value."""
    return wh.read("compass.frontier", {"case_id": case_id}).set_index("parameter")["value"]


def previous_d(wh: Warehouse, case_id: str) -> float:
    """The cost exponent d a case's cost side published last (compass.frontier, stage cost), else
    `cost_fit.DEFAULT_D`: what d falls back to where the data do not identify it."""
    params = wh.read("compass.frontier", {"case_id": case_id, "stage": "cost"})
    d = params.loc[params["parameter"] == "d", "value"] if len(params) else pd.Series(dtype=float)
    return float(d.iloc[0]) if len(d) and np.isfinite(d.iloc[0]) else DEFAULT_D


def ces_shape(wh: Warehouse, case_id: str, factors: list[str]) -> CESFit:
    """The CES capability shape (a, b, λ_t) published by compass/ces_shape."""
    return ces_from_parameters(frontier_parameters(wh, case_id), factors)


@one_connection
def decision_inputs(wh: Warehouse, case: CaseStudy, scenario: Scenario) -> DecisionInputs:
    """Decision inputs of a case under a scenario (lam already numeric): measures of the priced models,
    normalized costs, the fitted frontier, the utilities (the scenario's person weights when it has them),
    raw scores and observed outcomes, restricted to the models that pass the scenario's governance filters."""
    cost_table = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")
    costs = cost_table["cost"]
    m = measures(wh, case.case_id).loc[lambda f: f.index.isin(costs.index)]
    params = frontier_parameters(wh, case.case_id)
    ces = ces_from_parameters(params, list(m.columns))
    frontier = CESFrontier(ces.a, ces.b, float(params["c0"]), float(params["d"]), ces.tier_levels)
    utils = utilities_from_rows(wh.read("compass.utility_models", {"case_id": case.case_id}))
    scores = case_scores(wh)
    everything = BenchmarkSpec(min_models_per_benchmark=1, min_benchmarks_per_model=1, models=tuple(m.index))
    raw_scores = build_x_raw(scores, everything).reindex(m.index)
    outcomes = wh.read("compass.observed_outcomes", {"case_id": case.case_id})
    x_raw = build_x_raw(scores, case.benchmarks)
    missing = x_raw.isna()
    no_better = [b for b in imputation_no_better(wh, case.case_id) if b in missing]
    info = pd.DataFrame({"tier": tiers(wh, case.case_id).set_index("model_id")["tier"],
                         "imputed_share": missing.mean(axis=1),
                         "imputed_no_better_share": missing[no_better].sum(axis=1) / missing.shape[1]}).reindex(m.index)
    dollars = cost_table.reindex(columns=[c for c in ("raw_cost", "usd_per_interaction") if c in cost_table])
    info = info.join(dollars.dropna(axis=1, how="all"))
    scenario = named_measures(wh, case, scenario)
    inputs = with_person_weights(DecisionInputs(case, scenario, m, costs.reindex(m.index), frontier, utils, raw_scores,
                                                outcomes, model_info=info,
                                                tier_costs=cost_table["tier_cost"].reindex(m.index),
                                                observed=x_raw.reindex(m.index)))
    inputs = with_axes(inputs)  # axis scores scaled over every priced model of the case
    # an axis utility reads only observed benchmarks: the measured-ground screen of the measures does not apply
    inputs = inputs if scenario.axes else with_measured(inputs)
    inputs = with_filters(inputs, case_catalog(wh, case.case_id).reset_index()) if scenario.filters else inputs
    inputs = with_workload(inputs, case_prices(wh, case.case_id)) if scenario.workload else inputs
    return with_monthly_budget(inputs)


def noise_scales(wh: Warehouse, case_id: str) -> pd.Series | None:
    """The case's calibration of the imputation noise per benchmark (compass.imputation_validation), None
    before it is published."""
    if not wh.table_exists("compass.imputation_validation"):
        return None
    table = wh.read("compass.imputation_validation", {"case_id": case_id})
    return table.set_index("benchmark")["noise_scale"] if len(table) else None


def noise_correlation(wh: Warehouse, case_id: str) -> float:
    """The within-model correlation of the case's imputation errors (compass.imputation_validation), 0 before it
    is published."""
    if not wh.table_exists("compass.imputation_validation"):
        return 0.0
    table = wh.read("compass.imputation_validation", {"case_id": case_id})
    return float(table["noise_correlation"].iloc[0]) if "noise_correlation" in table and len(table) else 0.0


def imputation_no_better(wh: Warehouse, case_id: str) -> list[str]:
    """Benchmarks whose leave-pattern-out imputation is no better than their column mean (board note)."""
    if not wh.table_exists("compass.imputation_validation"):
        return []
    table = wh.read("compass.imputation_validation", {"case_id": case_id})
    return table.loc[table["no_better_than_mean"].fillna(False).astype(bool), "benchmark"].tolist()


def named_measures(wh: Warehouse, case: CaseStudy, scenario: Scenario) -> Scenario:
    """The scenario with its measure references (floors, person weights) as the case's factor ids, resolved by
    name or id against compass.measure_names; a reference to a retired measure refuses the scenario for this case
    (NotApplicable, saying what changed)."""
    registry = wh.read("compass.measure_names", {"case_id": case.case_id})
    origin = scenario_files().get(scenario.name, scenario.name)
    try:
        floors = resolve_references(scenario.floors, registry, f"{origin}: floors")
        weights = resolve_references(scenario.utility_weights, registry, f"{origin}: utility.weights")
    except MeasureRefused as exc:
        raise NotApplicable(f"scenario {scenario.name} refused for case {case.case_id}: {exc}") from None
    return dataclasses.replace(scenario, floors=floors, utility_weights=weights)


def rank_replicates(wh: Warehouse, case_id: str) -> Replicates:
    """compass.bootstrap_measures and compass.bootstrap_utilities of a case as `Replicates` arrays (B, n, ·).

    Both tables hold every (replicate, model, factor or context) once, so the rows in sorted order are the
    arrays in C order."""
    arrays = []
    for table, key, value in (("compass.bootstrap_measures", "factor", "value"),
                              ("compass.bootstrap_utilities", "context_group", "utility")):
        if not wh.table_exists(table):  # a warehouse whose bootstrap never ran
            raise ValueError(f"case {case_id}: no table {table}; materialize compass/rank_bootstrap first")
        long = wh.query(f"select replicate, model_id, {key}, {value} from {table} where case_id = ? "
                        f"order by replicate, model_id, {key}", [case_id])
        if long.empty:
            raise ValueError(f"case {case_id}: no rows in {table}; materialize compass/rank_bootstrap first")
        models, names = long["model_id"].unique(), long[key].unique()
        arrays.append((models, tuple(names), long[value].to_numpy(float).reshape(-1, len(models), len(names))))
    (models, factors, measure_cube), (_, groups, utility_cube) = arrays
    # what the data support (n_outcome_models, model_effect_sd): constant per case, absent before issue 29
    columns = set(wh.query("select * from compass.bootstrap_utilities limit 0").columns)
    support = {}
    if {"n_outcome_models", "model_effect_sd"} <= columns:
        head = wh.query("select n_outcome_models, model_effect_sd from compass.bootstrap_utilities where case_id = ? "
                        "limit 1", [case_id]).iloc[0]
        support = {"n_outcome_models": int(head["n_outcome_models"]), "model_effect_sd": float(head["model_effect_sd"])}
    return Replicates(pd.Index(models, name="model_id"), factors, groups, measure_cube, utility_cube, **support)


def rank_interval_text(wh: Warehouse, case_id: str, scenario: str) -> pd.DataFrame:
    """[model_id, rank_90 ("lo-hi"), p_rank1] of a leaderboard from compass.rank_uncertainty; empty if absent."""
    if not wh.table_exists("compass.rank_uncertainty"):
        return pd.DataFrame(columns=["model_id", "rank_90", "p_rank1"])
    table = wh.read("compass.rank_uncertainty", {"case_id": case_id, "scenario": scenario})
    text = table["rank_lo"].astype(int).astype(str) + "-" + table["rank_hi"].astype(int).astype(str)
    return table.assign(rank_90=text)[["model_id", "rank_90", "p_rank1"]]


# Per model, what a governance filter reads (scenarios.FILTER_KEYS), shown next to every leaderboard row where known.
# `provider` is the one the case's price is from (compass.case_catalog); latency and throughput are the fastest
# provider's (raw.model_costs); tool_use is models.dev's tool_call or LiteLLM's supports_function_calling.
GOVERNANCE_ATTRIBUTES = ("provider", "organization", "open_weights", "context_window", "release_date", "modality",
                         "tool_use", "latency_s", "throughput_tps")


def case_scores(wh: Warehouse) -> pd.DataFrame:
    """raw.benchmark_scores with each model's release_date (raw.models, `with_release_dates`): what a case's
    benchmark rule reads (`compass.mlcompass.benchmark_choice` takes the current models by release date)."""
    return with_release_dates(wh.read("raw.benchmark_scores"), wh.query("select model_id, release_date from raw.models"))


def model_attributes(wh: Warehouse) -> pd.DataFrame:
    """raw.models (without the publishing stamps) with, over each model's providers (raw.model_costs), the lowest
    latency_s, the highest throughput_tps and the providers ('+'-joined, sorted): what filters read."""
    held = set(wh.query("select * from raw.model_costs limit 0").columns)  # optional columns a source may lack
    best = {c: f"{f}(c.{c})" if c in held else "null::double"
            for c, f in (("latency_s", "min"), ("throughput_tps", "max"))}
    return wh.query("select m.*, l.latency_s, l.throughput_tps, l.providers from raw.models m left join (select "
                    f"c.model_id, {best['latency_s']} as latency_s, {best['throughput_tps']} as throughput_tps, "
                    "string_agg(distinct c.provider, '+' order by c.provider) as providers from raw.model_costs c "
                    "group by c.model_id) l using (model_id)").drop(columns=STAMP_COLUMNS, errors="ignore")


def check_providers(wh: Warehouse, scenario: Scenario, origin: str) -> None:
    """An IngestError naming `origin` (the scenario file) and the key when the scenario's `providers` filter names
    a provider no row of raw.model_costs has, listing the valid ones."""
    wanted = (scenario.filters or {}).get("providers") or []
    known = wh.query("select distinct provider from raw.model_costs order by provider")["provider"].tolist() \
        if wh.table_exists("raw.model_costs") else []
    unknown = [p for p in wanted if p not in known]
    if unknown:
        raise IngestError(origin, None, "providers", f"unknown provider {unknown[0]!r}; known: "
                          + (", ".join(known) or "none (raw.model_costs holds no price)"))


def case_catalog(wh: Warehouse, case_id: str) -> pd.DataFrame:
    """compass.case_catalog of a case (its models' raw cost, usd_per_interaction, attributes), index model_id."""
    table = wh.read("compass.case_catalog", {"case_id": case_id})
    if table.empty:
        raise ValueError(f"case {case_id}: no rows in compass.case_catalog; materialize compass/case_catalog first")
    return table.drop(columns=["case_id", *STAMP_COLUMNS]).set_index("model_id")


def case_prices(wh: Warehouse, case_id: str) -> pd.DataFrame:
    """compass.case_prices of a case: every provider's input, output and cache-read prices of its models."""
    if not wh.table_exists("compass.case_prices"):
        raise ValueError(f"case {case_id}: no table compass.case_prices (a scenario's workload is priced from it); "
                         "materialize compass/case_catalog first")
    return wh.read("compass.case_prices", {"case_id": case_id}).drop(columns=["case_id", *STAMP_COLUMNS], errors="ignore")


@one_connection
def sensitivity_capability(wh: Warehouse, case_id: str, model_ids: pd.Index) -> tuple[CapabilityCells, str]:
    """The capability side of a case's sensitivity grid (compass/frontier_sensitivity_capability) over `model_ids`
    (the case's x_raw), and the grid's name (light or full); every cell's tiers in model_id order."""
    cells = wh.read("compass.frontier_sensitivity_capability", {"case_id": case_id})
    if cells.empty:
        raise ValueError(f"case {case_id}: no rows in compass.frontier_sensitivity_capability; materialize "
                         "compass/frontier_sensitivity_capability first")
    cells = cells.sort_values(CAPABILITY_AXES, ignore_index=True)  # the grid's order (capability_cells loops I, T, eps)
    tiers = wh.read("compass.frontier_sensitivity_tiers", {"case_id": case_id})
    tiers = tiers.sort_values([*CAPABILITY_AXES, "model_id"], ignore_index=True).reindex(columns=CELL_TIER_COLUMNS)
    return CapabilityCells(cells[CAPABILITY_COLUMNS], tiers, model_ids), str(cells["grid"].iloc[0])


def raw_costs(catalog: pd.DataFrame, model_ids: pd.Index) -> pd.Series:
    """The raw cost (`case_inputs.model_costs`) of those of `model_ids` the case's catalog prices, in their order."""
    return catalog["raw_cost"].reindex(model_ids).dropna()


def leaderboard(wh: Warehouse, case_id: str, scenario: str, as_of: str | None = None) -> pd.DataFrame:
    """compass.leaderboards of one case and scenario; with `as_of` (YYYY-MM-DD), the last version refreshed
    on or before that date (history.compass_leaderboards)."""
    if as_of is None:
        return wh.query(
            "select * from compass.leaderboards where case_id = ? and scenario = ? order by rank", [case_id, scenario]
        )
    history = wh.query(
        "select * from history.compass_leaderboards where case_id = ? and scenario = ? "
        "and cast(refreshed_at as date) <= cast(? as date)",
        [case_id, scenario, as_of],
    )
    if history.empty:
        return history
    latest = history.sort_values("refreshed_at")["data_version"].iloc[-1]
    return history[history["data_version"] == latest].sort_values("rank")


def leaderboard_pairs(wh: Warehouse) -> pd.DataFrame:
    """(case_id, scenario) of every published leaderboard."""
    if not wh.table_exists("compass.leaderboards"):
        return pd.DataFrame(columns=["case_id", "scenario"])
    return wh.query("select distinct case_id, scenario from compass.leaderboards order by 1, 2")


def _history(wh: Warehouse, table: str, where: dict[str, str]) -> pd.DataFrame:
    return wh.read("history." + table.replace(".", "_"), where)


def refresh_start(instance: dg.DagsterInstance, published: pd.Timestamp) -> pd.Timestamp | None:
    """When the refresh that published a version began: the last raw-source materialization before it (UTC)."""
    cutoff = published.tz_localize("UTC").timestamp() if published.tzinfo is None else published.timestamp()
    times = []
    for table in TABLE_ORDER:
        found = instance.fetch_materializations(
            dg.AssetRecordsFilter(dg.AssetKey(["raw", table]), before_timestamp=cutoff), limit=1)
        times += [pd.Timestamp(r.timestamp, unit="s") for r in found.records]
    return max(times) if times else None


@one_connection
def leaderboard_snapshots(
    wh: Warehouse, case_id: str, scenario: str, instance: dg.DagsterInstance | None = None
) -> tuple[tuple[Snapshot, Snapshot] | None, bool, int]:
    """((previous, current) snapshots or None, whether the live leaderboard is empty, number of published versions).

    With the Dagster `instance`, "previous" is the version live before the
    refresh that produced the current one began (`compass.mlcompass.changes.previous_version`).
    """
    where_d, where_c = {"case_id": case_id, "scenario": scenario}, {"case_id": case_id}
    board = wh.read("compass.leaderboards", where_d)
    history = _history(wh, "compass.leaderboards", where_d)
    n_versions = int(history["data_version"].nunique()) if len(history) else 0
    if board.empty:
        return None, True, n_versions
    live = str(board["data_version"].iloc[0])
    first_published = published_versions(history).set_index("data_version")["refreshed_at"].get(live) \
        if len(history) else None
    began = refresh_start(instance, first_published) if instance is not None and first_published is not None else None
    previous = previous_version(history, live, began)
    if previous is None:
        return None, False, n_versions
    old_board = history[history["data_version"] == previous]
    run_id, when = str(old_board["run_id"].iloc[0]), pd.Timestamp(old_board["refreshed_at"].min())
    inputs = (("compass.recommendations", where_d), ("compass.costs", where_c), ("compass.measures", where_c))
    old = [version_live_at(_history(wh, t, w), run_id, when) for t, w in inputs]
    new = [wh.read(t, w) for t, w in inputs]
    return (snapshot(old_board, *old), snapshot(board, *new)), False, n_versions


# ---------------------------------------------------------------- the whole warehouse


def table_counts(wh: Warehouse) -> pd.DataFrame:
    """Every published table (schema.table) with its row count."""
    if not wh.exists():
        return pd.DataFrame(columns=["table", "rows"])
    tables = wh.query(
        "select table_schema || '.' || table_name as tbl from information_schema.tables "
        "where table_catalog = current_database() and table_schema not in ('information_schema', 'pg_catalog') "
        "order by 1"
    )["tbl"]
    if tables.empty:
        return pd.DataFrame(columns=["table", "rows"])
    counts = wh.query(" union all ".join(f"select '{t}' as \"table\", count(*) as rows from {t}" for t in tables))
    return counts.astype({"rows": int}).sort_values("table", ignore_index=True)  # one connection for all of them


# ---------------------------------------------------------------- what a person reads (CLI, report site)

PRICE_PER_MTOK = ("blended_usd_per_mtok", "input_usd_per_mtok", "output_usd_per_mtok")


def prices(wh: Warehouse, case_id: str) -> pd.DataFrame:
    """[model_id, usd_mtok, usd_query, raw_cost, cost, cost_column] of a case (compass.costs): the price in USD per
    million tokens when the case's cost is a token price (else NaN), in USD per query when the case has a
    workload or prices per interaction (else NaN), the cost in the case's own unit and normalized."""
    costs = wh.read("compass.costs", {"case_id": case_id})
    if costs.empty:
        return pd.DataFrame(columns=["model_id", "usd_mtok", "usd_query", "raw_cost", "cost", "cost_column"])
    column = str(costs["cost_column"].iloc[0])
    per_query = costs["raw_cost"] if column == "usd_per_interaction" else costs.get("usd_per_interaction")
    return costs.assign(usd_mtok=costs["raw_cost"] if column in PRICE_PER_MTOK else float("nan"),
                        usd_query=per_query if per_query is not None else float("nan"))[
        ["model_id", "usd_mtok", "usd_query", "raw_cost", "cost", "cost_column"]]


def leaderboard_view(wh: Warehouse, case_id: str, scenario: str, as_of: str | None = None) -> pd.DataFrame:
    """A leaderboard of a case x scenario (`leaderboard`) with what a reader needs next to it: the prices
    (`prices`: USD/Mtok, USD/query, next to the normalized `cost`), organization and open weights (raw.models)
    and, for the live version, the 90 % rank interval and P(rank 1) (compass.rank_uncertainty)."""
    board = leaderboard(wh, case_id, scenario, as_of).drop(columns=STAMP_COLUMNS, errors="ignore")
    if board.empty:
        return board
    dollars = prices(wh, case_id)[["model_id", "usd_mtok", "usd_query", "cost_column"]]
    board = board.drop(columns=["usd_per_interaction"], errors="ignore").merge(dollars, on="model_id", how="left")
    ranks = wh.read("compass.rank_uncertainty", {"case_id": case_id, "scenario": scenario}) if as_of is None else None
    shown = ["model_id", "rank_lo", "rank_hi", "p_rank1", "near_leader", "interval_supported", "n_outcome_models"]
    ranks = ranks[[c for c in shown if c in ranks]] if ranks is not None and len(ranks) else \
        pd.DataFrame(columns=["model_id", "rank_lo", "rank_hi", "p_rank1"])
    models = board_attributes(wh, case_id)
    models = models[["model_id", *[c for c in models if c not in board]]]
    return (board.merge(ranks, on="model_id", how="left").merge(models, on="model_id", how="left")
            .sort_values("rank").reset_index(drop=True))


def board_attributes(wh: Warehouse, case_id: str) -> pd.DataFrame:
    """[model_id, the GOVERNANCE_ATTRIBUTES the warehouse holds] of every model: raw.models and raw.model_costs
    (`model_attributes`) with the provider the case's price is from (compass.case_catalog, where published)."""
    models = model_attributes(wh)
    catalog = wh.read("compass.case_catalog", {"case_id": case_id}) if wh.table_exists("compass.case_catalog") else None
    if catalog is not None and "provider" in catalog:
        models = models.merge(catalog[["model_id", "provider"]], on="model_id", how="left")
    return models[["model_id", *[c for c in GOVERNANCE_ATTRIBUTES if c in models]]]


def decision_view(wh: Warehouse, case_id: str, scenario: str) -> pd.DataFrame:
    """compass.decisions of a case x scenario (point leader, P(rank 1) leader, cheapest within tolerance) when they
    were computed on the leaderboard now published (board_version = its data version); else no rows."""
    if not wh.table_exists("compass.decisions"):
        return pd.DataFrame()
    where = {"case_id": case_id, "scenario": scenario}
    picks = wh.read("compass.decisions", where)
    if picks.empty or "board_version" not in picks or picks["board_version"].iloc[0] != ",".join(wh.data_versions("compass.leaderboards", where)):
        return pd.DataFrame()
    return picks.drop(columns=STAMP_COLUMNS, errors="ignore")


def published(wh: Warehouse, table: str) -> pd.DataFrame:
    """A published table without its run stamps (empty when it does not exist): what the report site shows."""
    return wh.read(table).drop(columns=["run_id", "data_version"], errors="ignore")


def source_ages(wh: Warehouse, today: pd.Timestamp) -> pd.DataFrame:
    """[source, as_of, age_days, tables] per source: its newest as-of date over the raw tables (`source_freshness`),
    its age on `today` in days and the tables it feeds; newest first."""
    fresh = source_freshness(wh)
    if fresh.empty:
        return pd.DataFrame(columns=["source", "as_of", "age_days", "tables"])
    fresh = fresh.assign(as_of=pd.to_datetime(fresh["as_of"]))
    out = fresh.groupby("source").agg(as_of=("as_of", "max"), tables=("table", lambda t: ", ".join(sorted(set(t)))))
    out = out.assign(age_days=(today.normalize() - out["as_of"]).dt.days).reset_index()
    return out.sort_values(["as_of", "source"], ascending=[False, True])[["source", "as_of", "age_days", "tables"]]


def source_freshness(wh: Warehouse) -> pd.DataFrame:
    """[table, source, as_of, rows] of every raw table: which source delivered how many rows, as of when."""
    frames = []
    for table in TABLE_ORDER:
        name = f"raw.{table}"
        if wh.table_exists(name):
            frames.append(wh.query(f"select '{name}' as \"table\", source, cast(max(as_of) as varchar) as as_of, "
                                   f"count(*) as rows from {name} group by source order by source"))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["table", "source", "as_of", "rows"])


# ---------------------------------------------------------------- router


def route_datasets(wh: Warehouse) -> list[str]:
    """The datasets of raw.route_labels (one route_dataset partition each)."""
    if not wh.table_exists("raw.route_labels"):
        return []
    return sorted(wh.query("select distinct dataset from raw.route_labels")["dataset"])


def route_labels(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """raw.route_labels of one dataset, embeddings as float arrays (None where absent)."""
    labels = wh.read("raw.route_labels", {"dataset": dataset})
    if labels.empty:
        raise LookupError(f"raw.route_labels has no rows for dataset {dataset!r}: materialize raw/route_labels")
    embedding = labels["embedding"] if "embedding" in labels else pd.Series(None, index=labels.index)
    return labels.assign(embedding=embedding.map(lambda v: None if v is None or v is pd.NA else np.asarray(v, float)))


def per_query_models(wh: Warehouse) -> list[str]:
    """Every model the per-query data names: model_id of raw.query_records, model_p and model_a of raw.route_labels."""
    parts = [f"select {c} as model_id from {t}" for t, cols in (("raw.query_records", ["model_id"]),
                                                             ("raw.route_labels", ["model_p", "model_a"]))
             if wh.table_exists(t) for c in cols]
    return sorted(wh.query(" union ".join(parts))["model_id"].dropna()) if parts else []


def pair_price_rows(wh: Warehouse, labels: pd.DataFrame) -> pd.DataFrame:
    """[role (`primary` | `alternative`), model_id, input_usd_per_mtok, output_usd_per_mtok] of the dataset's M_p
    and M_a at their cheapest provider (datasets.model_costs); no rows when either is unpriced."""
    prices = cheapest_prices(wh.read("datasets.model_costs"))
    pair = pd.DataFrame({"role": ["primary", "alternative"],
                         "model_id": [labels["model_p"].iloc[0], labels["model_a"].iloc[0]]})
    rows = pair.merge(prices[["model_id", "input_usd_per_mtok", "output_usd_per_mtok"]], on="model_id", how="inner")
    return rows if len(rows) == 2 else rows.iloc[0:0]


def router_pair_prices(wh: Warehouse, dataset: str) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """((input, output) of M_p, (input, output) of M_a) in USD per million tokens from router.prices, or None."""
    rows = wh.read("router.prices", {"dataset": dataset})
    if len(rows) != 2:
        return None
    by_role = rows.set_index("role")[["input_usd_per_mtok", "output_usd_per_mtok"]].astype(float)
    return tuple(by_role.loc["primary"]), tuple(by_role.loc["alternative"])


def router_test_predictions(wh: Warehouse, dataset: str) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """({router: ψ̂ on the held-out queries}, the held-out queries) from router.test_predictions."""
    rows = wh.read("router.test_predictions", {"dataset": dataset})
    if rows.empty:
        raise LookupError(f"router.test_predictions has no rows for dataset {dataset!r}: materialize router/evaluation")
    rows = rows.drop(columns=STAMP_COLUMNS + ["dataset"], errors="ignore").sort_values(["router", "query_id"])
    test = rows[rows["router"] == rows["router"].iloc[0]].drop(columns=["router", "psi_hat"]).reset_index(drop=True)
    psi = {name: part["psi_hat"].to_numpy(float) for name, part in rows.groupby("router", sort=True)}
    return psi, test


def router_holdout(wh: Warehouse, dataset: str) -> pd.DataFrame:
    """The served router's held-out ψ̂ on the gold queries (router.deployment_holdout): what w is chosen on."""
    rows = wh.read("router.deployment_holdout", {"dataset": dataset})
    if rows.empty:
        raise LookupError(f"router.deployment_holdout has no rows for dataset {dataset!r}: materialize "
                          "router/deployment again (deployments before the held-out threshold lack them)")
    return rows.drop(columns=STAMP_COLUMNS, errors="ignore")


def router_deployment(wh: Warehouse, dataset: str) -> tuple[Embedder, pd.DataFrame, dict]:
    """The served router of a dataset (router.deployments, router.embedders, router.forests)."""
    facts = wh.read("router.deployments", {"dataset": dataset})
    if facts.empty:
        known = route_datasets(wh)
        if dataset not in known:  # a typo: the valid choices, not advice to materialize
            raise LookupError(f"unknown routing dataset {dataset!r}; valid datasets: {', '.join(known) or '(none)'}")
        raise LookupError(f"router.deployments has no row for dataset {dataset!r}: materialize router/deployment")
    embedder = Embedder.from_frame(wh.read("router.embedders", {"dataset": dataset}))
    nodes = wh.read("router.forests", {"dataset": dataset})
    return embedder, nodes, facts.drop(columns=STAMP_COLUMNS, errors="ignore").iloc[0].to_dict()
