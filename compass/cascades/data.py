"""Validation and pivoting of per-query records for LLM-cascade modelling.

Thesis seed 001 (Zellinger), Chapter 2, Sec. 2.3: every query is answered by every
model of the chain, so the per-model signals of one dataset form a (query x model)
matrix. This module checks the canonical long records and pivots them.

Canonical input columns: ``split, query_id, model_id, correct, confidence, cost_usd,
latency_ms, tokens_in, tokens_out``. ``confidence`` is the raw log-probability
log p_raw <= 0 of the answer (or of "Y" in the verification prompt); ``-inf`` is allowed
(p_raw = 0), ``0.0`` means certainty.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from compass.cascades.wide import WideRecords

REQUIRED_COLUMNS: tuple[str, ...] = ("split", "query_id", "model_id", "correct", "confidence")
COST_COLUMN = "cost_usd"


def validate_records(df: pd.DataFrame, *, require_test: bool = False) -> None:
    """Raise ``ValueError`` describing the first problem found in a records frame.

    Checks: required columns present; at least two models; every model has train rows;
    no NaN confidences or labels; confidences are log-probabilities (<= 0); labels are 0/1;
    no duplicate (split, query_id, model_id); every model answers the same train queries;
    each model's train confidences are not all identical.
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"records must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"records are missing required column(s) {missing}; have {list(df.columns)}")
    models = sorted(df["model_id"].dropna().unique())
    if len(models) < 2:
        raise ValueError(f"a cascade dataset needs at least 2 models, found {len(models)}: {models}")
    nan_conf = df.loc[df["confidence"].isna(), "model_id"].unique()
    if len(nan_conf):
        raise ValueError(f"NaN confidence values for model(s) {sorted(nan_conf)}")
    conf = df["confidence"].to_numpy(dtype=float)
    if np.any(conf > 1e-12):
        bad = sorted(df.loc[conf > 1e-12, "model_id"].unique())
        raise ValueError(
            f"confidence must be a log-probability (<= 0); positive values for model(s) {bad}"
        )
    nan_lab = df.loc[df["correct"].isna(), "model_id"].unique()
    if len(nan_lab):
        raise ValueError(f"NaN 'correct' labels for model(s) {sorted(nan_lab)}")
    if not df["correct"].astype(float).isin([0.0, 1.0]).all():
        raise ValueError("'correct' must be 0/1 (or boolean)")
    dup = df.duplicated(["split", "query_id", "model_id"])
    if dup.any():
        first = df.loc[dup, ["split", "query_id", "model_id"]].iloc[0].tolist()
        raise ValueError(f"duplicate (split, query_id, model_id) rows, e.g. {first}")
    train = df[df["split"] == "train"]
    for m in models:
        rows = train[train["model_id"] == m]
        if rows.empty:
            raise ValueError(f"model {m!r} has no train rows")
        finite = rows["confidence"].to_numpy(dtype=float)
        if np.unique(finite).size < 2:
            raise ValueError(f"model {m!r}: all train confidences are identical ({finite[0]!r})")
    if require_test and (df["split"] == "test").sum() == 0:
        raise ValueError("records have no test rows")
    counts = train.groupby("model_id")["query_id"].nunique()
    if counts.nunique() != 1:
        raise ValueError(f"models answer different numbers of train queries: {counts.to_dict()}")


def check_cascade(models: Sequence[str], available: Sequence[str]) -> list[str]:
    """Return the cascade as a list, raising ``ValueError`` on unknown or repeated models."""
    cascade = list(models)
    if len(cascade) < 2:
        raise ValueError(f"a cascade needs at least 2 models, got {cascade}")
    unknown = [m for m in cascade if m not in set(available)]
    if unknown:
        raise ValueError(f"unknown model(s) {unknown} in cascade; fitted models are {sorted(available)}")
    if len(set(cascade)) != len(cascade):
        raise ValueError(f"cascade repeats a model: {cascade}")
    return cascade


def _split_rows(df: pd.DataFrame, split: str | None) -> np.ndarray:
    """Boolean mask of the rows of ``split`` (all rows if ``None``); ``ValueError`` if there are none."""
    keep = np.ones(len(df), bool) if split is None else df["split"].to_numpy() == split
    if not keep.any():
        raise ValueError(f"no rows for split {split!r}")
    return keep


def model_ids(records: pd.DataFrame | WideRecords) -> list[str]:
    """The models of the records (a long frame's in order of appearance, the matrices' sorted)."""
    return list(records.models) if isinstance(records, WideRecords) else list(records["model_id"].unique())


def pivot(df: pd.DataFrame | WideRecords, column: str, *, split: str | None = None,
          models: Sequence[str] | None = None) -> pd.DataFrame:
    """Wide (query_id x model_id) table of float ``column`` for one split (all rows if ``None``), queries sorted.

    Queries missing for any requested model are dropped so that rows align across models. Built with numpy from
    the three columns (``DataFrame.pivot`` of the filtered frame gives the same table, several times slower), or
    read off the matrices (`WideRecords.pivot`).
    """
    if column not in df.columns:
        raise ValueError(f"column {column!r} not in records; have {list(df.columns)}")
    if isinstance(df, WideRecords):
        return df.pivot(column, split, models)
    keep = _split_rows(df, split)
    query, queries = pd.factorize(df["query_id"].to_numpy()[keep], sort=True)
    model, names = pd.factorize(df["model_id"].to_numpy()[keep], sort=True)
    cell = query * len(names) + model
    if np.bincount(cell).max() > 1:
        raise ValueError(f"duplicate (query_id, model_id) rows in column {column!r}")
    values = np.full((len(queries), len(names)), np.nan)
    values.ravel()[cell] = df[column].to_numpy(dtype=float)[keep]
    if models is not None:
        unknown = [m for m in models if m not in names]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; records have {sorted(names)}")
        values, names = values[:, pd.Index(names).get_indexer(models)], list(models)
    complete = ~np.isnan(values).any(axis=1)  # queries answered by every model
    return pd.DataFrame(values[complete], index=pd.Index(queries[complete], name="query_id"),
                        columns=pd.Index(names, name="model_id"))


