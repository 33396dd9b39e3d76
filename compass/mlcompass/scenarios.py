"""Deployment scenarios and deployment-aware leaderboards (ML Compass §4.6, §5.6, EC §8.6).

A scenario s = (lam, {B_j}, {R_k}, {w_z}) (§4.6 "Deployment-aware leaderboard")
scores every model by Score_s(m) = Agg_z Û(x(m); z) - lam c(m) and ranks the
models that satisfy the scenario constraints. The paper's five settings (§5.6,
footnote 15, EC §8.6) are returned by `paper_scenarios`, with lam set per case
study: PRISM lam in {0.05, 0.5}, HealthBench lam in {0.5, 5} (low/high); the
constrained settings use the low lam; Constrained (single) requires C2 >= 0.5 and
Constrained (all) every internal measure >= 0.33 of its (min-max scaled) range.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from compass.ingest.errors import IngestError
from compass.ingest.untrusted import load_yaml
from compass.mlcompass.dominance import repair
from compass.mlcompass.frontier import CESFrontier
from compass.mlcompass.recommend import TIE_DECIMALS, AGGREGATIONS, model_scores, screen_models, sort_by_score
from compass.mlcompass.targets import per_type_targets, solve_target, targets_table
from compass.mlcompass.task_axes import parse_axes
from compass.mlcompass.utilities import UtilityFn
from compass.mlcompass.workload import Workload

# Footnote 15 / EC §8.6: cost sensitivities per case study.
PAPER_LAMBDAS: dict[str, dict[str, float]] = {
    "prism": {"zero": 0.0, "low": 0.05, "high": 0.5},
    "healthbench": {"zero": 0.0, "low": 0.5, "high": 5.0},
}

LEADERBOARD_COLUMNS = ["rank", "model_id", "score", "utility", "cost", "binding", "dominates"]
SCENARIO_KEYS = ("name", "lam", "budget", "floors", "raw_floors", "context_weights", "aggregation", "utility", "filters",
                 "tolerance", "workload", "budget_usd_per_month", "axes", "axis_floors")
# A team's workload (compass.mlcompass.workload): key -> (required, lower bound, upper bound).
WORKLOAD_KEYS: dict[str, tuple[bool, float, float]] = {
    "input_tokens": (True, 0.0, math.inf), "output_tokens": (True, 0.0, math.inf),
    "cached_input_share": (False, 0.0, 1.0), "requests_per_month": (False, 0.0, math.inf)}
# Input modalities a model can accept (models.dev `modalities.input`, the vocabulary of raw.models.modality).
MODALITIES = ("audio", "image", "pdf", "text", "video")
# Governance filters on model attributes (raw.models): key -> (type the value must have, description).
FILTER_KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "open_weights": (bool, "true or false"),
    "organizations_include": (list, "a list of organization names"),
    "organizations_exclude": (list, "a list of organization names"),
    "min_context_window": (int, "a whole number of tokens > 0"),
    "released_after": ((date, str), "a date YYYY-MM-DD"),
    # Latency as a second constraint next to cost (§4.2, §4.4 "separate cost constraints"): the model's
    # lowest measured time to first token over its providers (raw.model_costs.latency_s).
    "max_latency_s": ((int, float), "a number of seconds > 0"),
    # Served by at least one of these providers (raw.model_costs.provider, the names `compass leaderboard` shows).
    "providers": (list, "a list of provider names"),
    # Accepts every one of these input modalities (raw.models.modality, from models.dev).
    "modalities": (list, f"a list of input modalities out of {list(MODALITIES)}"),
    # Calls tools / functions (raw.models.tool_use).
    "tools": (bool, "true (keep the models that call tools)"),
}
# Filters whose attribute column a warehouse may lack (no source gives it): filter key -> column.
OPTIONAL_COLUMNS = {"max_latency_s": "latency_s", "providers": "providers", "modalities": "modality",
                    "tools": "tool_use"}
# Scenario keys that are attribute filters written at the top level (issue 48): key -> its `filters` key.
ATTRIBUTE_KEYS = {"min_context": "min_context_window", "max_latency_s": "max_latency_s", "providers": "providers",
                  "modalities": "modalities", "tools": "tools"}
# Internal measures are referred to by id (C1, C2, ...: compass.mlcompass.factor_alignment.factor_names) or by
# name (a lowercase slug such as general or livebench_data_analysis: compass.mlcompass.measure_names), resolved
# against the case's compass.measure_names when its decisions read the scenario.
MEASURE_NAME = re.compile(r"C[1-9][0-9]*|[a-z][a-z0-9_]*")


#: The largest number a numeric filter takes (tokens, seconds): beyond it a bound means nothing, and an integer too
#: large for a float broke the comparison with the models' attributes.
MAX_FILTER_NUMBER = 1e12


def governance_filters(spec: object, origin: str) -> dict[str, object]:
    """Validate a scenario's `filters` (compliance beyond capability floors): `FILTER_KEYS`, each value of its type.

    Organization names are compared case-insensitively; `released_after` becomes a `date`. Errors are
    IngestErrors naming the file (`origin`), the key and the value.
    """
    if not isinstance(spec, Mapping) or not spec:
        raise IngestError(origin, None, "filters", f"expected a mapping of filters {list(FILTER_KEYS)}, got {spec!r}")
    out: dict[str, object] = {}
    for key, value in spec.items():
        where = f"filters.{key}"
        if key not in FILTER_KEYS:
            raise IngestError(origin, None, where, f"unknown filter {key!r}; known: {list(FILTER_KEYS)}")
        kind, wanted = FILTER_KEYS[key]
        numeric = kind in (int, (int, float))
        bad_number = numeric and (isinstance(value, bool) or not isinstance(value, kind)
                                  or not 0 < value <= MAX_FILTER_NUMBER)
        if bad_number or not isinstance(value, kind):
            bound = f" (at most {MAX_FILTER_NUMBER:.0e})" if numeric else ""
            raise IngestError(origin, None, where, f"expected {wanted}, got {value!r}{bound}")
        if kind is list:
            if not value or not all(isinstance(v, str) and v.strip() for v in value):
                raise IngestError(origin, None, where, f"expected {wanted}, got {value!r}")
            value = sorted({v.strip().lower() for v in value})
            if key == "modalities" and set(value) - set(MODALITIES):
                raise IngestError(origin, None, where, f"unknown modality {sorted(set(value) - set(MODALITIES))[0]!r}; "
                                  f"known: {list(MODALITIES)}")
        if key == "tools" and value is not True:
            raise IngestError(origin, None, where, f"expected {wanted}, got {value!r}")
        if key == "released_after" and isinstance(value, str):
            try:
                value = date.fromisoformat(value)
            except ValueError:
                raise IngestError(origin, None, where, f"expected {wanted}, got {value!r}") from None
        out[key] = value
    return out


def with_attribute_filters(spec: Mapping, origin: str) -> Mapping:
    """A scenario mapping with its top-level attribute filters (`ATTRIBUTE_KEYS`: min_context, max_latency_s,
    providers, modalities, tools) moved under `filters`, each validated by `governance_filters` with errors
    naming the key as written. A filter given both ways is an error."""
    lifted = {key: value for key, value in spec.items() if key in ATTRIBUTE_KEYS}
    filters = spec.get("filters") or {}
    if not lifted or not isinstance(filters, Mapping):
        return spec
    for key, value in lifted.items():
        if ATTRIBUTE_KEYS[key] in filters:
            raise IngestError(origin, None, key, f"given both as `{key}` and as `filters.{ATTRIBUTE_KEYS[key]}`")
        try:
            governance_filters({ATTRIBUTE_KEYS[key]: value}, origin)
        except IngestError as exc:
            raise IngestError(origin, None, key, exc.reason) from None
    rest = {key: value for key, value in spec.items() if key not in ATTRIBUTE_KEYS}
    return {**rest, "filters": {**filters, **{ATTRIBUTE_KEYS[key]: value for key, value in lifted.items()}}}


def filter_attribute(models: pd.DataFrame, key: str) -> pd.Series:
    """The attribute of `models` (raw.models rows) a governance filter `key` reads; NaN where it is unknown."""
    if key == "open_weights":
        return models["open_weights"]
    if key.startswith("organizations_"):
        return models["organization"].str.strip().str.lower()
    if key == "min_context_window":
        return pd.to_numeric(models["context_window"])
    if key in OPTIONAL_COLUMNS:
        column = OPTIONAL_COLUMNS[key]
        return models[column] if column in models else pd.Series(np.nan, index=models.index, dtype=object)
    return pd.to_datetime(models["release_date"])  # released_after


def filter_models(models: pd.DataFrame, filters: Mapping[str, object]) -> tuple[pd.Index, dict[str, tuple[int, int]]]:
    """The model ids of `models` (raw.models rows) that pass every governance filter, and per filter
    (models failing it, models excluded because the attribute is unknown). A model whose attribute is
    unknown never passes: a compliance rule cannot be assumed met."""
    keep = pd.Series(True, index=models["model_id"].to_numpy())
    counts = {}
    for key, value in filters.items():
        attr = filter_attribute(models, key)
        if key == "open_weights":
            ok = lambda a, v=value: a.astype(bool) == v  # noqa: E731
        elif key.startswith("organizations_"):
            ok = (lambda a, v=value: a.isin(v)) if key.endswith("include") else (lambda a, v=value: ~a.isin(v))
        elif key == "min_context_window":
            ok = lambda a, v=value: a >= v  # noqa: E731
        elif key == "max_latency_s":
            ok = lambda a, v=value: pd.to_numeric(a) <= v  # noqa: E731
        elif key == "providers":  # '+'-joined: served by any provider listed
            ok = lambda a, v=value: a.map(lambda s: bool(set(v) & set(s.split("+"))))  # noqa: E731
        elif key == "modalities":  # '+'-joined: accepts every modality listed
            ok = lambda a, v=value: a.map(lambda s: set(v) <= set(s.split("+")))  # noqa: E731
        elif key == "tools":
            ok = lambda a: a.astype(bool)  # noqa: E731
        else:  # released_after
            ok = lambda a, v=value: a > pd.Timestamp(v)  # noqa: E731
        known = attr.notna().to_numpy()
        passed = np.zeros(len(models), dtype=bool)
        passed[known] = ok(attr[known]).to_numpy(bool)
        counts[key] = (int((known & ~passed).sum()), int((~known).sum()))
        keep &= passed
    return keep.index[keep.to_numpy()], counts


def person_weights(spec: object, origin: str) -> dict[str, float]:
    """Validate a scenario's `utility: {weights: {C1: 0.7, C2: 0.3}}`: a person's weights over the case's measures.

    Each name must be a measure id (C1, C2, ...) or name (a lowercase slug), each weight finite and >= 0, not all zero. Errors are
    IngestErrors naming the file (`origin`), the key and the value.
    """
    if not isinstance(spec, Mapping) or set(spec) != {"weights"}:
        raise IngestError(origin, None, "utility", f"expected `utility: {{weights: {{C1: ..., C2: ...}}}}`, got {spec!r}")
    weights = spec["weights"]
    if not isinstance(weights, Mapping) or not weights:
        raise IngestError(origin, None, "utility.weights", f"expected a mapping measure -> weight, got {weights!r}")
    out = {}
    for name, value in weights.items():
        key = f"utility.weights.{name}"
        if not MEASURE_NAME.fullmatch(str(name)):
            raise IngestError(origin, None, key, f"unknown measure name {name!r}: measures are C1, C2, ... or "
                              "their lowercase names (compass.measure_names)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise IngestError(origin, None, key, f"weight must be a finite number >= 0, got {value!r}")
        out[str(name)] = float(value)
    if sum(out.values()) <= 0:
        raise IngestError(origin, None, "utility.weights", f"weights are all zero: {out}")
    return out


def axis_keys(spec: Mapping, origin: str) -> dict[str, object]:
    """A scenario's `axes: {coding: 1.0}` (weights replacing the utility) and `axis_floors: {coding: 0.6}` (floors in
    [0, 1]) as Scenario fields, validated by `task_axes.parse_axes` (an IngestError naming the file and key)."""
    out: dict[str, object] = {}
    if "axes" in spec and "utility" in spec:
        raise IngestError(origin, None, "axes", "`axes` and `utility` both replace the case's utility; give one")
    if "axes" in spec:
        out["axes"] = parse_axes(spec["axes"], origin, "axes", floor=False)
    if "axis_floors" in spec:
        out["axis_floors"] = parse_axes(spec["axis_floors"], origin, "axis_floors", floor=True)
    return out


def score_tolerance(value: object, origin: str) -> float:
    """Validate a scenario's `tolerance`: a finite number >= 0 in utility-score units (an IngestError naming the
    file `origin` and the key otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise IngestError(origin, None, "tolerance", f"expected a finite number >= 0 (utility-score units), "
                                                     f"got {value!r}")
    return float(value)


