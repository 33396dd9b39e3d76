"""pipelines.stack's two graphs without a stack: the environment the stack's processes get decides what they
refresh, whatever the caller's shell holds (issue 44's ratio is about `make run`'s default graph)."""

import os

import pytest

from pipelines.stack import FIXTURES, REMOTE_STEPS, Stack
from resources import settings

CALLER = {"COMPASS_SMOKE": "1", "COMPASS_HEAVY": "1", "COMPASS_CONFIG": "/elsewhere/config.yaml",
          "COMPASS_CASES": "/elsewhere/cases", "COMPASS_REMOTE_STEPS": "compass/models", "COMPASS_ORACLE_N_BOOT": "3"}


@pytest.fixture
def settings_under(monkeypatch, tmp_path):
    """`settings` as a process of the stack `graph` reads them, with the caller's shell holding CALLER."""
    def under(graph: str):
        for key, value in CALLER.items():
            monkeypatch.setenv(key, value)
        env = Stack(root=tmp_path, graph=graph, ports={"postgres": 1, "redis": 2, "code-server": 3}).env()
        for key in [k for k in list(os.environ) if k.startswith("COMPASS_")]:
            monkeypatch.delenv(key)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        return env
    return under


def test_the_default_graph_is_make_runs(settings_under):
    """Embedded data, default cases/scenarios/archetypes/users, light studies, every step on the warehouse host, no
    stage: red when the caller's COMPASS_* variables reach the stack (they did before: os.environ was copied whole)
    or when the default graph keeps the fixture's inputs."""
    env = settings_under("default")
    assert settings.config_path() is None
    assert settings.case_dirs() == [settings.CASE_DIR] and settings.scenario_dirs() == [settings.SCENARIO_DIR]
    assert settings.archetype_dirs() == [settings.ARCHETYPE_DIR] and settings.user_dirs() == [settings.USER_DIR]
    assert settings.synthetic_study_size() == "light" and settings.oracle_n_boot() == settings.DEFAULT_ORACLE_N_BOOT
    assert settings.remote_steps() == frozenset() and settings.publish_from() is None
    assert env["COMPASS_WRITE_LOG"] and env["COMPASS_EXECUTOR"] == "celery"


def test_the_fixture_graph_is_the_checks(settings_under, tmp_path):
    """The check's graph: the small fixture copied under the stack, smoke-size studies, the remote steps on the
    stage. Red when the fixture's inputs are dropped for the default graph's."""
    settings_under("fixture")
    assert settings.config_path() == str(tmp_path / "data" / "config.yaml")
    assert settings.archetype_dirs() == [FIXTURES / "no_archetypes"]
    assert settings.synthetic_study_size() == "smoke" and settings.oracle_n_boot() == settings.DEFAULT_ORACLE_N_BOOT
    assert settings.remote_steps() == frozenset(REMOTE_STEPS) and settings.publish_from() == str(tmp_path / "stage")


def test_a_loaded_stack_keeps_its_graph(tmp_path):
    """`Stack.load` (the stack tests, `stop`) reads the graph from stack.json: a loaded default-graph stack gives its
    processes' environment, not the fixture's. Red when the graph is not saved or not loaded."""
    Stack(root=tmp_path, graph="default", ports={"postgres": 1, "redis": 2, "code-server": 3})._save()
    loaded = Stack.load(tmp_path)
    assert loaded.graph == "default" and "COMPASS_CONFIG" not in loaded.env()
