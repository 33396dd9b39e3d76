"""The executor switch (COMPASS_EXECUTOR, resources.settings.executor): unset keeps Dagster's default; `celery` gives
every job and the automation dagster_celery's executor, with each warehouse writer step routed to the `duckdb` queue.

Writers are the steps in the writer pool (COMPASS_WRITER_POOL, `duckdb` in the deploy profile). The pool keeps them
to one at a time across all workers and hosts (its slot lives in Postgres); the queue puts them on the worker that
runs next to the DuckDB file. Every other step (the asset checks, the ops jobs) goes to the default queue `dagster`,
served by compute workers on any host. The steps of the assets named in COMPASS_REMOTE_STEPS go to the queue
`remote` instead, whose workers run in stage mode where the warehouse file is not (resources.stage, issue 44 item 2).
A step that already carries the tag `dagster-celery/queue` keeps it.
The executor's config is the `execution.config` of COMPASS_CELERY_CONFIG (deploy/run_config.celery.yaml), the
file the workers are started with, so runs need no run config and broker settings live in one place.
"""

from __future__ import annotations

import dagster as dg
import yaml
from celery._state import _set_task_join_will_block
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster._core.execution.plan.step import ExecutionStep
from dagster._core.execution.retries import RetryMode
from dagster_celery import core_execution_loop
from dagster_celery.executor import CELERY_CONFIG, CeleryExecutor
from dagster_celery.tags import DAGSTER_CELERY_QUEUE_TAG

from resources import settings

WRITER_QUEUE = "duckdb"
REMOTE_QUEUE = "remote"
# How often a run worker asks the result backend which of its steps' tasks finished (dagster_celery: every 1 s, so
# each step of a chain waited 0.5 s on average before its successor was submitted). A Redis GET per in-flight step.
RESULT_POLL_S = 0.1


def remote_steps() -> frozenset[str]:
    """COMPASS_REMOTE_STEPS (resources.settings.remote_steps), each checked against the definitions: the key of an
    asset that its step computes alone, since `route` finds its step by the key. SettingsError naming the key
    otherwise: a misspelled key, or a member of a multi-asset, would run in place without a word."""
    from pipelines.definitions import ASSETS  # here: the definitions build their executor from this module

    alone = {"/".join(key.path): len(a.keys) == 1 and a.node_def.name == "__".join(key.path)
             for a in ASSETS if isinstance(a, dg.AssetsDefinition) for key in a.keys}
    for key in sorted(settings.remote_steps()):
        if key not in alone:
            raise settings.SettingsError(f"COMPASS_REMOTE_STEPS: {key!r} is not an asset key (schema/table, e.g. "
                                         f"compass/case_benchmarks)")
        if not alone[key]:
            raise settings.SettingsError(f"COMPASS_REMOTE_STEPS: {key!r} is one of several assets of one step (a "
                                         f"multi-asset), which cannot run remote")
    return settings.remote_steps()


def route(plan: ExecutionPlan, writer_pool: str | None, remote: frozenset[str] = frozenset()) -> ExecutionPlan:
    """`plan` with the queue tag REMOTE_QUEUE on the steps of the `remote` asset keys (`schema/table`), and
    WRITER_QUEUE on every other step in `writer_pool`; a step that names a queue itself keeps it."""
    if writer_pool is None and not remote:
        return plan
    remote_steps = {key.replace("/", "__") for key in remote}  # an asset's step key: its key's parts joined by __

    def routed(step):
        if not isinstance(step, ExecutionStep) or DAGSTER_CELERY_QUEUE_TAG in step.tags:
            return step
        if step.key in remote_steps:
            return step._replace(tags={**step.tags, DAGSTER_CELERY_QUEUE_TAG: REMOTE_QUEUE})
        if writer_pool is not None and step.pool == writer_pool:
            return step._replace(tags={**step.tags, DAGSTER_CELERY_QUEUE_TAG: WRITER_QUEUE})
        return step

    steps = {handle: routed(step) for handle, step in plan.step_dict.items()}
    return plan._replace(step_dict=steps, step_dict_by_key={step.key: step for step in steps.values()})


class RoutedCeleryExecutor(CeleryExecutor):
    """dagster_celery's executor; writer steps go to WRITER_QUEUE (see `route`)."""

    def execute(self, plan_context, execution_plan):
        core_execution_loop.TICK_SECONDS = RESULT_POLL_S  # the loop's only setting, a module constant
        # A run worker that is itself a Celery task (deploy/dagster.yaml `run_launcher`) may read its steps' results:
        # Celery forbids result.get() inside a task lest a task wait for a subtask queued behind it on its own worker,
        # but these steps run on other queues' workers and the loop reads a result only once it is ready.
        _set_task_join_will_block(False)
        return super().execute(plan_context, route(execution_plan, settings.writer_pool(), remote_steps()))


@dg.executor(name="celery", config_schema=CELERY_CONFIG, requirements=dg.multiple_process_executor_requirements())
def compass_celery_executor(init_context) -> RoutedCeleryExecutor:
    config = init_context.executor_config
    return RoutedCeleryExecutor(broker=config.get("broker"), backend=config.get("backend"),
                                config_source=config.get("config_source"), include=config.get("include"),
                                retries=RetryMode.from_config(config["retries"]))


def chosen_executor() -> dg.ExecutorDefinition | None:
    """The executor of the Definitions: None (Dagster's default) unless COMPASS_EXECUTOR=celery."""
    if settings.executor() != "celery":
        return None
    path = settings.celery_config_path()
    return compass_celery_executor.configured(yaml.safe_load(path.read_text())["execution"]["config"],
                                              name="celery")
