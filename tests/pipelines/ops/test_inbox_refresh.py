"""Inbox sensor + refresh + leaderboard diff on a throw-away instance (real rows, tests/fixtures/ops).

One module-scoped instance, refreshed from the fixture's ten models (a copy of the session's clean ops refresh,
`conftest.ops_clean_root`), is refreshed again after an inbox delivery that adds an eleventh model (gpt-4.1-mini,
with its scores and price) and cuts gpt-4o's price. Dagster runs are slow on small machines, so the tests share that
state and run in file order.
"""

import json
import shutil

import dagster as dg
import pytest

from pipelines import cli
from pipelines.definitions import defs
from pipelines.refresh import refresh
from pipelines.sensors import inbox_sensor
from resources.configs import scenario_files
from resources.warehouse import Warehouse, WarehouseResource
from tests.paths import FIXTURES
from tests.pipelines.conftest import ops_clean_env, ops_clean_root
from tests.pipelines.helpers import SOURCE_KEYS, assert_same_tables, snapshot, throwaway_instance

FIXTURE = FIXTURES / "ops"
NEW_MODEL = "gpt-4.1-mini"
# gpt-4o's Azure row (source llmstats) at 0.1 USD/Mtok instead of 2.5 / 10: same key, so it overrides.
PRICE_CUT = ("model_id,provider,input_usd_per_mtok,output_usd_per_mtok,source,as_of\n"
             "gpt-4o,azure,0.1,0.1,llmstats,2026-11-22\n")
BAD_SCORES = ("model_id,benchmark,score,score_scale\n"
              "gpt-4o,gpqa_diamond,0.5,fraction\n"
              "gpt-4o,math_level_5,1.7,fraction\n")


@pytest.fixture(scope="module")
def ops_env(tmp_path_factory):
    """(instance, db, inbox, accepted) after a first refresh of the ops fixture (a private copy of the session's
    `conftest.ops_clean_root`)."""
    root, tmp = ops_clean_root(tmp_path_factory), tmp_path_factory.mktemp("ops")
    work, inbox, accepted = tmp / "work", tmp / "inbox", tmp / "accepted"
    shutil.copytree(root / "clean", work)
    inbox.mkdir()
    env = {**ops_clean_env(root), "COMPASS_INBOX": str(inbox), "COMPASS_ACCEPTED": str(accepted)}
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, work, FIXTURE / "config.yaml", env) as instance:
        yield instance, work / "warehouse.duckdb", inbox, accepted


def _evaluate(instance, cursor=None):
    context = dg.build_sensor_context(instance=instance, cursor=cursor,
                                      resources={"warehouse": WarehouseResource()})
    return inbox_sensor(context)


def test_rejected_file_leaves_the_warehouse_byte_identical(ops_env):
    instance, db, inbox, accepted = ops_env
    before = snapshot(db)
    (inbox / "benchmark_scores_bad.csv").write_text(BAD_SCORES)
    result = _evaluate(instance)
    assert result.run_requests == [] and result.skip_reason is not None
    assert not (inbox / "benchmark_scores_bad.csv").exists()
    assert (inbox / "rejected" / "benchmark_scores_bad.csv").exists()
    report = (inbox / "rejected" / "benchmark_scores_bad.csv.error.txt").read_text()
    assert "benchmark_scores_bad.csv: row 2, column score: score outside the range" in report
    assert not (accepted / "benchmark_scores").exists()
    assert_same_tables(before, snapshot(db))
    # After the first refresh every leaderboard's diff says there is nothing to compare yet.
    first = before["compass.leaderboard_changes"]
    assert len(first) == len(scenario_files()) and set(first["change"]) == {"none"}
    high = first.loc[first["scenario"] == "cost_aware_high", "detail"].item()
    assert high == "no earlier version of this leaderboard"


