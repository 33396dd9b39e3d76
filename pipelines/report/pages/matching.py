"""The matchmaking page (seed 004, CUPID)."""

from __future__ import annotations

from pipelines.report.sections import tables_body
from pipelines.report.slice import Slice

SLICE = Slice("matching", "Matching", "matching.summary", tables_body(("matching.summary", "Matching study")),
              ("matching.summary",))
