"""Case-study configuration: a case study is a YAML file, not code.

A case names its model set, its raw benchmarks x_raw (§4.3), its cost column
(§4.4 Step 3), how measures and tiers are fitted, and how utilities are learned
from outcomes (§4.5) or given structurally (§3, Assumption 3.1). See
`cases/*.yaml` for the shipped cases and README "Case studies" for every key.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from compass.ingest.errors import IngestError
from compass.mlcompass.factor_alignment import parse_anchors


#: How a case chooses its benchmarks among the candidates (`benchmark_choice`).
CHOOSE_BY = ("fixed", "coverage")


@dataclass(frozen=True)
class BenchmarkSpec:
    """Which raw benchmarks form x_raw, and which models qualify.

    Candidates: benchmarks matching `include` and not `exclude` (glob patterns), scored by `sources` (empty:
    any). `choose_by: fixed` keeps every candidate (the paper's protocol: a given list); `choose_by: coverage`
    chooses them by coverage of the current models with `current_days`, `min_current_coverage`,
    `min_bridging` and `max_imputed_share` (`compass.mlcompass.benchmark_choice`). Both then keep models with
    `min_benchmarks_per_model` chosen benchmarks and benchmarks with `min_models_per_benchmark` models.
    `min_benchmarks_to_rank`: a model of x_raw is ranked on the case's decision boards only when observed on at
    least this many chosen benchmarks (0: every model); the others stay in the factor fit, the tiers and the
    utilities, and every board names them (`decisions.with_measured`).
    """

    include: tuple[str, ...] = ("*",)
    exclude: tuple[str, ...] = ()
    source_priority: tuple[str, ...] = ()
    min_models_per_benchmark: int = 10
    min_benchmarks_per_model: int = 5
    models: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    choose_by: str = "fixed"
    # Current models: released within this many days of the newest release (180: the two quarterly release
    # cycles a leaderboard compares; a 30-day window holds a handful of models, too few to measure coverage on).
    current_days: int = 180
    # Core: observed on at least this share of the current models (a majority of them).
    min_current_coverage: float = 0.5
    # A bridge shares at least this many models with the core: the factor map between the two blocks is a
    # regression of a model's scores on one block against the other, which 2 factors and an intercept need
    # more than 3 models for; 5 leaves it 2 residual degrees of freedom.
    min_bridging: int = 5
    # The current models' median share of imputed cells that bridges may add up to (the issue's 0.35, less
    # one benchmark's worth of slack).
    max_imputed_share: float = 0.3
    min_benchmarks_to_rank: int = 0

    def __post_init__(self) -> None:
        if self.choose_by not in CHOOSE_BY:
            raise ValueError(f"benchmarks.choose_by must be one of {CHOOSE_BY}, got {self.choose_by!r}")
        for key in ("min_current_coverage", "max_imputed_share"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ValueError(f"benchmarks.{key} must be a number in [0, 1], got {value!r}")
        for key in ("current_days", "min_bridging", "min_models_per_benchmark", "min_benchmarks_per_model",
                    "min_benchmarks_to_rank"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"benchmarks.{key} must be a whole number >= 0, got {value!r}")

    def selects(self, benchmark: str) -> bool:
        hit = any(fnmatch.fnmatch(benchmark, p) for p in self.include)
        return hit and not any(fnmatch.fnmatch(benchmark, p) for p in self.exclude)


#: The cost column computed from a workload rather than read (§4.2).
PER_INTERACTION = "usd_per_interaction"


@dataclass(frozen=True)
class CostSpec:
    """Scalar cost c(m): a column of raw.model_costs (aggregated over providers) or of raw.models.

    workload: expected tokens per interaction, {input_tokens: n, output_tokens: n}. With it, every
    priced model also gets its expected cost per interaction in USD (§4.2: c(m) = p_tok(m) E[tokens |
    workload]), and `column: usd_per_interaction` makes that the case's cost.
    """

    table: str = "model_costs"
    column: str = "blended_usd_per_mtok"
    provider_aggregate: str = "min"
    scaling: str = "minmax"
    tier_aggregation: str = "median"
    workload: dict[str, float] | None = None

    def __post_init__(self) -> None:
        if self.workload is not None and (set(self.workload) != {"input_tokens", "output_tokens"} or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in self.workload.values())):
            raise ValueError(f"cost.workload must be {{input_tokens: n, output_tokens: n}} with n >= 0, "
                             f"got {self.workload!r}")
        if self.column == PER_INTERACTION and (self.workload is None or self.table != "model_costs"):
            raise ValueError(f"cost.column {PER_INTERACTION} needs table: model_costs and a cost.workload")


UTILITY_FORMS = ("probability", "linear_score")


@dataclass(frozen=True)
class UtilitySpec:
    """How β is obtained: learned from outcomes (query_records / interactions) or given as weights.

    form: what the decisions maximize for a learned utility: "probability", the fitted model's predicted
    success probability Û_g(x) (HealthBench-style, §5.5), or "linear_score", the paper's PRISM utility
    Û_g(x) = β̂_gᵀx with the normalized |coefficients| of a linear or logistic fit (§5.6, "nonnegative
    coefficients normalized to sum to one").

    monotone: a LightGBM utility is non-decreasing in every measure (a dominating model never scores lower).
    nonnegative: a linear / logistic utility is fitted with β >= 0 (a sign-constrained fit; not for lightgbm,
    which `monotone` covers).
    """

    source: str = "weights"
    datasets: tuple[str, ...] = ()
    context: str | None = None
    label: str = "threshold"
    threshold: float = 0.5
    estimator: str = "logistic"
    weights: dict[str, float] = field(default_factory=dict)
    n_repeats: int = 10
    test_size: float = 0.3
    min_rows_per_group: int = 200
    form: str = "probability"
    monotone: bool = True
    nonnegative: bool = False

    def __post_init__(self) -> None:
        if self.form not in UTILITY_FORMS:
            raise ValueError(f"utility.form must be one of {UTILITY_FORMS}, got {self.form!r}")
        if self.form == "linear_score" and self.estimator == "lightgbm":
            raise ValueError("utility.form linear_score needs coefficients: use estimator linear or logistic")
        for flag in ("monotone", "nonnegative"):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"utility.{flag} must be true or false, got {getattr(self, flag)!r}")
        if self.nonnegative and self.estimator == "lightgbm":
            raise ValueError("utility.nonnegative constrains coefficients (linear, logistic); "
                             "a lightgbm utility is kept increasing by utility.monotone")


@dataclass(frozen=True)
class CaseStudy:
    case_id: str
    description: str
    benchmarks: BenchmarkSpec
    cost: CostSpec
    utility: UtilitySpec
    n_factors: int | None = None
    loading_threshold: float = 0.30
    max_factors_per_variable: int = 2
    # Benchmark -> +1/-1: the sign each anchor loads with on the measures it defines (factor_alignment.anchor_signs).
    anchors: dict[str, int] = field(default_factory=dict)
    eps: float = 0.05
    n_tiers: int = 3
    lambdas: dict[str, float] = field(default_factory=lambda: {"zero": 0.0, "low": 0.05, "high": 0.5})

    @staticmethod
    def from_yaml(path: str | Path) -> CaseStudy:
        path = Path(path)
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise IngestError(str(path), mark.line + 1 if mark else None, None, f"malformed YAML: {exc}") from None
        return CaseStudy.from_dict(doc, str(path))

    @staticmethod
    def from_dict(doc: dict, origin: str = "<dict>") -> CaseStudy:
        try:
            return CaseStudy(
                case_id=str(doc["case_id"]),
                description=str(doc.get("description", "")),
                benchmarks=BenchmarkSpec(**_section(doc, "benchmarks")),
                cost=CostSpec(**_section(doc, "cost")),
                utility=UtilitySpec(**_section(doc, "utility")),
                anchors=parse_anchors(doc.get("anchors")),
                **{k: doc[k] for k in ("n_factors", "loading_threshold", "max_factors_per_variable", "eps", "n_tiers", "lambdas")
                   if k in doc},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise IngestError(origin, None, None, "invalid case study: " + " ".join(str(exc).split())) from None


def _section(doc: dict, key: str) -> dict:
    """A case file's mapping-valued section (lists as tuples); TypeError naming it when it is not a mapping."""
    value = doc.get(key) or {}
    if not isinstance(value, dict):
        raise TypeError(f"{key} must be a mapping of keys to values, got {value!r}")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}


def load_cases(folders: list[Path]) -> dict[str, CaseStudy]:
    """Every case YAML in `folders`, keyed by case_id."""
    cases = [CaseStudy.from_yaml(p) for d in folders if d.exists() for p in sorted(d.glob("*.yaml"))]
    return {c.case_id: c for c in cases}
