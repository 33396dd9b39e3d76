"""Shared building blocks of the study pages: a titled sortable table, and a page of plain tables."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from pipelines.report.html import esc, table
from resources import readers
from resources.warehouse import Warehouse

KEY_COLUMNS = ["case_id", "scenario", "dataset", "model_set", "archetype"]  # shown first: what a row is about


def section(title: str, frame: pd.DataFrame, note: str = "") -> str:
    """A heading, a note and the frame as a sortable table, its key columns first, run stamps dropped."""
    frame = frame.drop(columns=["refreshed_at"], errors="ignore")
    keys = [c for c in KEY_COLUMNS if c in frame.columns]
    frame = frame[keys + [c for c in frame.columns if c not in keys]]
    return f"<h2>{esc(title)}</h2>" + (f'<p class="note">{esc(note)}</p>' if note else "") + table(frame, sortable=True)


def tables_body(*tables: tuple[str, str]) -> Callable[[Warehouse], str]:
    """A page of sortable tables, one per (table, title) that exists (slices whose pages are plain tables)."""
    def body(wh: Warehouse) -> str:
        frames = [(title, readers.published(wh, name)) for name, title in tables]
        return "".join(section(title, f.head(500))
                       for title, f in frames if len(f)) or '<p class="note">No rows.</p>'
    return body