def scenario_workload(spec: object, origin: str) -> Workload:
    """Validate a scenario's `workload: {input_tokens: 800, output_tokens: 300, cached_input_share: 0.5,
    requests_per_month: 2000000}` (`WORKLOAD_KEYS`): token counts and volume finite and >= 0, the cached share in
    [0, 1]. Errors are IngestErrors naming the file (`origin`) and the key."""
    if not isinstance(spec, Mapping):
        raise IngestError(origin, None, "workload", f"expected a mapping {list(WORKLOAD_KEYS)}, got {spec!r}")
    for key in spec:
        if key not in WORKLOAD_KEYS:
            raise IngestError(origin, None, f"workload.{key}",
                              f"unknown workload key {key!r}; known: {list(WORKLOAD_KEYS)}")
    values = {}
    for key, (required, low, high) in WORKLOAD_KEYS.items():
        if key not in spec:
            if required:
                raise IngestError(origin, None, f"workload.{key}",
                                  "missing: a workload needs input_tokens and output_tokens")
            continue
        value = spec[key]
        number = _as_float(value)
        if number is None or not (math.isfinite(number) and low <= number <= high):
            bound = f"in [{low:g}, {high:g}]" if high < math.inf else f"a finite number >= {low:g}"
            raise IngestError(origin, None, f"workload.{key}", f"must be {bound}, got {value!r}")
        values[key] = number
    return Workload(**values)


