"""Canonical model ids: one id per model, every source joins through the alias table.

`alias_key` folds the spelling differences that never change identity (case,
provider prefixes, separators, file suffixes). Differences that *may* change
identity (dates, sizes, effort levels) are kept in the key; the alias table maps
them explicitly, e.g. both `gpt-4o-2024-08-06` and `openai/gpt-4o` to `gpt-4o`.
"""

from __future__ import annotations

import re

import pandas as pd

# Provider / router prefixes that some sources prepend ("openai/gpt-4o").
_PREFIX = re.compile(r"^(?:[a-z0-9_.\-]+/)+")
_SEPARATORS = re.compile(r"[\s_:]+")
_REPEATED_DASH = re.compile(r"-{2,}")


def alias_key(name: str) -> str:
    """Lookup key of a model spelling: lowercase, no provider prefix, '-' separators."""
    key = str(name).strip().lower()
    key = _PREFIX.sub("", key)
    key = _SEPARATORS.sub("-", key)
    return _REPEATED_DASH.sub("-", key).strip("-")


def alias_lookup(aliases: pd.DataFrame, model_ids: pd.Series | None = None) -> dict[str, str]:
    """Map alias_key -> canonical model_id from the alias table (and the ids themselves)."""
    lookup = {alias_key(a): m for a, m in zip(aliases["alias"], aliases["model_id"])}
    ids = list(aliases["model_id"]) + ([] if model_ids is None else list(model_ids))
    lookup.update({alias_key(m): m for m in pd.unique(pd.Series(ids, dtype=object).dropna())})
    return lookup


def resolve_model_ids(names: pd.Series, lookup: dict[str, str]) -> tuple[pd.Series, pd.Series]:
    """Resolve spellings to canonical ids.

    Returns (resolved ids with NaN where unmatched, boolean mask of unmatched rows).
    Callers must report the unmatched rows; they are never dropped silently.
    """
    resolved = names.map(lambda n: lookup.get(alias_key(n)) if pd.notna(n) else None)
    return resolved, resolved.isna()