def test_accepted_delivery_runs_once_then_refresh_adds_the_model(ops_env):
    instance, db, inbox, accepted = ops_env
    for f in (FIXTURE / "inbox").iterdir():
        shutil.copy(f, inbox / f.name)
    (inbox / "model_costs_gpt-4o_cut.csv").write_text(PRICE_CUT)
    result = _evaluate(instance)
    [request] = result.run_requests
    assert request.run_key.startswith("inbox-")
    assert request.asset_selection == [dg.AssetKey(["raw", t]) for t in ("models", "benchmark_scores", "model_costs")]
    assert sorted(p.name for p in (accepted / "model_costs").iterdir()) == [
        "model_costs_2026-11-22.csv", "model_costs_gpt-4o_cut.csv"]
    assert [p.name for p in inbox.iterdir() if p.is_file()] == []
    assert len(json.loads(result.cursor)["applied"]) == 4
    # Second evaluation with the new cursor: nothing to do. A re-delivered identical file is not re-applied.
    assert _evaluate(instance, result.cursor).run_requests == []
    shutil.copy(FIXTURE / "inbox" / "models_2026-11-22.csv", inbox / "models_again.csv")
    again = _evaluate(instance, result.cursor)
    assert again.run_requests == []
    assert "already applied" in (inbox / "rejected" / "models_again.csv.error.txt").read_text()

    report = refresh(defs, instance, SOURCE_KEYS)
    assert not report.failed, report.failed
    wh = Warehouse(db)
    assert NEW_MODEL in set(wh.read("compass.measures", {"case_id": "ops_tiny"})["model_id"])
    board = wh.read("compass.leaderboards", {"case_id": "ops_tiny", "scenario": "pure_capability"})
    assert NEW_MODEL in set(board["model_id"]) and len(board) == 11
    assert wh.query("select blended_usd_per_mtok from raw.model_costs where model_id = 'gpt-4o'").iloc[0, 0] == 0.1
    touched = [k for k in report.materialized if not k.startswith("raw/")]
    assert "compass/measures[ops_tiny]" in touched
    # Reached along two paths (the measures chain and the new price), each decision partition runs once, last.
    chain = [f"compass/{a}[ops_tiny]" for a in ("measures", "tiers", "ces_shape", "cost_side")]
    assert [touched.count(k) for k in chain] == [1, 1, 1, 1]
    assert [touched.index(k) for k in chain] == sorted(touched.index(k) for k in chain)
    boards = [k for k in touched if k.startswith("compass/leaderboards[")]
    assert sorted(boards) == sorted(set(boards)) and len(boards) == len(scenario_files())
    assert min(touched.index(k) for k in boards) > touched.index("compass/cost_side[ops_tiny]")
    # No cascade/oracle partition exists in this fixture: tests (d) and test_units cover that lineage.


def test_leaderboard_changes_list_the_price_cut_with_its_reason(ops_env, capsys):
    _, db, _, _ = ops_env
    wh = Warehouse(db)
    changes = wh.read("compass.leaderboard_changes", {"case_id": "ops_tiny", "scenario": "cost_aware_high"})
    moves = changes[changes["change"] == "rank_move"].set_index("model_id")
    # gpt-4o: raw 4.375 -> 0.1 USD/Mtok; it was 9th of 10 under lam = 1.
    assert moves.loc["gpt-4o", "old_rank"] == 9 and moves.loc["gpt-4o", "new_rank"] < 9
    assert "cost changed 4.375 -> 0.1" in moves.loc["gpt-4o", "detail"]
    new = changes[changes["change"] == "new_model"]
    assert list(new["model_id"]) == [NEW_MODEL] and new["detail"].iloc[0] == "new model"
    assert cli.main(["diff", "--case", "ops_tiny", "--scenario", "cost_aware_high"]) == 0
    out = capsys.readouterr().out
    assert "== ops_tiny / cost_aware_high:" in out and "gpt-4o" in out and "cost changed 4.375 -> 0.1" in out
