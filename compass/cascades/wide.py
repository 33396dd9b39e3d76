"""One dataset's cascade records as (query x model) matrices (thesis seed 001, Ch. 2, Sec. 2.3; issue 45).

Every query of a cascade dataset is answered by every model of the chain, so its records are a (query x model)
matrix per signal: this is the form the preparation builds (in the warehouse, by `resources.cascade_matrix`), stores
once per partition and hands to the cascade assets, instead of a long frame of one row per (query, model) with a
Python object per string cell (100 M rows: > 8 GB).

A row is a query of one split, (split, query_id), the rows sorted by split then query id, the columns the models
sorted by name: the order `prepare_records`' long frame has (split, query_id, model_id), so a model's values in row
order are its rows of the long frame in order (`model_values`) and `long` gives that frame back exactly when every
record has a split: `prepare_records` reads a NULL split as train but keeps its rows first (the records' order puts
NULL splits first), here they sort among the train rows by query id (same rows, other order). A cell that
has no record is absent (`present`); a value matrix holds NaN there. `correct` is int8 (0/1), every other signal the
float64 it was, or float32 when every value of the column is a float32 exactly (a lossless narrowing: token counts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

LABEL_COLUMN = "correct"  # the 0/1 label, int8; the other signals float


@dataclass(frozen=True)
class WideRecords:
    """(query x model) matrices of one dataset's generation-0 cascade records (module docstring)."""

    split_names: tuple[str, ...]  # sorted
    split_codes: np.ndarray  # (Q,) int8 into split_names
    query_ids: np.ndarray  # (Q,) str (objects from the warehouse: a fixed width would size each by the longest)
    models: tuple[str, ...]  # sorted
    present: np.ndarray  # (Q, M) bool: the cell has a record
    values: Mapping[str, np.ndarray] = field(default_factory=dict)  # column -> (Q, M)

    def __post_init__(self) -> None:
        shape = (len(self.query_ids), len(self.models))
        if self.present.shape != shape or self.split_codes.shape != shape[:1]:
            raise ValueError(f"wide records: present {self.present.shape}, split codes {self.split_codes.shape}, "
                             f"expected {shape}")
        bad = [c for c, v in self.values.items() if v.shape != shape]
        if bad:
            raise ValueError(f"wide records: column(s) {bad} are not {shape}")

    @property
    def columns(self) -> list[str]:
        return ["split", "query_id", "model_id", *self.values]

    def split_rows(self, split: str | None) -> np.ndarray:
        """Boolean mask of the rows (queries) of `split` (all when None)."""
        if split is None:
            return np.ones(len(self.query_ids), bool)
        if split not in self.split_names:
            return np.zeros(len(self.query_ids), bool)
        return self.split_codes == self.split_names.index(split)

    def has_split(self, split: str) -> bool:
        return bool(self.split_rows(split).any())

    def model_values(self, column: str, split: str | None = None) -> dict[str, np.ndarray]:
        """Each model's values of `column` on `split` (every split when None), in row order: its rows of the long
        frame (`long`), in order. "split" gives the split names."""
        rows = self.split_rows(split)
        out = {}
        for j, model in enumerate(self.models):
            at = self.present[:, j] & rows
            if column == "split":
                out[model] = np.asarray(self.split_names, dtype=object)[self.split_codes[at]]
            else:
                out[model] = self.values[column][at, j]
        return out

    def pivot(self, column: str, split: str | None = None, models: Sequence[str] | None = None) -> pd.DataFrame:
        """`compass.cascades.data.pivot` of the long frame, off the matrices: the (query_id x model_id) float table of
        `column` on `split`, queries sorted (the rows of a split are), only the queries every model of `models` (all
        when None) answers with a value."""
        rows = self.split_rows(split)
        if not rows.any():
            raise ValueError(f"no rows for split {split!r}")
        names = list(self.models) if models is None else list(models)
        unknown = [m for m in names if m not in self.models]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; records have {sorted(self.models)}")
        cols = [self.models.index(m) for m in names]
        rows = np.flatnonzero(rows)
        if split is None and pd.Index(self.query_ids[rows]).has_duplicates:  # a query id in two splits
            raise ValueError(f"duplicate (query_id, model_id) rows in column {column!r}")
        values = self.values[column][np.ix_(rows, cols)].astype(float)
        complete = self.present[np.ix_(rows, cols)].all(axis=1) & ~np.isnan(values).any(axis=1)
        return pd.DataFrame(values[complete], index=pd.Index(self.query_ids[rows[complete]].astype(object),
                                                                  name="query_id"),
                            columns=pd.Index(names, name="model_id"))

    def model_means(self, column: str, split: str) -> pd.Series:
        """Each model's mean of `column` on `split`, indexed by model (those with rows there): the long frame's
        `groupby("model_id")[column].mean()` on the split, summed in the same order (its rows', per model)."""
        values = self.model_values(column, split)
        codes = np.concatenate([np.full(v.size, j) for j, v in enumerate(values.values())])
        means = pd.Series(np.concatenate(list(values.values())).astype(float)).groupby(codes).mean()
        return pd.Series(means.to_numpy(), index=pd.Index([self.models[j] for j in means.index], name="model_id"),
                         name=column)

    def keep_rows(self, rows: np.ndarray) -> "WideRecords":
        """The records of the rows (queries) where the boolean `rows` holds."""
        return WideRecords(self.split_names, self.split_codes[rows], self.query_ids[rows], self.models,
                           self.present[rows], {c: v[rows] for c, v in self.values.items()})

    def with_values(self, **columns: np.ndarray) -> "WideRecords":
        """The same records with `columns` (each (Q, M)) added or replaced."""
        return WideRecords(self.split_names, self.split_codes, self.query_ids, self.models, self.present,
                           {**self.values, **columns})

    def long(self, columns: Sequence[str] | None = None, *, split: str | None = None,
             models: Sequence[str] | None = None) -> pd.DataFrame:
        """The long frame: one row per present cell, (split, query_id, model_id) order, the label and the signals
        float64, the strings objects (one per label); only `split`'s rows and `models`' cells when given (the rows
        of the whole frame that hold them, in order). Whole, it is meant for the small (embedded) data; at 10^8 cells
        it is the frame this form avoids."""
        wanted = list(self.values) if columns is None else [c for c in columns if c in self.values]
        keep = self.present & self.split_rows(split)[:, None]
        if models is not None:
            keep &= np.isin(np.asarray(self.models, dtype=object), list(models))[None, :]
        rows, cols = np.nonzero(keep)  # row-major: split, query, then model
        names = np.asarray(self.split_names, dtype=object)
        frame = {"split": names[self.split_codes[rows]],
                 "query_id": self.query_ids.astype(object)[rows],
                 "model_id": np.asarray(self.models, dtype=object)[cols]}
        for c in wanted:
            frame[c] = self.values[c][rows, cols].astype(float)
        return pd.DataFrame(frame, copy=False)
