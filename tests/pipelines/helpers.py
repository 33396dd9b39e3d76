"""Shared helpers for pipeline tests: run a refresh, read materializations, snapshot tables,
a throw-away Dagster instance + warehouse."""

import dataclasses
import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from pipelines.definitions import defs
from pipelines.partitions import sync_dynamic_partitions
from pipelines.refresh import RERUN_TAG, RefreshReport, refresh, run_selection, unfinished_runs
from resources import readers
from resources.warehouse import Warehouse
from tests.paths import ROOT

SOURCE_KEYS = [k for k in defs.resolve_asset_graph().materializable_asset_keys if k.path[0] == "raw"]


def run_refresh(instance: dg.DagsterInstance, multiprocess: bool = False) -> RefreshReport:
    return refresh(defs, instance, SOURCE_KEYS, multiprocess=multiprocess)


# Two of the shipped scenarios: a module that needs no more saves the other three's decision partitions (one
# Dagster run each) in every refresh.
SOME_SCENARIOS = ["cost_aware_high", "pure_capability"]


def some_scenarios(folder: Path) -> Path:
    """A scenario folder (for COMPASS_SCENARIOS) with SOME_SCENARIOS."""
    folder.mkdir()
    for name in SOME_SCENARIOS:
        shutil.copy(ROOT / "scenarios" / f"{name}.yaml", folder)
    return folder


def snapshot(db) -> dict[str, pd.DataFrame]:
    """Every table of the warehouse, sorted, for byte-level comparisons."""
    wh = Warehouse(db)
    with wh.reading():  # one connection for every table (one each: ~6x slower)
        tables = wh.query(
            "select table_schema || '.' || table_name as t from information_schema.tables "
            "where table_catalog = 'warehouse' order by 1"
        )["t"]
        out = {}
        for t in tables:
            frame = wh.query(f"select * from {t}")
            out[t] = frame.sort_values(list(frame.columns)).reset_index(drop=True) if len(frame) else frame
    return out


def decided(db) -> dict[str, pd.DataFrame]:
    """Tables without the per-run stamps (run_id, refreshed_at), deduplicated: what a refresh decides."""
    out = {}
    for name, frame in snapshot(db).items():
        frame = frame.drop(columns=["run_id", "refreshed_at"], errors="ignore").drop_duplicates()
        out[name] = frame.sort_values(list(frame.columns)).reset_index(drop=True) if len(frame) else frame
    return out


