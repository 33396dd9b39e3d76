"""What every asset shares: the writer pool, publishing a table, figures."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path

import dagster as dg
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from resources.warehouse import Warehouse, frame_version

# Every DuckDB writer runs in this pool; dagster.yaml limits it (see README "Concurrency").
WRITER_POOL = "duckdb"
REPORTS_DIR = Path("var/reports")


def publish(
    context: dg.AssetExecutionContext,
    wh: Warehouse,
    table: str,
    frame: pd.DataFrame,
    where: Mapping[str, object] | None = None,
    metadata: Mapping[str, object] | None = None,
) -> dg.MaterializeResult:
    """Replace the asset's own rows of `table` and report a content-hash data version."""
    rows = frame if where is None else frame.assign(**{k: v for k, v in where.items() if k not in frame.columns})
    wh.replace(table, rows, where)
    meta: dict[str, object] = {"table": table, "dagster/row_count": len(frame), **(metadata or {})}
    if len(frame):
        meta["preview"] = dg.MetadataValue.md(frame.head(10).to_markdown(index=False))
    context.log.info(f"{table}: wrote {len(frame)} rows")
    return dg.MaterializeResult(metadata=meta, data_version=dg.DataVersion(frame_version(frame)))


def save_figure(fig, folder: str, name: str) -> dg.MetadataValue:
    """Write a matplotlib figure as PNG under var/reports/<folder>/ and return it as metadata."""
    out = REPORTS_DIR / folder
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    encoded = base64.b64encode(path.read_bytes()).decode()
    return dg.MetadataValue.md(f"![{name}](data:image/png;base64,{encoded})\n\n`{path}`")


def _refresh_condition() -> dg.AutomationCondition:
    """Run when missing, when the code version changed, or when a parent got a new data version.

    A parent re-materialized with an identical data version does not trigger it
    (data_version_changed, not newly_updated). Blocking checks on parents gate it.
    """
    ac = dg.AutomationCondition
    trigger = (
        (ac.missing() & ~ac.any_deps_missing())
        | ac.code_version_changed()
        | ac.any_deps_match(ac.data_version_changed()).since_last_handled()
    )
    return (trigger & ~ac.in_progress() & ~ac.any_deps_in_progress() & ac.all_deps_blocking_checks_passed()).with_label(
        "refresh"
    )


REFRESH_CONDITION = _refresh_condition()