def mean_costs(df: pd.DataFrame | WideRecords, *, split: str = "train") -> dict[str, float]:
    """Mean per-query cost E[C_i] in USD per model on ``split`` (thesis eq. 2.15)."""
    if COST_COLUMN not in df.columns:
        raise ValueError(f"records have no {COST_COLUMN!r} column; cannot compute expected costs")
    if isinstance(df, WideRecords):
        if not df.has_split(split):
            raise ValueError(f"no rows for split {split!r}")
        costs = df.model_means(COST_COLUMN, split)
    else:
        keep = _split_rows(df, split)  # the two columns only: filtering the whole frame costs more than the means
        costs = pd.Series(df[COST_COLUMN].to_numpy()[keep]).groupby(df["model_id"].to_numpy()[keep]).mean()
    if costs.isna().any():
        raise ValueError(f"missing {COST_COLUMN} for model(s) {sorted(costs[costs.isna()].index)}")
    return {str(k): float(v) for k, v in costs.items()}


# The per-model counts `check_values` and `check_rows` read (computed where the records are:
# `resources.cascade_matrix`); `check_rows` also reads train_queries.
SUMMARY_COLUMNS: tuple[str, ...] = ("model_id", "nan_confidence", "positive_confidence", "nan_correct", "bad_correct",
                                    "train_rows", "train_min_confidence", "train_max_confidence")


def check_values(summary: pd.DataFrame) -> None:
    """`validate_records`' first checks, in its order and with its messages, on per-model counts of the records
    instead of the records (one row per model, `SUMMARY_COLUMNS`): at least two models, no NaN or positive
    confidence, no NaN or non-0/1 label."""
    models = sorted(summary["model_id"])
    if len(models) < 2:
        raise ValueError(f"a cascade dataset needs at least 2 models, found {len(models)}: {models}")
    summary = summary.sort_values("model_id", ignore_index=True)
    for column, message in (("nan_confidence", "NaN confidence values for model(s) {}"),
                            ("positive_confidence", "confidence must be a log-probability (<= 0); positive values "
                                                    "for model(s) {}"),
                            ("nan_correct", "NaN 'correct' labels for model(s) {}")):
        bad = summary.loc[summary[column] > 0, "model_id"].tolist()
        if bad:
            raise ValueError(message.format(bad))
    if (summary["bad_correct"] > 0).any():
        raise ValueError("'correct' must be 0/1 (or boolean)")


def check_rows(summary: pd.DataFrame, duplicate: Sequence[object] | None) -> None:
    """`validate_records`' remaining checks after `check_values`, in its order and with its messages: the first
    duplicated (split, query_id, model_id) key (None: there is none), then per model its train rows, two distinct
    train confidences (their min and max differ: NaN is excluded by `check_values`) and its number of distinct
    train query ids (column train_queries), the same for every model."""
    if duplicate is not None:
        raise ValueError(f"duplicate (split, query_id, model_id) rows, e.g. {list(duplicate)}")
    summary = summary.sort_values("model_id", ignore_index=True)
    for row in summary.itertuples():
        if row.train_rows == 0:
            raise ValueError(f"model {row.model_id!r} has no train rows")
        if not row.train_min_confidence < row.train_max_confidence:
            raise ValueError(f"model {row.model_id!r}: all train confidences are identical "
                             f"({np.float64(row.train_min_confidence)!r})")
    counts = summary.set_index("model_id")["train_queries"]
    if counts.nunique() != 1:
        raise ValueError(f"models answer different numbers of train queries: {counts.to_dict()}")


def validate_wide(records: WideRecords, dataset: str) -> None:
    """`validate_records` of the records' long frame, on the matrices (`check_values`, `check_rows`: the same
    checks, order and messages; a matrix cell holds one record, so there is no duplicate); errors name `dataset`."""
    train = records.split_rows("train")[:, None] & records.present
    confidence, correct = records.values["confidence"], records.values["correct"]
    inf = np.where(train, confidence, np.inf).min(axis=0, initial=np.inf)
    sup = np.where(train, confidence, -np.inf).max(axis=0, initial=-np.inf)
    summary = pd.DataFrame({
        "model_id": list(records.models),
        "nan_confidence": (records.present & np.isnan(confidence)).sum(axis=0),
        "positive_confidence": (records.present & (confidence > 1e-12)).sum(axis=0),
        "nan_correct": (records.present & np.isnan(correct.astype(float))).sum(axis=0),
        "bad_correct": (records.present & ~np.isin(correct, (0, 1))).sum(axis=0),
        "train_rows": train.sum(axis=0), "train_min_confidence": inf, "train_max_confidence": sup,
        "train_queries": train.sum(axis=0)})
    try:
        check_values(summary)
        check_rows(summary, None)
    except ValueError as exc:
        raise ValueError(f"dataset {dataset!r}: {exc}") from None