def monthly_budget(value: object, workload: Workload | None, origin: str) -> float:
    """Validate a scenario's `budget_usd_per_month`: a finite number of US dollars > 0, with a `workload` that
    states `requests_per_month` (what the monthly cost is computed from)."""
    number = _as_float(value)
    if number is None or not 0 < number < math.inf:
        raise IngestError(origin, None, "budget_usd_per_month", f"must be a number of US dollars > 0, got {value!r}")
    if workload is None or workload.requests_per_month is None:
        raise IngestError(origin, None, "budget_usd_per_month", "needs `workload` with requests_per_month "
                                                                 "(the monthly cost is computed from it)")
    return number


def _as_float(value: object) -> float | None:
    """A YAML number as a float (an integer too large for one: inf), None for anything else (text, a boolean)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Scenario:
    """A deployment scenario.

    lam: a number, or a rule name ("zero" | "low" | "high") resolved per dataset
    through PAPER_LAMBDAS (or a custom table). floors: on internal measures by id or name,
    e.g. {"C2": 0.5}, {"general": 0.5} or {"all": 0.33}. raw_floors: on raw benchmarks, e.g.
    {"gpqa_diamond": 0.5} (footnote 6 (ii) pre-filter). context_weights: group ->
    w_z (default uniform). aggregation: "mean" (Score_s) or "robust" (min over z).
    utility_weights: a person's weights over the case's measures (C1, C2, ...); when set they replace
    the case's utilities, learned or given, for this scenario (Û = βᵀx with β normalized to sum 1).
    filters: governance filters on model attributes (`FILTER_KEYS`, `filter_models`), applied before
    everything else; a model whose attribute is unknown is excluded. The attribute filters of `ATTRIBUTE_KEYS`
    (min_context, max_latency_s, providers, modalities, tools) may be written at the top level.
    tolerance: the practical score difference (utility-score units) below which the decision rule prefers the
    cheaper model (`compass.mlcompass.decision_rule`); None: the bootstrap's median gap between the replicate's
    rank-1 and rank-2 scores.
    budget: the normalized cost cap, a share of the most expensive model's price (1: no cap).
    workload: the team's tokens per request, cached share and monthly volume (`compass.mlcompass.workload`); with
    it the boards show USD per request and per month. budget_usd_per_month: models whose monthly cost under the
    workload exceeds it are infeasible (`compass.mlcompass.decisions.with_monthly_budget`).
    axes, axis_floors: task-axis weights and floors by name (`axis_keys`; compass.mlcompass.task_axes).
    """

    name: str
    lam: float | str = 0.0
    budget: float = 1.0
    floors: dict[str, float] = field(default_factory=dict)
    raw_floors: dict[str, float] = field(default_factory=dict)
    context_weights: dict[str, float] | None = None
    aggregation: str = "mean"
    utility_weights: dict[str, float] | None = None
    filters: dict[str, object] | None = None
    tolerance: float | None = None
    workload: Workload | None = None
    budget_usd_per_month: float | None = None
    axes: dict[str, float] | None = None
    axis_floors: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"scenario {self.name!r}: aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}")
        if isinstance(self.lam, str):
            if not any(self.lam in table for table in PAPER_LAMBDAS.values()):
                raise ValueError(f"scenario {self.name!r}: unknown lam rule {self.lam!r} (use a number or zero/low/high)")
        elif self.lam < 0:
            raise ValueError(f"scenario {self.name!r}: lam must be >= 0, got {self.lam}")
        if self.budget <= 0:
            raise ValueError(f"scenario {self.name!r}: budget must be > 0, got {self.budget}")
        if self.tolerance is not None and not self.tolerance >= 0:
            raise ValueError(f"scenario {self.name!r}: tolerance must be >= 0, got {self.tolerance}")

    def resolve_lambda(self, dataset: str | None = None, table: Mapping[str, Mapping[str, float]] | None = None) -> float:
        """Numeric lam: the number itself, or the rule looked up for `dataset` (footnote 15)."""
        if not isinstance(self.lam, str):
            return float(self.lam)
        table = table or PAPER_LAMBDAS
        if dataset not in table:
            raise ValueError(f"scenario {self.name!r}: lam rule {self.lam!r} needs a dataset in {list(table)}, got {dataset!r}")
        return float(table[dataset][self.lam])

    @classmethod
    def from_dict(cls, spec: Mapping, origin: str = "<scenario>") -> Scenario:
        """Build from a mapping with keys `SCENARIO_KEYS` and `ATTRIBUTE_KEYS`; `origin` (the file) is named in
        errors."""
        spec = with_attribute_filters(spec, origin)
        unknown = set(spec) - set(SCENARIO_KEYS)
        if unknown:
            raise IngestError(origin, None, sorted(unknown)[0], f"unknown scenario key(s) {sorted(unknown)}; "
                              f"known: {[*SCENARIO_KEYS, *ATTRIBUTE_KEYS]}")
        if "name" not in spec:
            raise IngestError(origin, None, "name", "a scenario needs a 'name'")
        try:
            return cls._parse(spec, origin)
        except IngestError:
            raise
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:  # a value of the wrong kind or range
            raise IngestError(origin, None, None, "invalid scenario: " + " ".join(str(exc).split())) from None

    @classmethod
    def _parse(cls, spec: Mapping, origin: str) -> Scenario:
        lam, aggregation = spec.get("lam", 0.0), spec.get("aggregation", "mean")
        if isinstance(lam, str) and not any(lam in table for table in PAPER_LAMBDAS.values()):
            raise IngestError(origin, None, "lam", f"unknown lam rule {lam!r}: use a number or zero/low/high")
        if aggregation not in AGGREGATIONS:
            raise IngestError(origin, None, "aggregation", f"must be one of {AGGREGATIONS}, got {aggregation!r}")
        return cls(
            name=str(spec["name"]),
            lam=lam if isinstance(lam, str) else _number(lam, origin, "lam", "a cost sensitivity", 0.0),
            budget=_number(spec.get("budget", 1.0), origin, "budget", "a normalized cost budget", 0.0, low_open=True),
            floors=_numbers(spec.get("floors"), origin, "floors", "a floor"),
            raw_floors=_numbers(spec.get("raw_floors"), origin, "raw_floors", "a floor"),
            context_weights=_numbers(spec.get("context_weights"), origin, "context_weights", "a weight", 0.0) or None,
            aggregation=aggregation,
            utility_weights=person_weights(spec["utility"], origin) if "utility" in spec else None,
            filters=governance_filters(spec["filters"], origin) if "filters" in spec else None,
            tolerance=score_tolerance(spec["tolerance"], origin) if spec.get("tolerance") is not None else None,
            **_money(spec, origin),
            **axis_keys(spec, origin),
        )

    @classmethod
    def from_yaml(cls, path: str | Path) -> Scenario:
        """Load one scenario from a YAML file holding the mapping of `from_dict`."""
        spec = load_yaml(Path(path).read_bytes(), str(path))
        if not isinstance(spec, Mapping):
            raise IngestError(str(path), None, None, "expected a YAML mapping describing one scenario")
        return cls.from_dict(spec, str(path))


def _money(spec: Mapping, origin: str) -> dict[str, object]:
    """The scenario's `workload` and `budget_usd_per_month` (absent keys: none)."""
    workload = scenario_workload(spec["workload"], origin) if "workload" in spec else None
    budget = monthly_budget(spec["budget_usd_per_month"], workload, origin) if "budget_usd_per_month" in spec else None
    return {"workload": workload, "budget_usd_per_month": budget}