def same(a: pd.DataFrame | None, b: pd.DataFrame | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(a.equals(b))


def pending_reruns(instance: dg.DagsterInstance) -> list[str]:
    """Runs an interrupted or killed refresh left for the next one to re-run (refresh.RERUN_TAG)."""
    return [r.run_id for r in instance.get_runs(dg.RunsFilter(tags={RERUN_TAG: "pending"}))]


def recover(db, after: dict[str, pd.DataFrame]) -> tuple[int, int]:
    """The next refresh (environment already pointed at `db`) re-runs what an interrupted or killed one left and ends
    equal to a clean refresh (`after`, from `decided`), nothing left unfinished or to re-run; returns how many runs
    were unfinished and how many marked to re-run before it."""
    with dg.DagsterInstance.get() as instance:
        left = len(unfinished_runs(instance)), len(pending_reruns(instance))
        report = run_refresh(instance)
        assert report.failed == [] and unfinished_runs(instance) == [] and pending_reruns(instance) == []
    recovered = decided(db)
    assert recovered.keys() == after.keys()
    for table in after:
        assert same(recovered[table], after[table]), table
    return left


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan may wait for a PID 1 that does not reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def assert_same_tables(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    assert a.keys() == b.keys()
    for t in a:
        pd.testing.assert_frame_equal(a[t], b[t], check_dtype=True, obj=t)


def config_with_extra(config, tmp, extra: list[tuple[str, str]]):
    """A copy of a fixture config (paths made absolute) plus extra (table, csv text) sources after it."""
    from pathlib import Path

    config, tmp = Path(config), Path(tmp)
    lines = config.read_text().replace("path: ", f"path: {config.parent}/")
    for i, (table, text) in enumerate(extra):
        path = tmp / f"extra_{table}_{i}.csv"
        path.write_text(text)
        lines += f"  - {{table: {table}, path: {path}}}\n"
    out = tmp / "config_extra.yaml"
    out.write_text(lines)
    return out


def use_folder(mp: pytest.MonkeyPatch, folder: Path, config: Path, env: Mapping[str, str | None]) -> None:
    """Point the environment at `folder`, laying it out first if new: dagster_home/ with the repo's dagster.yaml, an
    empty no_cases/ (no ML Compass case partitions). `mp` sets DAGSTER_HOME, COMPASS_DB (folder/warehouse.duckdb),
    COMPASS_CONFIG (`config`), COMPASS_CASES, then `env` (None deletes a variable), and changes into `folder`;
    undoing is left to `mp`'s owner."""
    home = folder / "dagster_home"
    if not home.exists():
        home.mkdir(parents=True)
        shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
        (folder / "no_cases").mkdir()
    mp.setenv("DAGSTER_HOME", str(home))
    mp.setenv("COMPASS_DB", str(folder / "warehouse.duckdb"))
    mp.setenv("COMPASS_CONFIG", str(config))
    mp.setenv("COMPASS_CASES", str(folder / "no_cases"))
    for name, value in env.items():
        if value is None:
            mp.delenv(name, raising=False)
        else:
            mp.setenv(name, value)
    mp.chdir(folder)


@contextmanager
def throwaway_instance(mp: pytest.MonkeyPatch, folder: Path, config: Path,
                       env: Mapping[str, str | None]) -> Iterator[dg.DagsterInstance]:
    """The Dagster instance of `folder`, with `mp` pointing the environment at it (`use_folder`)."""
    use_folder(mp, folder, config, env)
    with dg.DagsterInstance.from_config(str(folder / "dagster_home")) as instance:
        yield instance


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder that `build` fills once per test session, whichever pytest-xdist worker asks first: the others wait
    on a file lock, then reuse it. Read-only for its users (copy it before changing anything)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, above the workers' own
    folder = base / f"shared_{name}"
    with open(base / f"shared_{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".complete").touch()
    return folder


def save_report(report: RefreshReport, folder: Path) -> None:
    (folder / "refresh_report.json").write_text(json.dumps(dataclasses.asdict(report)))


def load_report(folder: Path) -> RefreshReport:
    return RefreshReport(**json.loads((folder / "refresh_report.json").read_text()))


def materialize_branch(instance: dg.DagsterInstance, branch: list[dg.AssetKey], datasets: list[str] | None = None,
                       raw_tables: list[str] | None = None) -> list[str]:
    """Raw sources (all, or `raw_tables`), the unpartitioned extracts the branch reads (datasets/model_costs),
    then the `branch` assets for each dataset partition (default: every dataset of the warehouse); other groups
    are not run. Returns the datasets."""
    raw = SOURCE_KEYS if raw_tables is None else [dg.AssetKey(["raw", t]) for t in raw_tables]
    run_selection(defs, instance, raw, None, False)
    graph = defs.resolve_asset_graph()
    extracts = sorted({p for k in branch for p in graph.get(k).parent_keys
                       if p.path[0] != "raw" and graph.get(p).partitions_def is None})
    if extracts:
        run_selection(defs, instance, extracts, None, False)
    sync_dynamic_partitions(instance)
    chosen = datasets or readers.datasets(Warehouse())
    for dataset in chosen:
        run_selection(defs, instance, branch, dataset, False)
    return chosen


def branch_fixtures(name: str, config: Path, env: Mapping[str, str | None], materialize):
    """The three fixtures of a branch's tests: `baseline` (a folder with `materialize(instance)` run once per session,
    `built_once`),
    `materialized` (module: the baseline read-only, (instance, db path, folder)) and `<name>_env` (a private copy
    of the baseline that a test may modify, (instance, db path))."""

    def build(folder: Path) -> None:
        with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, folder, config, env) as instance:
            materialize(instance)

    @pytest.fixture(scope="session", name="baseline")
    def baseline(tmp_path_factory) -> Path:
        return built_once(tmp_path_factory, f"{name}_baseline", build)

    @pytest.fixture(scope="module", name="materialized")
    def materialized(baseline):
        with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, baseline, config, env) as instance:
            yield instance, baseline / "warehouse.duckdb", baseline

    @pytest.fixture(name=f"{name}_env")
    def private_copy(baseline, tmp_path, monkeypatch):
        work = tmp_path / "copy"
        shutil.copytree(baseline, work)
        with throwaway_instance(monkeypatch, work, config, env) as instance:
            yield instance, work / "warehouse.duckdb"

    return baseline, materialized, private_copy
