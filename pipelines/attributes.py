"""The model attributes a person filters on (issue 48), as the leaderboard page and `compass leaderboard` show them:
one text per cell, "unknown" where no source gives the attribute, and a line saying which attributes are unknown
for how many of the models shown."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines.formatting import count, number

# Attribute column (resources.readers.GOVERNANCE_ATTRIBUTES) -> what it is, for people.
ATTRIBUTE_NAMES = {"provider": "provider (price)", "organization": "organization", "open_weights": "open weights",
                   "context_window": "context window", "release_date": "released", "modality": "modality",
                   "tool_use": "tool use", "latency_s": "latency s", "throughput_tps": "throughput tok/s"}


def unknown(value: object) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and np.isnan(value))


def attribute_text(column: str, value: object) -> str:
    """A model attribute a governance filter reads, for people: "unknown" where no source gives it."""
    if unknown(value):
        return "unknown"
    if column == "context_window":
        return count(value)
    if column == "release_date":
        return f"{pd.Timestamp(value):%Y-%m-%d}"
    if column in ("open_weights", "tool_use"):
        return "yes" if bool(value) else "no"
    return number(value) if column in ("latency_s", "throughput_tps") else str(value)


def with_attributes(board: pd.DataFrame) -> pd.DataFrame:
    """`board` with every attribute of `ATTRIBUTE_NAMES` as text (`attribute_text`); a column the board lacks
    (no source in the warehouse gives it) is added as "unknown"."""
    return board.assign(**{col: board[col].map(lambda v, c=col: attribute_text(c, v)) if col in board else "unknown"
                           for col in ATTRIBUTE_NAMES})


def unknown_attributes_note(board: pd.DataFrame) -> str:
    """'Unknown (no source gives it): tool use for all 12 models shown, latency s for 9 of 12.'
    of a board before `with_attributes`; "" when every attribute is known for every model."""
    parts = []
    for col, name in ATTRIBUTE_NAMES.items():
        missing = int(board[col].map(unknown).sum()) if col in board else len(board)
        if col not in board or missing == len(board):
            parts.append(f"{name} for all {len(board)} models shown")
        elif missing:
            parts.append(f"{name} for {missing} of {len(board)}")
    return "Unknown (no source gives it): " + ", ".join(parts) + "." if parts else ""