def _number(value: object, origin: str, key: str, what: str, low: float = -math.inf, low_open: bool = False) -> float:
    """A finite number >= `low` (> `low` when `low_open`), else an IngestError naming the file and the key."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and (
        value > low if low_open else value >= low)
    if not ok:
        bound = f" {'>' if low_open else '>='} {low:g}" if low > -math.inf else ""
        raise IngestError(origin, None, key, f"{what} must be a finite number{bound}, got {value!r}")
    return float(value)


def _numbers(spec: object, origin: str, key: str, what: str, low: float = -math.inf) -> dict[str, float]:
    """A mapping name -> finite number (>= `low`): a scenario's floors, raw floors or context weights; {} when
    absent. A NaN floor is refused, not ignored."""
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise IngestError(origin, None, key, f"expected a mapping name -> number, got {spec!r}")
    return {str(k): _number(v, origin, f"{key}.{k}", what, low) for k, v in spec.items()}


def paper_scenarios(aggregation: str = "mean") -> list[Scenario]:
    """The five settings of §5.6 with lam given as per-dataset rules (resolve with `resolve_lambda`)."""
    return [
        Scenario("pure_capability", lam="zero", aggregation=aggregation),
        Scenario("cost_aware_low", lam="low", aggregation=aggregation),
        Scenario("cost_aware_high", lam="high", aggregation=aggregation),
        Scenario("constrained_single", lam="low", floors={"C2": 0.5}, aggregation=aggregation),
        Scenario("constrained_all", lam="low", floors={"all": 0.33}, aggregation=aggregation),
    ]


def leaderboard(
    measures: pd.DataFrame,
    costs_normalized: pd.Series,
    weights_by_group: Mapping[str, pd.Series | UtilityFn],
    scenario: Scenario,
    raw_scores: pd.DataFrame | None = None,
    dataset: str | None = None,
    observed: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Deployment-aware leaderboard of the feasible models (§4.6).

    weights_by_group: per context a Series of linear weights β_z (Û = β_zᵀx) or a
    fitted utility callable. Returns DataFrame[rank, model_id, score, utility,
    cost, binding, dominates]; ties go to the lower cost. With `observed` (the case's benchmark scores, index
    model_id, NaN = not observed) no model ranks below a model it strictly dominates there (compass.mlcompass.dominance:
    `score` is then the lifted ranking score and `dominates` names the model whose score a row took; None
    elsewhere). `binding` lists the constraints
    (";"-joined, e.g. "budget", "floor:C2", "raw_floor:gpqa_diamond") that screen
    out models which would otherwise outscore this row, or "none". The frame's
    attrs hold {"scenario", "lam", "feasible", "reason"}; an infeasible scenario
    gives an empty frame with feasible=False.
    """
    lam = scenario.resolve_lambda(dataset)
    scores = model_scores(measures, costs_normalized, weights_by_group, lam, scenario.aggregation, scenario.context_weights)
    screen = screen_models(measures, costs_normalized, scenario.budget, scenario.floors, raw_scores, scenario.raw_floors)
    table = scores.merge(screen, on="model_id")
    board = table.loc[table["feasible"], ["model_id", "score", "utility", "cost"]].assign(binding=_binding(table))
    board = sort_by_score(board.assign(dominates=None)[LEADERBOARD_COLUMNS[1:]])
    if observed is not None:
        board = repair(board, observed)
    board.insert(0, "rank", range(1, len(board) + 1))
    board.attrs.update({
        "scenario": scenario.name,
        "lam": lam,
        "feasible": not board.empty,
        "reason": "" if not board.empty else "no available model satisfies the scenario's cost and compliance constraints",
    })
    return board


