"""Model pools for matchmaking (CUPID §4.1, App. D Table 5; spec-004 §7 "Model-pool record").

A pool is one row per model: display name (hidden from the algorithms, shown to people), prices in
USD per 1M tokens, a reasoning flag and numeric / boolean metadata columns. Missing values stay NaN:
a constraint on a missing value is never met (spec §6.10).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

# Columns that identify a model rather than describe it.
ID_COLUMNS = ("id", "model_id", "model")
_SUFFIX = {"k": 1e3, "M": 1e6}
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"))}


def parse_value(text: str) -> float:
    """One Table 5 cell as a number: '128k' -> 128000, '2M' -> 2e6, '24-Jun' -> 2024.417 (year + month/12),
    '-' -> NaN."""
    text = str(text).strip()
    if text in ("-", "", "nan"):
        return float("nan")
    if m := re.fullmatch(r"(\d+)-([A-Z][a-z]{2})", text):
        return 2000 + int(m.group(1)) + _MONTHS[m.group(2)] / 12
    if text[-1] in _SUFFIX:
        return float(text[:-1]) * _SUFFIX[text[-1]]
    return float(text)


@dataclass(frozen=True)
class Pool:
    """A model pool. `metadata` holds one numeric column per attribute (booleans as 0/1, NaN = unknown)."""

    name: str
    models: tuple[str, ...]
    price_in: np.ndarray
    price_out: np.ndarray
    reasoning: np.ndarray
    metadata: pd.DataFrame

    @property
    def size(self) -> int:
        return len(self.models)

    @property
    def cost_proxy(self) -> np.ndarray:
        """c_m = price_in + price_out ($/1M tokens), the static per-model cost of the pacing penalty (§3.2.5, C.4.2)."""
        return self.price_in + self.price_out

    def take(self, order: np.ndarray) -> Pool:
        """The pool with its rows in `order` (a run's shuffled pool: index order then decides no tie)."""
        return Pool(self.name, tuple(self.models[k] for k in order), self.price_in[order], self.price_out[order],
                    self.reasoning[order], self.metadata.iloc[order].reset_index(drop=True))

    def features(self) -> np.ndarray:
        """Standardized metadata (mean 0, sd 1 per column; unknown -> 0, the column mean), for the
        metadata-kernel option of spec §2.1."""
        X = self.metadata.to_numpy(float)
        mean, sd = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
        Z = (X - mean) / np.where(sd > 0, sd, 1.0)
        return np.nan_to_num(Z, nan=0.0)


def pool_from_frame(name: str, frame: pd.DataFrame) -> Pool:
    """A pool from a table with `model`, `input_price`, `output_price`, optional `reasoning` and metadata columns."""
    meta = frame.drop(columns=[c for c in ID_COLUMNS if c in frame]).apply(lambda col: col.map(parse_value))
    return Pool(name, tuple(frame["model"].astype(str)), meta["input_price"].to_numpy(float),
                meta["output_price"].to_numpy(float),
                meta["reasoning"].fillna(0).to_numpy(bool) if "reasoning" in meta else np.zeros(len(frame), bool),
                meta.reset_index(drop=True))


def read_pool(path: str | Path) -> Pool:
    """A pool CSV (e.g. data/matching/openai_zoo.csv, Table 5); '#' lines are comments."""
    path = Path(path)
    return pool_from_frame(path.stem, pd.read_csv(path, comment="#", dtype=str))
