"""How much of the per-dataset work a refresh recomputed (issue 45, item 3): a new day of logs in one dataset gives
that dataset's extract a new data version, and only the steps its rows reach run again."""

from __future__ import annotations

import dagster as dg

from assets.datasets import DATASET_RECORDS
from assets.partitions import dataset_partitions
from pipelines.refresh import RefreshReport


def dataset_recompute_line(defs: dg.Definitions, instance: dg.DagsterInstance, report: RefreshReport) -> str | None:
    """'per-query datasets: 1 of 2 changed (mmlu_pro_math); 9 of 38 per-dataset steps recomputed', or None when no
    dataset extract ran. A dataset changed when its extract (datasets/records[d]) published a new data version; the
    steps are the partitions of every other dataset-partitioned asset, of every dataset."""
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
    names = f" ({', '.join(changed[:5])}{', …' if len(changed) > 5 else ''})" if changed else ""
    return (f"per-query datasets: {len(changed)} of {n_datasets} changed{names}; {len(recomputed)} of "
            f"{len(per_dataset) * n_datasets} per-dataset steps recomputed")