def _binding(table: pd.DataFrame) -> pd.Series:
    """Per feasible row, the constraints (";"-joined, or "none") of the infeasible models that come before it
    in the tie-broken order (higher score, or equal score and lower cost).

    One pass in that order, carrying the union of the reasons seen so far: O(n log n), where comparing
    every feasible model with every infeasible one was O(n^2). On exact ties of (score, cost) a feasible
    row goes first, since only a strictly earlier model outranks it.
    """
    feasible, reasons = table["feasible"].to_numpy(bool), table["reason"].to_numpy(object)
    order = np.lexsort((~feasible, table["cost"].to_numpy(float), -table["score"].round(12).to_numpy(float)))
    seen: set[str] = set()
    binding = {}
    for i in order:
        if feasible[i]:
            binding[table.index[i]] = ";".join(sorted(seen)) if seen else "none"
        else:
            seen.update(reasons[i].split(";"))
    return pd.Series(binding, dtype=object)


def leaderboards(
    measures: pd.DataFrame,
    costs_normalized: pd.Series,
    weights_by_group: Mapping[str, pd.Series | UtilityFn],
    scenarios: Sequence[Scenario],
    raw_scores: pd.DataFrame | None = None,
    dataset: str | None = None,
) -> pd.DataFrame:
    """All scenario leaderboards stacked: DataFrame[scenario, lam, feasible, rank, model_id, score, utility, cost, binding].

    An infeasible scenario contributes one row with feasible=False and empty model fields.
    """
    records = []
    for scenario in scenarios:
        board = leaderboard(measures, costs_normalized, weights_by_group, scenario, raw_scores, dataset)
        head = {"scenario": scenario.name, "lam": board.attrs["lam"], "feasible": board.attrs["feasible"]}
        rows = board.to_dict("records") or [dict.fromkeys(LEADERBOARD_COLUMNS, np.nan)]
        records += [{**head, **row} for row in rows]
    return pd.DataFrame(records, columns=["scenario", "lam", "feasible", *LEADERBOARD_COLUMNS])


