"""Throw-away Dagster instances + warehouses, fed by small real-data configs, refreshed once per session and copied."""

import shutil

import dagster as dg
import pytest

from tests.paths import FIXTURES, ROOT

TINY_CONFIG = FIXTURES / "tiny" / "config.yaml"


def _refresh_tiny(folder) -> None:
    from tests.pipelines.helpers import run_refresh, save_report, throwaway_instance

    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, folder, TINY_CONFIG, {}) as instance:
        save_report(run_refresh(instance), folder)


def tiny_copy(tmp_path_factory, dest):
    """A private copy at `dest` of the tiny fixture refreshed once per session (`built_once`), laid out as
    `helpers.use_folder` expects."""
    from tests.pipelines.helpers import built_once

    shutil.copytree(built_once(tmp_path_factory, "tiny", _refresh_tiny), dest)
    return dest


@pytest.fixture
def tiny_refreshed(tmp_path_factory, tmp_path, monkeypatch):
    """A throw-away Dagster instance and warehouse after one refresh of the tiny fixture (a `tiny_copy`), the
    environment pointed at it: (instance, warehouse path, RefreshReport of that refresh)."""
    from tests.pipelines.helpers import load_report, throwaway_instance

    work = tiny_copy(tmp_path_factory, tmp_path / "tiny")
    with throwaway_instance(monkeypatch, work, TINY_CONFIG, {}) as instance:
        yield instance, work / "warehouse.duckdb", load_report(work)


COMPASS_SMALL = FIXTURES / "compass_small"


def compass_small_env(root) -> dict[str, str]:
    """Environment of a compass_small folder (data/, home/, warehouse.duckdb under `root`)."""
    data = root / "data"
    return {"DAGSTER_HOME": str(root / "home"), "COMPASS_DB": str(root / "warehouse.duckdb"),
            "COMPASS_CONFIG": str(data / "config.yaml"), "COMPASS_CASES": str(data / "cases"),
            "COMPASS_SCENARIOS": str(data / "scenarios")}


def _refresh_compass_small(root) -> None:
    from tests.pipelines.helpers import run_refresh, save_report

    shutil.copytree(COMPASS_SMALL, root / "data")
    (root / "home").mkdir()
    shutil.copy(ROOT / "dagster.yaml", root / "home")
    with pytest.MonkeyPatch.context() as mp:
        for k, v in compass_small_env(root).items():
            mp.setenv(k, v)
        with dg.DagsterInstance.from_config(str(root / "home")) as instance:
            save_report(run_refresh(instance), root)


@pytest.fixture(scope="session")
def compass_small_baseline(tmp_path_factory):
    """compass_small refreshed once per session (`built_once`: shared by the xdist workers), read-only for the
    modules that start from it (copy it before changing anything). Yields (folder, RefreshReport)."""
    from tests.pipelines.helpers import built_once, load_report

    root = built_once(tmp_path_factory, "compass_small", _refresh_compass_small)
    return root, load_report(root)


OPS = FIXTURES / "ops"


def _refresh_ops_clean(root) -> None:
    from tests.pipelines.helpers import run_refresh, some_scenarios, throwaway_instance

    some_scenarios(root / "scenarios")
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, root / "clean", OPS / "config.yaml",
                                                                ops_clean_env(root)) as instance:
        assert not run_refresh(instance).failed
        steps = sum(len(instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START))
                    for run in instance.get_runs())
    (root / "steps.txt").write_text(str(steps))


def ops_clean_root(tmp_path_factory):
    """A clean cold refresh of the ops fixture (its one case, SOME_SCENARIOS), once per session (`built_once`:
    test_interrupts, test_crash_recovery and test_inbox_refresh start from it), read-only: the refreshed folder
    `clean/` (laid out as `helpers.use_folder` expects), `scenarios/` and `steps.txt` (how many steps its runs
    started)."""
    from tests.pipelines.helpers import built_once

    return built_once(tmp_path_factory, "ops_clean", _refresh_ops_clean)


def ops_clean_env(root) -> dict[str, str]:
    """The environment (cases, scenarios) of the ops refresh at `root` (`ops_clean_root`)."""
    return {"COMPASS_CASES": str(OPS / "cases"), "COMPASS_SCENARIOS": str(root / "scenarios")}


def ops_clean(tmp_path_factory):
    """(config, environment, what the clean ops refresh decides, how many steps its runs started)."""
    from tests.pipelines.helpers import decided

    root = ops_clean_root(tmp_path_factory)
    return (OPS / "config.yaml", ops_clean_env(root), decided(root / "clean" / "warehouse.duckdb"),
            int((root / "steps.txt").read_text()))
