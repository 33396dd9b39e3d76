"""A backfill over all partitions of an asset, driven by Dagster's own backfill daemon (as the UI launches it).

The oracle fixture has two datasets; the backfill targets `datasets/records`
(cheap) with all partitions. The code location is served over gRPC and runs are
launched as real processes, as under `make ui`.
"""

import logging
import time

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.workspace.load_target import ModuleTarget
from dagster._daemon.backfill import execute_backfill_iteration
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import (
    QueuedRunCoordinatorDaemon,
)

from assets.datasets import DATASET_RECORDS
from pipelines.definitions import defs
from pipelines.partitions import sync_dynamic_partitions
from pipelines.refresh import run_selection
from resources.warehouse import Warehouse
from tests.paths import FIXTURES, ROOT
from tests.pipelines.helpers import SOURCE_KEYS, throwaway_instance

CONFIG = FIXTURES / "oracle" / "config.yaml"


def test_partitioned_assets_backfill_one_partition_per_run():
    graph = defs.resolve_asset_graph()
    for key in graph.materializable_asset_keys:
        node = graph.get(key)
        if node.partitions_def is not None:
            assert node.backfill_policy == dg.BackfillPolicy.multi_run(1), key


def _partition(tags: dict[str, str]) -> str:
    """The single partition of a backfill run (Dagster tags it as a key or as a one-key range)."""
    if "dagster/partition" in tags:
        return tags["dagster/partition"]
    start, end = tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]
    assert start == end, (start, end)
    return start


def _launch_and_wait(workspace, instance: dg.DagsterInstance, timeout: float = 300) -> None:
    """What `dagster dev`'s daemon does next: dequeue the submitted runs (queued coordinator), let them finish."""
    list(QueuedRunCoordinatorDaemon(interval_seconds=1).run_iteration(workspace))
    deadline = time.time() + timeout
    while any(not r.is_finished for r in instance.get_runs()):
        assert time.time() < deadline, [(r.run_id, r.status) for r in instance.get_runs()]
        time.sleep(1)


def test_backfill_of_all_dataset_partitions_runs_each_once(tmp_path):
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, tmp_path, CONFIG, {}) as instance:
        run_selection(defs, instance, SOURCE_KEYS, None, False)
        sync_dynamic_partitions(instance)
        datasets = sorted(instance.get_dynamic_partitions("dataset"))
        assert datasets == ["gsm8k", "livecodebench"]
        target = ModuleTarget(module_name="pipelines.definitions", attribute="defs", working_directory=str(ROOT),
                              location_name="llm_compass")
        with create_test_daemon_workspace_context(target, instance) as workspace:
            instance.add_backfill(PartitionBackfill.from_asset_partitions(
                backfill_id="all_datasets", asset_graph=workspace.create_request_context().asset_graph,
                backfill_timestamp=time.time(), tags={}, asset_selection=[DATASET_RECORDS], partition_names=None,
                dynamic_partitions_store=instance, all_partitions=True, title=None, description=None,
                run_config=None))
            for _ in range(30):
                list(execute_backfill_iteration(workspace, logging.getLogger("backfill")))
                _launch_and_wait(workspace, instance)
                if instance.get_backfill("all_datasets").status != BulkActionStatus.REQUESTED:
                    break
        backfill = instance.get_backfill("all_datasets")
        assert backfill.status == BulkActionStatus.COMPLETED_SUCCESS, backfill.status
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": "all_datasets"}))
        assert sorted(_partition(r.tags) for r in runs) == datasets  # one run per partition
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        wh = Warehouse(tmp_path / "warehouse.duckdb")
        raw = wh.query("select dataset, count(*) n from raw.query_records group by 1 order by 1")
        extracted = wh.query("select dataset, count(*) n from datasets.query_records group by 1 order by 1")
        assert raw.equals(extracted)