def scenario_targets(
    utilities: Mapping[str, pd.Series | UtilityFn],
    frontier: CESFrontier,
    scenario: Scenario,
    measure_names: Sequence[str],
    dataset: str | None = None,
    **kwargs,
) -> pd.DataFrame:
    """Continuous targets of one scenario (EC §8.6 tables): one row per context (Problem 4) plus
    "mean" (Problem 5) and "robust" (Problem 6): DataFrame[group, feasible, reason, x_<measure>..., c_star, utility, objective].
    kwargs go to `solve_target` (n_screen, n_starts, seed).
    """
    lam = scenario.resolve_lambda(dataset)
    common = dict(budget=scenario.budget, floors=scenario.floors, **kwargs)
    targets = per_type_targets(utilities, frontier, lam, measure_names, **common)
    for agg in AGGREGATIONS:
        targets[agg] = solve_target(utilities, frontier, lam, measure_names, aggregation=agg,
                                    weights=scenario.context_weights, **common)
    return targets_table(targets).assign(scenario=scenario.name, lam=lam)


def lambda_path(utility: pd.Series, cost: pd.Series) -> pd.DataFrame:
    """The top model of Score(m; λ) = Û(m) - λ c(m) as λ runs over [0, ∞): the critical λ where it switches.

    The leaderboard's leader for a cost sensitivity λ is the upper envelope of the lines u_m - λ c_m (§4.6
    score, ties to the lower cost). Starting from the best model at λ = 0, the next leader is the cheaper
    model whose line crosses first, at λ = (u_top - u_k) / (c_top - c_k); the walk ends at the cheapest
    model. Exact, O(n) per switch. Returns [lambda_from, lambda_to, model_id, utility, cost] (lambda_to
    of the last row is inf); empty when no model is given.
    """
    table = pd.DataFrame({"utility": utility.astype(float), "cost": cost.reindex(utility.index).astype(float)})
    if table.empty:
        return pd.DataFrame(columns=["lambda_from", "lambda_to", "model_id", "utility", "cost"])
    ids = table.index.to_numpy()
    u, c = table["utility"].round(TIE_DECIMALS).to_numpy(), table["cost"].to_numpy()
    top = int(np.lexsort((ids, c, -u))[0])  # best utility, then lower cost, then model id
    rows, start = [], 0.0
    while True:
        cheaper = np.flatnonzero(c < c[top])
        if cheaper.size == 0:
            rows.append((start, np.inf, ids[top], utility.iloc[top], c[top]))
            break
        cross = np.maximum((u[top] - u[cheaper]) / (c[top] - c[cheaper]), start)
        first = cheaper[np.lexsort((ids[cheaper], c[cheaper], cross))[0]]  # earliest crossing, then cheaper
        at = float(max((u[top] - u[first]) / (c[top] - c[first]), start))
        rows.append((start, at, ids[top], utility.iloc[top], c[top]))
        top, start = first, at
    return pd.DataFrame(rows, columns=["lambda_from", "lambda_to", "model_id", "utility", "cost"])
