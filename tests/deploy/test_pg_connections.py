"""The deploy profile's long-lived processes keep their Postgres connections (pipelines/pg_connections.py): the refresh
driver, each step worker process and each run worker's run. No database is touched: the storages are built without
their start-up table check, and pools connect lazily. The gain is measured by scripts/deploy_tick_timing.py."""

from __future__ import annotations

import pytest
import yaml
from dagster._core.instance.ref import InstanceRef
from sqlalchemy.pool import QueuePool

from tests.deploy.test_deploy_profile import DEPLOY, env  # noqa: F401 - env: the profile's variables, dummy values


@pytest.fixture
def ref(env, tmp_path) -> InstanceRef:
    """deploy/dagster.yaml's instance, its Postgres storage built without connecting."""
    config = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())
    config["storage"]["postgres"]["should_autocreate_tables"] = False
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(config))
    return InstanceRef.from_dir(str(tmp_path))


def pools(instance) -> list:
    return [storage._engine.pool for storage in (instance.run_storage, instance.event_log_storage,
                                                  instance.schedule_storage)]


def test_step_tasks_reuse_one_pooled_instance_per_worker_process(ref):
    """dagster_celery's step task builds its instance with `DagsterInstance.from_ref` for every step; in a worker
    started with `-A pipelines.celery_app` that gives the same instance each time, on pooled connections pinged
    before use. Red when celery_app does not replace the tasks' DagsterInstance (a new instance per step, a NullPool:
    a connection per query), or when keep_connections leaves Dagster's pool or its pre-ping out (seen red: the
    `_pre_ping` line removed)."""
    import dagster_celery.tasks

    import pipelines.celery_app  # noqa: F401 - the worker's app module, as `dagster-celery worker -A` imports it

    first = dagster_celery.tasks.DagsterInstance.from_ref(ref)
    assert dagster_celery.tasks.DagsterInstance.from_ref(ref) is first
    assert all(isinstance(pool, QueuePool) and pool._pre_ping for pool in pools(first)), pools(first)

