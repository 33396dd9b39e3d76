"""The production profile in deploy/ validates against Dagster's own config schemas.

No database, broker or network is touched: configs are validated and class pointers
resolved, but the Postgres storage is never instantiated.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._config import process_config, validate_config
from dagster._core.errors import DagsterInvalidConfigError
from dagster._core.instance.config import (
    ConcurrencyConfig,
    PoolGranularity,
    dagster_instance_config,
)
from dagster._core.instance.ref import InstanceRef
from dagster._core.remote_origin import GrpcServerCodeLocationOrigin
from dagster._core.run_coordinator import QueuedRunCoordinator
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log import EventLogStorage
from dagster._core.storage.runs import RunStorage
from dagster._core.storage.schedules import ScheduleStorage
from dagster._core.workspace.load import location_origins_from_config
from dagster._serdes.config_class import class_from_code_pointer
from dagster_celery import celery_executor
from dagster_postgres.utils import pg_url_from_config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PG_ENV = {
    "DAGSTER_PG_HOST": "pg.example.internal",
    "DAGSTER_PG_USER": "dagster_user",
    "DAGSTER_PG_PASSWORD": "not-a-secret",
    "DAGSTER_PG_DB": "dagster_db",
}
CELERY_ENV = {
    "DAGSTER_CELERY_BROKER_URL": "redis://broker.example.internal:6379/0",
    "DAGSTER_CELERY_BACKEND_URL": "redis://broker.example.internal:6379/1",
}


@pytest.fixture
def env(monkeypatch):
    for key, value in {**PG_ENV, **CELERY_ENV, "DAGSTER_CODE_SERVER_HOST": "code.example.internal"}.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def ref(env, tmp_path) -> InstanceRef:
    """Dagster's own loader: schema validation plus class pointers, no instantiation."""
    return InstanceRef.from_dir(str(tmp_path), config_dir=str(DEPLOY))


def _corrupted(tmp_path: Path, edit) -> Path:
    """A copy of deploy/dagster.yaml with `edit` applied to its parsed YAML."""
    config = yaml.safe_load((DEPLOY / "dagster.yaml").read_text())
    edit(config)
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "dagster.yaml").write_text(yaml.safe_dump(config))
    return folder


def test_instance_yaml_passes_dagster_schema(env):
    config, custom_class = dagster_instance_config(str(DEPLOY))
    assert custom_class is None
    assert set(config) >= {"storage", "run_coordinator", "concurrency", "run_monitoring"}
    assert config["run_monitoring"]["enabled"] is True
    assert config["run_monitoring"]["max_resume_run_attempts"] == 0  # a dead run worker fails its run
    assert config["run_monitoring"]["free_slots_after_run_end_seconds"] > 0  # a dead run's writer slot comes back


def test_storage_resolves_to_postgres_with_env_credentials(ref):
    classes = {
        "storage": (ref.storage_data, DagsterStorage, "DagsterPostgresStorage"),
        "runs": (ref.run_storage_data, RunStorage, "PostgresRunStorage"),
        "events": (ref.event_storage_data, EventLogStorage, "PostgresEventLogStorage"),
        "schedules": (ref.schedule_storage_data, ScheduleStorage, "PostgresScheduleStorage"),
    }
    for data, base, name in classes.values():
        assert (data.module_name, data.class_name) == ("dagster_postgres", name)
        cls = class_from_code_pointer(data.module_name, data.class_name)
        assert issubclass(cls, base)
        resolved = process_config(cls.config_type(), data.config_dict)
        assert resolved.success, resolved.errors
        db = resolved.value["postgres_db"]
        assert (db["hostname"], db["username"], db["password"], db["db_name"], db["port"]) == (
            "pg.example.internal", "dagster_user", "not-a-secret", "dagster_db", 5432,
        )
    # the connection string is assembled from the environment, credentials never in the file
    url = pg_url_from_config(process_config(
        class_from_code_pointer("dagster_postgres", "DagsterPostgresStorage").config_type(),
        ref.storage_data.config_dict,
    ).value)
    assert url == "postgresql+psycopg2://dagster_user:not-a-secret@pg.example.internal:5432/dagster_db"
    assert "not-a-secret" not in (DEPLOY / "dagster.yaml").read_text()


