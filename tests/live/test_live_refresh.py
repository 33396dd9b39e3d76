"""Issue 36: refreshes that fetch the public catalogs themselves. A local server (127.0.0.1) serves LiveBench's
2026-06-25 release as upstream publishes it and a LiteLLM price JSON cut from the real one; the catalog is the
embedded one from before that release (tests/fixtures/live_catalog). Each test starts from a copy of one refresh of the older
LiveBench version."""

import shutil

import dagster as dg
import pandas as pd
import pytest

from assets.live_sources import FETCH_KEY
from compass.ingest.load import MATCH_THRESHOLD
from resources.warehouse import Warehouse
from tests.live.server import serve
from tests.live.world import LIVEBENCH_URL, SNAPSHOTS, serve_litellm, serve_livebench, write_config
from tests.pipelines.helpers import run_refresh, throwaway_instance

OLD, NEW = "2026-07-23", "2026-08-22"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """(server, the folder refreshed once from the older LiveBench version, that refresh's report)."""
    tmp = tmp_path_factory.mktemp("live")
    site = tmp / "site"
    serve_livebench(site, OLD)
    serve_litellm(site)
    with serve(site, slow_s=1.5) as server:
        base = tmp / "base"
        base.mkdir()
        config = write_config(base, server.url())
        with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, base, config, {}) as instance:
            report = run_refresh(instance)
        assert not report.failed and not report.source_failures
        yield server, base, report


@pytest.fixture
def copy(world, tmp_path, monkeypatch):
    """A private copy of the refreshed world and its own copy of the served site: (instance, folder, site, server)."""
    server, base, _ = world
    folder, site = tmp_path / "copy", tmp_path / "site"
    shutil.copytree(base, folder)
    shutil.copytree(server.root, site)
    server.root, server.modes = site, {}
    try:
        with throwaway_instance(monkeypatch, folder, folder / "config.yaml", {}) as instance:
            yield instance, folder, site, server
    finally:
        server.root = base.parent / "site"


def _raw(folder, table: str, source: str | None = None) -> pd.DataFrame:
    frame = Warehouse(folder / "warehouse.duckdb").read(f"raw.{table}")
    frame = frame if source is None else frame[frame["source"] == source]
    return frame.sort_values(list(frame.columns[:3])).reset_index(drop=True)


def test_the_first_refresh_brings_in_new_models_and_holds_back_near_misses(world):
    _, base, report = world
    fetches = _raw(base, "fetches")
    assert set(fetches["status"]) == {200} and len(fetches) == 4  # table, categories, cost file; the price JSON
    assert fetches["sha256"].str.len().eq(64).all() and all((base / "raw" / s).exists() for s in fetches["sha256"])
    names = _raw(base, "unmatched_names").set_index("raw_name")
    models = set(_raw(base, "models")["model_id"])
    scores = _raw(base, "benchmark_scores", "livebench")
    # new models (no candidate at the threshold) enter under their canonical ids, effort variants collapsed
    assert names.loc["gpt-5.6-sol-max", ["status", "model_id"]].tolist() == ["new", "gpt-5.6-sol"]
    assert names.loc["claude-opus-5-high-effort", ["status", "model_id"]].tolist() == ["new", "claude-opus-5"]
    assert {"gpt-5.6-sol", "claude-opus-5"} <= models
    opus = set(scores.loc[scores["model_id"] == "claude-opus-5", "variant"])
    assert opus and opus <= {"claude-opus-5-high-effort", "claude-opus-5-xhigh-effort", "claude-opus-5-max-effort"}
    # near misses are held back with their candidates, never merged: no row carries their spelling
    held = names[names["status"] == "pending"]
    assert held.loc["xai/grok-4.20-0309-non-reasoning", "best_candidate"] == "grok-4.20-beta-0309-non-reasoning"
    assert held["similarity"].ge(MATCH_THRESHOLD).all() and held["candidates"].notna().all()
    # another tier is no candidate (issue 48): flash-lite enters as its own model, not held as a near miss of flash
    assert names.loc["gemini-3.5-flash-lite-high", ["status", "model_id"]].tolist() == ["new", "gemini-3.5-flash-lite"]
    assert not scores["variant"].isin(held.index).any()
    assert not _raw(base, "model_costs", "litellm")["variant"].isin(held.index).any()
    # a price list never brings a model in
    assert names.loc["claude-sonnet-5-5", "status"] in ("pending", "unmatched") and "claude-sonnet-5-5" not in models
    assert "raw/benchmark_scores" in report.materialized


