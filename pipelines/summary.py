"""Human summaries of the warehouse for the CLI."""

from __future__ import annotations

import dagster as dg
import pandas as pd

from resources.readers import table_counts
from resources.warehouse import Warehouse


def status_table(wh: Warehouse, instance: dg.DagsterInstance) -> pd.DataFrame:
    """One row per warehouse table: rows, last materialization time and data version of its asset."""
    out = table_counts(wh)
    last, version = [], []
    for table in out["table"]:
        event = instance.get_latest_materialization_event(dg.AssetKey(table.split(".")))
        mat = event.asset_materialization if event else None
        last.append(pd.Timestamp(event.timestamp, unit="s").strftime("%Y-%m-%d %H:%M:%S") if event else "-")
        version.append(mat.tags.get("dagster/data_version", "-") if mat and mat.tags else "-")
    return out.assign(last_materialized=last, data_version=version)


def print_summary(wh: Warehouse) -> None:
    counts = table_counts(wh)
    raw = counts[counts["table"].str.startswith("raw.")]
    print("\nLoaded:")
    for row in raw.itertuples():
        print(f"  {row.table:<24} {row.rows:>9,d} rows")
    if wh.table_exists("raw.models"):
        n = wh.query(
            "select count(distinct model_id) from raw.benchmark_scores b where model_id in "
            "(select model_id from raw.model_costs)"
        ).iloc[0, 0]
        print(f"  models with benchmark scores and a price: {n}")
    if wh.table_exists("compass.leaderboards"):
        top = wh.query(
            "select case_id, scenario, rank, model_id, round(score, 3) as score, round(cost, 3) as cost, binding "
            "from compass.leaderboards where rank <= 3 order by case_id, scenario, rank"
        )
        print("\nHeadline leaderboards (top 3 per case study and scenario):")
        print(top.to_string(index=False))
