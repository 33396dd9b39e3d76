"""The Celery app of the deploy profile's workers (`dagster-celery worker start -A pipelines.celery_app ...`):
dagster_celery's app and tasks, with the definitions imported in the worker's main process before its pool forks, so
every pool process starts with them. With `-A dagster_celery.app` each pool process imported them on its first task
(~4 s of CPU; 15 s of wall time before a run worker's first run at load 15, issue 44). Each pool process keeps one
instance on pooled Postgres connections for its step tasks, and a run worker one per run
(pipelines.pg_connections), not a connection per query. Every worker also knows the publish task of steps without
the warehouse file (pipelines.stage_publish)."""

import dagster_celery.tasks
from dagster_celery.app import app, execute_job, execute_plan, resume_job  # noqa: F401 - the tasks workers run

import pipelines.definitions  # noqa: E402, F401 - imported once, before the fork
from pipelines import stage_publish
from pipelines.pg_connections import WarmInstances

dagster_celery.tasks.DagsterInstance = WarmInstances  # its tasks' only uses: from_ref (steps) and get (runs)
stage_publish.register(app)  # a step in stage mode has the warehouse host commit what it staged