def test_queued_coordinator_and_concurrency_limits(ref):
    data = ref.run_coordinator_data
    cls = class_from_code_pointer(data.module_name, data.class_name)
    assert cls is QueuedRunCoordinator
    coordinator = data.rehydrate(QueuedRunCoordinator)  # in-memory object, no storage access
    effective = ConcurrencyConfig.from_concurrency_settings(
        ref.settings["concurrency"], coordinator.get_run_queue_config()
    )
    assert effective.pool_config.default_pool_limit is None  # "duckdb" routes; the file lock serializes writes
    assert effective.pool_config.pool_granularity == PoolGranularity.OP
    queue = effective.run_queue_config
    assert queue.max_concurrent_runs == 8
    limits = {limit["key"]: limit for limit in queue.tag_concurrency_limits}
    assert limits["dagster/partition"] == {
        "key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1,
    }
    assert limits["compass/study"]["limit"] == 1 and limits["dagster/backfill"]["limit"] == 2
    assert (ref.run_launcher_data.module_name, ref.run_launcher_data.class_name) == \
        ("dagster_celery.launcher", "CeleryRunLauncher")
    assert ref.run_launcher_data.config_dict["default_queue"] == "runs"


def test_run_worker_config_passes_the_celery_schema(env):
    """deploy/run_worker.celery.yaml (the `runs` queue's worker) is a valid Celery executor config, on the same
    broker as the step workers, and acknowledges run tasks on receipt (a run task handed out twice would run twice)."""
    runs = yaml.safe_load((DEPLOY / "run_worker.celery.yaml").read_text())["execution"]["config"]
    steps = yaml.safe_load((DEPLOY / "run_config.celery.yaml").read_text())["execution"]["config"]
    assert validate_config(celery_executor.config_schema.config_type, runs).success
    assert (runs["broker"], runs["backend"]) == (steps["broker"], steps["backend"])
    assert runs["config_source"]["task_default_queue"] == "runs" and "task_acks_late" not in runs["config_source"]


def test_workspace_points_at_the_code_server(env):
    path = DEPLOY / "workspace.yaml"
    origins = location_origins_from_config(yaml.safe_load(path.read_text()), str(path))
    origin = origins["llm_compass"]
    assert isinstance(origin, GrpcServerCodeLocationOrigin)
    assert (origin.host, origin.port) == ("code.example.internal", 4000)


def test_celery_run_config_validates_against_the_executor_schema(env):
    run_config = yaml.safe_load((DEPLOY / "run_config.celery.yaml").read_text())
    schema = celery_executor.config_schema.config_type
    assert validate_config(schema, run_config["execution"]["config"]).success
    resolved = process_config(schema, run_config["execution"]["config"])
    assert resolved.success, resolved.errors
    assert resolved.value["broker"] == CELERY_ENV["DAGSTER_CELERY_BROKER_URL"]
    assert resolved.value["backend"] == CELERY_ENV["DAGSTER_CELERY_BACKEND_URL"]
    assert resolved.value["include"] == ["pipelines.definitions"]


def test_celery_run_config_fits_a_project_job(env):
    """The whole file is valid run config for our refresh job once its executor is Celery."""
    import pipelines.definitions as project

    defs = dg.Definitions(
        assets=project.ASSETS, asset_checks=project.CHECKS, jobs=project.JOBS,
        resources=project.RESOURCES, executor=celery_executor,
    )
    job = defs.resolve_job_def(project.refresh_job_name("unpartitioned"))
    run_config = yaml.safe_load((DEPLOY / "run_config.celery.yaml").read_text())
    resolved = dg.validate_run_config(job, run_config)
    assert resolved["execution"]["celery"]["broker"] == CELERY_ENV["DAGSTER_CELERY_BROKER_URL"]


# ---- negative tests: a broken profile must fail ------------------------------------------


def _set(path: list[str], value):
    def edit(config):
        node = config
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # misspelled field
        (_set(["concurrency", "runs", "max_concurent_runs"], 4), "max_concurent_runs"),
        # wrong type
        (_set(["run_monitoring", "enabled"], "yes please"), "enabled"),
        # postgres without a host
        (lambda c: c["storage"]["postgres"]["postgres_db"].pop("hostname"), "hostname"),
        # two storage backends at once
        (_set(["storage", "sqlite"], {"base_dir": "/tmp"}), "storage"),
        # the run-queue limits inside the coordinator conflict with `concurrency.pools`
        (_set(["run_coordinator", "config", "max_concurrent_runs"], 8), "max_concurrent_runs"),
        # pool limit outside Dagster's range
        (_set(["concurrency", "pools", "default_limit"], -1), "default_limit"),
    ],
)
def test_corrupted_instance_yaml_is_rejected(env, tmp_path, edit, message):
    broken = _corrupted(tmp_path, edit)
    with pytest.raises(DagsterInvalidConfigError) as info:
        InstanceRef.from_dir(str(tmp_path), config_dir=str(broken))
    assert message in str(info.value) or any(message in str(e) for e in getattr(info.value, "errors", []))


