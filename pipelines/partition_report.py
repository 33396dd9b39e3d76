"""How much of the per-dataset work a refresh recomputed (issue 45, item 3): a new day of logs in one dataset gives
that dataset's extract a new data version, and only the steps its rows reach run again. The line also states the
work that is not per dataset: raw.query_records re-read and re-hashed in full, every extract re-hashed, and the
global (unpartitioned) steps the new rows reached."""

from __future__ import annotations

import dagster as dg

from assets.datasets import DATASET_RECORDS
from assets.partitions import dataset_partitions
from pipelines.refresh import RefreshReport

RAW_RECORDS = dg.AssetKey(["raw", "query_records"])


def dataset_recompute_line(defs: dg.Definitions, instance: dg.DagsterInstance, report: RefreshReport) -> str | None:
    """'per-query datasets: 1 of 2 changed (mmlu_pro_math); raw.query_records re-read in full (1,204 rows), 2 of 2
    extracts re-hashed; 9 of 38 per-dataset steps recomputed; 1 global step reached (datasets/model_costs)', or None
    when no dataset extract ran. A dataset changed when its extract (datasets/records[d]) published a new data
    version; the per-dataset steps are the partitions of every other dataset-partitioned asset, of every dataset; the
    global steps are the unpartitioned assets downstream of raw.query_records that ran."""
    graph = defs.resolve_asset_graph()
    per_dataset = {key.to_user_string() for key in graph.get_all_asset_keys()
                   if graph.get(key).partitions_def == dataset_partitions and key != DATASET_RECORDS}
    prefix = DATASET_RECORDS.to_user_string() + "["
    extracts = [label for label in report.materialized if label.startswith(prefix)]
    if not extracts:
        return None
    changed = sorted(label[len(prefix):-1] for label in extracts if label not in report.unchanged)
    n_datasets = len(instance.get_dynamic_partitions(dataset_partitions.name))
    recomputed = [label for label in report.materialized if label.split("[")[0] in per_dataset]
    downstream = {key.to_user_string() for key in dg.AssetSelection.assets(RAW_RECORDS).downstream().resolve(graph)
                  if graph.get(key).partitions_def is None and key != RAW_RECORDS}
    reached = [label for label in report.materialized if label in downstream]
    names = f" ({', '.join(changed[:5])}{', …' if len(changed) > 5 else ''})" if changed else ""
    return (f"per-query datasets: {len(changed)} of {n_datasets} changed{names}; {_raw_reread(instance, report)}, "
            f"{len(extracts)} of {n_datasets} extracts re-hashed; {len(recomputed)} of "
            f"{len(per_dataset) * n_datasets} per-dataset steps recomputed; {len(reached)} global "
            f"step{'s' * (len(reached) != 1)} reached{' (' + ', '.join(reached) + ')' if reached else ''}")


def _raw_reread(instance: dg.DagsterInstance, report: RefreshReport) -> str:
    """'raw.query_records re-read in full (N rows)' when this refresh materialized it, else that it was not."""
    if RAW_RECORDS.to_user_string() not in report.materialized:
        return "raw.query_records not re-read"
    event = instance.get_latest_materialization_event(RAW_RECORDS)
    rows = event.asset_materialization.metadata.get("rows:raw.query_records") if event else None
    return f"raw.query_records re-read in full ({rows.value:,} rows)" if rows else "raw.query_records re-read in full"