def test_a_second_refresh_gets_304s_and_materializes_nothing_downstream(copy):
    instance, folder, _, _ = copy
    run_refresh(instance)  # the copy's files have new paths: its raw tables are read once again
    before = {t: _raw(folder, t) for t in ("models", "benchmark_scores", "model_costs")}
    report = run_refresh(instance)
    assert report.materialized == [FETCH_KEY.to_user_string()] and not report.failed
    log = _raw(folder, "fetches")
    assert list(log.sort_values("fetched_at")["status"].tail(8)) == [304] * 8
    for table, frame in before.items():
        pd.testing.assert_frame_equal(_raw(folder, table), frame, obj=table)


def test_a_newer_snapshot_updates_exactly_the_rows_that_changed_and_brings_in_new_models(copy):
    instance, folder, site, _ = copy
    before = _raw(folder, "benchmark_scores", "livebench")
    serve_livebench(site, NEW)
    report = run_refresh(instance)
    assert not report.failed and "raw/benchmark_scores" in report.materialized
    after = _raw(folder, "benchmark_scores", "livebench")
    # what changed upstream, read straight from the two release tables: (model spelling, task) -> new score
    old, new = (pd.read_csv(SNAPSHOTS / "livebench" / v / "table_2026_06_25.csv").set_index("model") for v in (OLD, NEW))
    both = old.index.intersection(new.index)
    changed = {(m, t) for m in both for t in old.columns if t in new.columns
               and not (pd.isna(old.at[m, t]) and pd.isna(new.at[m, t])) and old.at[m, t] != new.at[m, t]}
    assert changed  # the README: 13 rows rescored on the agentic tasks
    tasks = lambda f: f[f["benchmark"].str.startswith("livebench_task_")].assign(  # noqa: E731
        task=lambda t: t["benchmark"].str.removeprefix("livebench_task_"))
    merged = tasks(before).merge(tasks(after), on=["model_id", "variant", "task"], suffixes=("_old", "_new"))
    moved = merged[merged["score_old"] != merged["score_new"]]
    # a model's row is its best-scoring spelling's: a changed cell of the spelling it keeps moves it, no other does
    kept = set(zip(merged["variant"], merged["task"]))
    assert set(zip(moved["variant"], moved["task"])) == changed & kept
    assert (moved["score_new"] * 100).round(4).tolist() == [round(new.at[v, t], 4)
                                                            for v, t in zip(moved["variant"], moved["task"])]
    untouched = {m for m in both if not any(c[0] == m for c in changed)}
    steady = merged[merged["variant"].isin(untouched)]
    assert len(steady) > 400 and (steady["score_old"] == steady["score_new"]).all()
    added = set(new.index) - set(old.index)
    names = _raw(folder, "unmatched_names").set_index("raw_name")
    arrived = {n for n in added if names.get("status", pd.Series()).get(n) == "new"}
    assert arrived and arrived <= set(after["variant"]) and not arrived & set(before["variant"])
    gone = set(old.index) - set(new.index)
    assert not set(after["variant"]) & gone


@pytest.mark.parametrize("failure, message", [
    ("500", "HTTP 500"), ("slow", "timed out"), ("truncate", "truncated"), ("renamed", "'model'")])
def test_a_failing_source_keeps_its_rows_and_the_others_refresh(copy, failure, message):
    instance, folder, site, server = copy
    before = _raw(folder, "benchmark_scores", "livebench")
    serve_litellm(site, {"gpt-4o": {"input_cost_per_token": 1e-07}}, mtime=1_786_500_000)
    if failure == "renamed":  # upstream renames a column of the release table
        table = site / LIVEBENCH_URL
        table.write_text(table.read_text().replace("model,", "model_name,", 1))
    else:
        server.modes["/" + LIVEBENCH_URL] = failure
    report = run_refresh(instance)
    assert not report.failed
    (line,) = report.source_failures
    assert line.startswith("source livebench (http://127.0.0.1:") and LIVEBENCH_URL in line and message in line
    assert "keeping the data fetched" in line
    pd.testing.assert_frame_equal(_raw(folder, "benchmark_scores", "livebench"), before)  # stamps included
    costs = _raw(folder, "model_costs", "litellm").set_index(["model_id", "provider"])
    assert costs.loc[("gpt-4o", "openai"), "input_usd_per_mtok"] == pytest.approx(0.1)
    stale = instance.get_latest_materialization_event(FETCH_KEY).asset_materialization.metadata["stale_sources"]
    assert LIVEBENCH_URL in stale.value
    check = dg.AssetCheckKey(FETCH_KEY, "sources_fresh")  # stale_after_hours: 0 in this world's config
    (last,) = instance.event_log_storage.get_asset_check_execution_history(check, limit=1)
    evaluation = last.event.dagster_event.event_specific_data
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN



