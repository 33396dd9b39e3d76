"""Canonical table schemas: the public contract of the `raw` warehouse schema.

Every raw table is a long table whose rows carry `source` and `as_of`. A column
spec is (name, kind, required). `required` columns must be present in any input
file for that table; optional columns may be absent (they are filled with null)
and nullable columns may hold nulls.

Kinds: "str", "float", "int", "bool", "date", "vector" (a list of floats). Range rules live in
`compass.ingest.validate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pyarrow as pa


@dataclass(frozen=True)
class Column:
    name: str
    kind: str
    required: bool = True
    nullable: bool = False
    doc: str = ""


@dataclass(frozen=True)
class TableSchema:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    doc: str

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def required_names(self) -> list[str]:
        return [c.name for c in self.columns if c.required]

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


def _provenance() -> tuple[Column, ...]:
    return (
        Column("source", "str", required=False, doc="where the row came from (file or upstream source id)"),
        Column("as_of", "date", required=False, doc="snapshot date of the upstream source"),
    )


MODELS = TableSchema(
    name="models",
    key=("model_id",),
    doc="One row per canonical model.",
    columns=(
        Column("model_id", "str", doc="canonical model id (lowercase slug, see compass.ingest.aliases)"),
        Column("display_name", "str", required=False, nullable=True, doc="human-readable name"),
        Column("organization", "str", required=False, nullable=True, doc="developer organization"),
        Column("release_date", "date", required=False, nullable=True, doc="public release date"),
        Column("open_weights", "bool", required=False, nullable=True, doc="weights are downloadable"),
        Column("params_b", "float", required=False, nullable=True, doc="parameter count, billions"),
        Column("context_window", "int", required=False, nullable=True, doc="max input tokens"),
        Column("reasoning", "bool", required=False, nullable=True, doc="reasoning / thinking model"),
        Column("modality", "str", required=False, nullable=True,
               doc="input modalities, sorted and '+'-joined (e.g. image+pdf+text)"),
        Column("tool_use", "bool", required=False, nullable=True, doc="calls tools / functions"),
    )
    + _provenance(),
)

MODEL_ALIASES = TableSchema(
    name="model_aliases",
    key=("alias",),
    doc="Every spelling any source uses, mapped to one canonical model_id. "
    "The lookup key is compass.ingest.aliases.alias_key(alias).",
    columns=(
        Column("alias", "str", doc="a spelling of the model name as some source writes it"),
        Column("model_id", "str", doc="canonical model id"),
    )
    + _provenance(),
)

BENCHMARK_SCORES = TableSchema(
    name="benchmark_scores",
    key=("model_id", "benchmark", "source"),
    doc="Aggregate benchmark results, one row per (model, benchmark, source).",
    columns=(
        Column("model_id", "str", doc="canonical model id"),
        Column("benchmark", "str", doc="benchmark id, lowercase slug (e.g. gpqa_diamond)"),
        Column("score", "float", doc="score on the scale named by score_scale"),
        Column("score_scale", "str", required=False, doc="fraction (0-1) | percent (0-100) | elo | rating"),
        Column("stderr", "float", required=False, nullable=True, doc="standard error on the same scale"),
    )
    + _provenance(),
)

MODEL_COSTS = TableSchema(
    name="model_costs",
    key=("model_id", "provider", "source"),
    doc="Prices per provider. blended_usd_per_mtok = (3*input + 1*output)/4, the 3:1 "
    "input:output token blend used by Artificial Analysis.",
    columns=(
        Column("model_id", "str", doc="canonical model id"),
        Column("provider", "str", doc="serving provider (e.g. openai, together_ai)"),
        Column("input_usd_per_mtok", "float", doc="USD per million input tokens"),
        Column("output_usd_per_mtok", "float", doc="USD per million output tokens"),
        Column("blended_usd_per_mtok", "float", required=False, doc="(3*input + output)/4; computed when absent"),
        Column("cache_read_usd_per_mtok", "float", required=False, nullable=True,
               doc="USD per million input tokens read from the provider's prompt cache; null: not stated"),
        Column("throughput_tps", "float", required=False, nullable=True, doc="output tokens per second"),
        Column("latency_s", "float", required=False, nullable=True, doc="time to first token, seconds"),
    )
    + _provenance(),
)

INTERACTIONS = TableSchema(
    name="interactions",
    key=("dataset", "interaction_id", "model_id"),
    doc="Interaction-level outcomes used to learn utilities (one row per prompt x model judgment).",
    columns=(
        Column("dataset", "str", doc="dataset id (e.g. wildbench_v2_gpt4t)"),
        Column("interaction_id", "str", doc="prompt / session id, shared across models"),
        Column("model_id", "str", doc="canonical model id"),
        Column("context_group", "str", required=False, nullable=True, doc="context (user type, task category)"),
        Column("user_id", "str", required=False, nullable=True, doc="user id where the source has one"),
        Column("context", "str", required=False, nullable=True, doc="extra context as a JSON object"),
        Column("outcome", "float", doc="the outcome value"),
        Column("outcome_kind", "str", required=False, doc="binary | rubric_1_10 | rating | score_0_1"),
    )
    + _provenance(),
)

QUERY_RECORDS = TableSchema(
    name="query_records",
    key=("dataset", "split", "query_id", "model_id", "generation"),
    doc="Per-query x per-model x per-generation outcomes for cascades and oracle routing.",
    columns=(
        Column("dataset", "str", doc="dataset id (e.g. mmlu, livecodebench_generation)"),
        Column("split", "str", required=False, doc="train | test | all"),
        Column("query_id", "str", doc="query id, shared across models"),
        Column("model_id", "str", doc="canonical model id"),
        Column("generation", "int", required=False, doc="sample index 0..G-1 (0 when single-sample)"),
        Column("correct", "float", required=False, nullable=True, doc="1.0 correct, 0.0 wrong"),
        Column("score", "float", required=False, nullable=True, doc="graded score where not binary"),
        Column("confidence", "float", required=False, nullable=True, doc="raw model confidence signal"),
        Column("cost_usd", "float", required=False, nullable=True, doc="real per-call cost, USD"),
        Column("latency_ms", "float", required=False, nullable=True, doc="per-call latency, ms"),
        Column("tokens_in", "float", required=False, nullable=True, doc="input tokens"),
        Column("tokens_out", "float", required=False, nullable=True, doc="output tokens"),
        Column("category", "str", required=False, nullable=True, doc="query topic / subject / difficulty"),
    )
    + _provenance(),
)

ROUTE_LABELS = TableSchema(
    name="route_labels",
    key=("dataset", "query_id", "label_kind"),
    doc="Gold-standard and preference labels for routing between a primary model M_p and an alternative M_a "
    "(seed 003, Meta-router): one row per (dataset, query, label kind).",
    columns=(
        Column("dataset", "str", doc="routing dataset id: one (model_p, model_a) pair, gold and preference rows"),
        Column("query_id", "str", doc="query id within the dataset"),
        Column("query_text", "str", required=False, nullable=True, doc="the prompt (embedded when no embedding)"),
        Column("model_p", "str", doc="canonical id of the primary (strong, expensive) model M_p"),
        Column("model_a", "str", doc="canonical id of the alternative (cheap) model M_a"),
        Column("label_kind", "str", doc="gold | preference"),
        Column("outcome", "float", doc="gold: quality difference r = q(M_p) - q(M_a); preference: y in [-1, 1] "
               "(+1: M_p preferred)"),
        Column("tokens_out_p", "float", required=False, nullable=True, doc="output tokens of M_p's answer"),
        Column("tokens_out_a", "float", required=False, nullable=True, doc="output tokens of M_a's answer"),
        Column("embedding", "vector", required=False, nullable=True,
               doc="the user's own query embedding (Parquet list of floats; in CSV a JSON list)"),
    )
    + _provenance(),
)

PANDAS_DTYPES = {"str": "string", "float": "float64", "int": "Int64", "bool": "boolean", "date": pd.ArrowDtype(pa.date32()),
                 "vector": "object"}


def empty_frame(schema: TableSchema) -> pd.DataFrame:
    """A zero-row frame with the schema's columns and dtypes."""

    return pd.DataFrame({c.name: pd.Series(dtype=PANDAS_DTYPES[c.kind]) for c in schema.columns})


RAW_TABLES: dict[str, TableSchema] = {
    s.name: s for s in (MODELS, MODEL_ALIASES, BENCHMARK_SCORES, MODEL_COSTS, INTERACTIONS, QUERY_RECORDS, ROUTE_LABELS)
}


def model_columns(schema: TableSchema) -> tuple[str, ...]:
    """The columns of `schema` that hold model names resolved through the alias table."""
    return ("model_p", "model_a") if schema.name == "route_labels" else ("model_id",)
