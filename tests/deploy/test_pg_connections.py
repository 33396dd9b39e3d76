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



def test_the_driver_pings_a_kept_connection_only_after_a_pause(tmp_path, monkeypatch):
    """The refresh driver's pool (pipelines.pg_connections.ping_when_idle; the driver's instance gets it through
    `keep_connections(..., ping_after_idle_s=...)`): checkouts back to back, as within an automation tick, are not
    pinged; one after a pause is; a failed ping (Postgres restarted) gives the checkout a new connection, as
    pre-ping does. On a SQLite file (no Postgres here; the pool's logic is the dialect's), the pool's clock a fake one
    that moves only when the test says so (a stalled machine cannot turn back-to-back checkouts into a pause). Red
    when every checkout pings (seen: the threshold removed, 3 pings) and when a failed ping is not followed by a
    reconnection."""
    import types

    from sqlalchemy import create_engine, event, text

    import pipelines.pg_connections as pg_connections
    from pipelines.pg_connections import ping_when_idle

    now = [0.0]
    monkeypatch.setattr(pg_connections, "time", types.SimpleNamespace(monotonic=lambda: now[0]))

    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite'}", poolclass=QueuePool)
    ping_when_idle(engine.pool, 0.2)
    pings, connects, alive = [], [], [True]
    monkeypatch.setattr(engine.dialect, "do_ping", lambda dbapi_connection: pings.append(1) or alive[0])
    event.listen(engine.pool, "connect", lambda dbapi_connection, record: connects.append(1))

    def query() -> None:
        with engine.connect() as connection:
            connection.execute(text("select 1"))

    for _ in range(3):
        query()
    assert (len(pings), len(connects)) == (0, 1)
    now[0] += 0.3
    query()
    assert (len(pings), len(connects)) == (1, 1)
    now[0] += 0.3
    alive[0] = False  # the ping finds the connection dead
    query()
    assert (len(pings), len(connects)) == (2, 2)
    assert not engine.pool._pre_ping


def test_a_run_worker_s_instance_closes_its_connections_when_its_run_ends(ref, monkeypatch, tmp_path):
    """dagster_celery's run task opens `with DagsterInstance.get() as instance` per run; Dagster's dispose leaves the
    Postgres engines (and their pooled connections) open until garbage collection: the default graph's second
    refresh through the stack ran Postgres out of connections. At the end of the `with`, each storage's engine is
    disposed (its pool closed; `Engine.dispose` spied). Red without `close_pools` and when only one storage's engine
    is disposed."""
    import shutil

    import dagster_celery.tasks
    from sqlalchemy.engine import Engine

    disposed = []
    dispose = Engine.dispose
    monkeypatch.setattr(Engine, "dispose", lambda engine, *a, **k: (disposed.append(engine), dispose(engine, *a, **k)))

    import pipelines.celery_app  # noqa: F401 - the worker's app module, as `dagster-celery worker -A` imports it

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(tmp_path / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dagster_celery.tasks.DagsterInstance.get() as instance:
        engines = [storage._engine for storage in (instance.run_storage, instance.event_log_storage,
                                                   instance.schedule_storage)]
        assert not disposed
    assert {id(engine) for engine in engines} <= {id(engine) for engine in disposed}