def test_unparseable_yaml_is_rejected(env, tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    text = (DEPLOY / "dagster.yaml").read_text().replace("  postgres:\n", "  postgres:\n   bad-indent: [\n", 1)
    (folder / "dagster.yaml").write_text(text)
    with pytest.raises(yaml.YAMLError):
        dagster_instance_config(str(folder))


def test_missing_credentials_fail_resolution(monkeypatch, tmp_path):
    for key in PG_ENV:
        monkeypatch.delenv(key, raising=False)
    shutil.copy(DEPLOY / "dagster.yaml", tmp_path / "dagster.yaml")
    ref = InstanceRef.from_dir(str(tmp_path))  # the file is structurally valid ...
    cls = class_from_code_pointer("dagster_postgres", "DagsterPostgresStorage")
    resolved = process_config(cls.config_type(), ref.storage_data.config_dict)
    assert not resolved.success  # ... but cannot resolve without the environment
    assert "DAGSTER_PG_HOST" in str(resolved.errors)


@pytest.mark.parametrize(
    "broken",
    [
        {"brokr": "redis://x"},  # misspelled key
        {"broker": {"env": "DAGSTER_CELERY_BROKER_URL"}, "include": "pipelines.definitions"},  # not a list
        {"retries": {"sometimes": {}}},  # unknown retry mode
    ],
)
def test_corrupted_celery_config_is_rejected(env, broken):
    assert not validate_config(celery_executor.config_schema.config_type, broken).success


def test_corrupted_workspace_is_rejected(env):
    bad = {"load_from": [{"grpc_server": {"hots": "code", "port": 4000}}]}
    with pytest.raises(DagsterInvalidConfigError):
        location_origins_from_config(bad, str(DEPLOY / "workspace.yaml"))


def test_writer_pool_comes_from_the_environment():
    """The deploy profile's COMPASS_WRITER_POOL=duckdb puts every asset step in the pool `duckdb`;
    unset (local profile), no step has a pool. Read when the definitions load, so each in a fresh process."""
    import os
    import subprocess
    import sys

    code = ("from pipelines.definitions import ASSETS\n"
            "print(sorted({str(a.node_def.pool) for a in ASSETS}), len(ASSETS))\n")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "COMPASS_WRITER_POOL"}
    local = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True)
    deploy = subprocess.run([sys.executable, "-c", code], cwd=root, env={**env, "COMPASS_WRITER_POOL": "duckdb"},
                            capture_output=True, text=True, check=True)
    n = local.stdout.split()[-1]
    assert local.stdout.split()[0] == "['None']" and int(n) > 20
    assert deploy.stdout.split() == ["['duckdb']", n]


def _executor_probe(env_extra: dict[str, str]):
    """In a fresh process (COMPASS_EXECUTOR and COMPASS_WRITER_POOL are read when the definitions load): every job's
    executor and, for refresh_unpartitioned, each step's Celery queue after routing."""
    import os
    import subprocess
    import sys

    code = ("from pipelines.definitions import defs\n"
            "from pipelines.executor import route\n"
            "from resources import settings\n"
            "from dagster._core.execution.api import create_execution_plan\n"
            "jobs = {j.name: j.executor_def.name for j in defs.resolve_all_job_defs()}\n"
            "job = defs.resolve_job_def('refresh_unpartitioned')\n"
            "plan = route(create_execution_plan(job), settings.writer_pool())\n"
            "print(sorted(set(jobs.values())), len(jobs))\n"
            "print(sorted({(s.key.endswith(('_valid', '_10x', '_fresh')), s.tags.get('dagster-celery/queue', '-')) "
            "for s in plan.steps}))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("COMPASS_EXECUTOR", "COMPASS_WRITER_POOL")}
    return subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2],
                          env={**env, **CELERY_ENV, **env_extra}, capture_output=True, text=True)




def test_executor_switch():
    """Unset: no job gets an executor of ours (Dagster's default, as before the switch). COMPASS_EXECUTOR=celery:
    every job (and so the automation's runs) gets the Celery executor, the writers (every asset step) the duckdb
    queue and the checks the default queue. Anything else: a one-line error naming the variable."""
    local = _executor_probe({})
    celery = _executor_probe({"COMPASS_EXECUTOR": "celery", "COMPASS_WRITER_POOL": "duckdb"})
    wrong = _executor_probe({"COMPASS_EXECUTOR": "k8s"})
    assert local.returncode == 0 and celery.returncode == 0, local.stderr[-2000:] + celery.stderr[-2000:]
    executors, n = local.stdout.splitlines()[0].rsplit(" ", 1)
    assert "celery" not in executors and int(n) > 5
    assert local.stdout.splitlines()[1] == "[(False, '-'), (True, '-')]"  # nothing routed locally
    assert celery.stdout.splitlines()[0] == f"['celery'] {n}"
    assert celery.stdout.splitlines()[1] == "[(False, 'duckdb'), (True, '-')]"  # writers duckdb, checks default
    assert wrong.returncode != 0 and "COMPASS_EXECUTOR='k8s'" in wrong.stderr