def test_an_aliases_line_makes_the_next_refresh_merge_a_held_back_name(copy):
    instance, folder, _, _ = copy
    near_miss, catalog_id = "xai/grok-4.20-0309-non-reasoning", "grok-4.20-beta-0309-non-reasoning"
    assert not (_raw(folder, "model_costs", "litellm")["model_id"] == catalog_id).any()
    with open(folder / "aliases.csv", "a") as aliases:
        aliases.write(f"{near_miss},{catalog_id}\n")
    report = run_refresh(instance)
    assert not report.failed and "raw/model_costs" in report.materialized
    costs = _raw(folder, "model_costs", "litellm").set_index("model_id")
    assert costs.loc[catalog_id, "variant"] == near_miss and costs.loc[catalog_id, "input_usd_per_mtok"] == 1.25
    names = _raw(folder, "unmatched_names")
    assert near_miss not in set(names["raw_name"])  # confirmed: no longer listed
    assert (_raw(folder, "model_aliases").query("alias == @near_miss")["model_id"] == catalog_id).all()


def test_the_report_page_lists_the_held_back_names_and_the_new_models(world):
    from pipelines.report.pages.sources import sources_body

    _, base, _ = world
    page = sources_body(Warehouse(base / "warehouse.duckdb"))
    verdict = page.split('<p class="verdict">')[1].split("</p>")[0]
    names = _raw(base, "unmatched_names")
    pending, new = (int((names["status"] == s).sum()) for s in ("pending", "new"))
    assert verdict == (f"2 live source(s), all fetched; {new} new model name(s) brought in, {pending} held back for a "
                       "person to confirm.")
    assert "xai/grok-4.20-0309-non-reasoning" in page and "grok-4.20-beta-0309-non-reasoning" in page


def test_a_bad_canonical_file_leaves_every_table_unchanged_live_fetches_included(copy):
    """Issue 43: rejected input stops the refresh before raw.fetches and raw.unmatched_names are written (the fetch
    asset used to publish them before the canonical files were validated)."""
    from compass.ingest.errors import IngestError
    from tests.pipelines.helpers import assert_same_tables, snapshot

    instance, folder, site, _ = copy
    run_refresh(instance)  # the copy's files have new paths: its raw tables are read once again
    serve_livebench(site, NEW)  # new upstream bytes: the fetch log and the held-back names would change
    bad = folder / "bad_scores.csv"
    bad.write_text("model_id,benchmark,score,score_scale\ngpt-4o,mmlu,2.5,fraction\n")
    config = folder / "config.yaml"
    config.write_text(config.read_text() + f"  - {{table: benchmark_scores, path: {bad}}}\n")
    before = snapshot(folder / "warehouse.duckdb")
    with pytest.raises(IngestError, match="score"):
        run_refresh(instance)
    assert_same_tables(snapshot(folder / "warehouse.duckdb"), before)


def test_a_kill_inside_the_live_fetch_recovers_to_a_clean_refresh(copy, tmp_path):
    """Issue 43: `compass run` SIGKILLed at its first warehouse commit, the live fetch's (raw.fetches with the newer
    upstream already staged on disk): nothing of it is published, and the next refresh ends equal to a clean refresh
    of the same upstream, every table but the fetch log itself (its times, and 304s where the staged files' validators
    were kept)."""
    import os
    import signal
    import subprocess
    import sys

    from tests.paths import ROOT
    from tests.pipelines.helpers import decided, same

    instance, folder, site, _ = copy
    run_refresh(instance)  # the copy's files have new paths: its raw tables are read once again
    serve_livebench(site, NEW)
    clean = tmp_path / "clean"
    shutil.copytree(folder, clean)
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, clean, clean / "config.yaml", {}) as fresh:
        assert not run_refresh(fresh).failed
    after = decided(clean / "warehouse.duckdb")
    before = decided(folder / "warehouse.duckdb")

    def staged() -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted((folder / "connectors").rglob("*"))
                if p.is_file()}

    staged_before = staged()
    hooks = ROOT / "tests" / "pipelines" / "subprocess_hooks"
    env = {**os.environ, "COMPASS_KILL_AT_COMMIT": "1", "PYTHONPATH": os.pathsep.join([str(hooks), str(ROOT)])}
    killed = subprocess.run([sys.executable, "-m", "pipelines.cli", "run"], env=env, cwd=folder, capture_output=True,
                            text=True, timeout=600, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert staged() != staged_before  # the kill came after the fetch had staged the newer upstream, in its write
    crashed = decided(folder / "warehouse.duckdb")
    assert same(crashed["raw.fetches"], before["raw.fetches"])  # killed inside the fetch's own write
    assert all(same(crashed[t], before[t]) for t in before), [t for t in before if not same(crashed[t], before[t])]

    report = run_refresh(instance)
    assert not report.failed and not report.source_failures
    recovered = decided(folder / "warehouse.duckdb")
    assert recovered.keys() == after.keys()
    assert [t for t in after if t != "raw.fetches" and not same(recovered[t], after[t])] == []
    assert recovered["raw.fetches"]["error"].isna().all()
