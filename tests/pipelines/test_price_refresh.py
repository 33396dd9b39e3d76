"""Issue 17, a faster price-only refresh that still ends where a clean refresh of the new inputs ends.

Two cases on the ops fixture (real rows): ops_tiny prices its ten models by blended price; ops_nine is the same
case without gpt-4o. gpt-4o's price is cut from 4.375 to 0.1 USD/Mtok. The cut must reach everything a user
reads of ops_tiny (leaderboards, recommendations, changes), leave ops_nine at its catalog (gpt-4o is not in it),
re-read only raw.model_costs, and end equal, table by table, to a cold refresh of the new inputs. Last (it
changes the refreshed warehouse): an edited case field that leaves the measures alone (n_tiers) still reaches the
tiers and the decisions.
"""

import shutil

import dagster as dg
import pandas as pd
import pytest

from pipelines.definitions import defs
from pipelines.refresh import sources_to_read
from resources.warehouse import STAMP_COLUMNS, Warehouse
from tests.paths import FIXTURES
from tests.pipelines.helpers import (
    SOME_SCENARIOS,
    SOURCE_KEYS,
    built_once,
    config_with_extra,
    run_refresh,
    snapshot,
    some_scenarios,
    throwaway_instance,
)

OPS = FIXTURES / "ops"
CUT = "model_id,provider,input_usd_per_mtok,output_usd_per_mtok,source,as_of\ngpt-4o,azure,0.1,0.1,llmstats,2026-11-22\n"
NINE = ["claude-3-5-haiku", "claude-3-5-sonnet", "deepseek-v3", "gemini-1.5-pro", "gpt-4o-mini",
        "llama-3.1-405b-instruct", "llama-3.1-70b-instruct", "mistral-large-2407", "qwen2.5-72b-instruct"]


def _cases(folder):
    folder.mkdir()
    tiny = (OPS / "cases" / "ops_tiny.yaml").read_text()
    (folder / "ops_tiny.yaml").write_text(tiny)
    (folder / "ops_nine.yaml").write_text(tiny.replace("case_id: ops_tiny", "case_id: ops_nine").replace(
        "  min_benchmarks_per_model: 3\n", f"  min_benchmarks_per_model: 3\n  models: {NINE}\n"))
    return folder


def _content(db) -> dict[str, pd.DataFrame]:
    """What a refresh decides: every table but history, without the per-run stamps, sorted."""
    out = {}
    for name, frame in snapshot(db).items():
        if not name.startswith("history."):
            frame = frame.drop(columns=STAMP_COLUMNS, errors="ignore")
            out[name] = frame.sort_values(list(frame.columns)).reset_index(drop=True) if len(frame) else frame
    return out


def _refresh_before_the_cut(root):
    """Both cases (`_cases`) and SOME_SCENARIOS under `root`, a cold refresh of the ops fixture with them in warm/."""
    _cases(root / "cases")
    some_scenarios(root / "scenarios")
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, root / "warm", OPS / "config.yaml",
                                                                cases_env(root)) as instance:
        assert not run_refresh(instance).failed


def cases_env(root) -> dict[str, str]:
    """COMPASS_CASES and COMPASS_SCENARIOS of a folder laid out by `before_the_cut`."""
    return {"COMPASS_CASES": str(root / "cases"), "COMPASS_SCENARIOS": str(root / "scenarios")}


def before_the_cut(tmp_path_factory, dest):
    """A private copy at `dest` of the cold refresh before the cut (cases/, scenarios/, warm/), refreshed once per
    session (`built_once`: this module and tests/live/test_live_price_refresh.py start from it)."""
    shutil.copytree(built_once(tmp_path_factory, "price_before_the_cut", _refresh_before_the_cut), dest)
    return dest


@pytest.fixture(scope="module")
def price_cut(tmp_path_factory):
    """(report of the price-only refresh, its warehouse, the warehouse of a cold refresh of the same inputs)."""
    tmp = before_the_cut(tmp_path_factory, tmp_path_factory.mktemp("price") / "copy")
    (tmp / "cold").mkdir()
    cases = cases_env(tmp)
    config = config_with_extra(OPS / "config.yaml", tmp, [("model_costs", CUT)])
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, tmp / "warm", OPS / "config.yaml", cases) as instance:
        mp.setenv("COMPASS_CONFIG", str(config))
        assert sources_to_read(defs, instance, SOURCE_KEYS) == [dg.AssetKey(["raw", "model_costs"])]
        report = run_refresh(instance)
        runs = {label: _run_of(instance, label) for label in report.materialized}
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, tmp / "cold", config, cases) as instance:
        assert not run_refresh(instance).failed
    return report, runs, Warehouse(tmp / "warm" / "warehouse.duckdb"), tmp / "cold" / "warehouse.duckdb"


def _run_of(instance: dg.DagsterInstance, label: str) -> str:
    """The run of the latest materialization of "key[partition]"."""
    key, _, partition = label.partition("[")
    records = instance.fetch_materializations(dg.AssetRecordsFilter(
        asset_key=dg.AssetKey.from_user_string(key), asset_partitions=[partition.rstrip("]")] if partition else None),
        limit=1).records
    return records[0].run_id


def test_the_new_price_reaches_what_a_user_reads(price_cut):
    _, _, wh, _ = price_cut
    where = {"case_id": "ops_tiny", "scenario": "cost_aware_high"}
    board = wh.read("compass.leaderboards", where).set_index("model_id")
    costs = wh.read("compass.costs", {"case_id": "ops_tiny"}).set_index("model_id")
    assert board.loc["gpt-4o", "raw_cost"] == 0.1  # min over providers of the blended price, 4.375 before
    # scaling: max -> cost = raw / max raw over the case's priced models; score = utility - lam * cost (lam high = 1)
    assert board.loc["gpt-4o", "cost"] == pytest.approx(0.1 / costs["raw_cost"].max())
    assert (board["score"] - (board["utility"] - 1.0 * board["cost"])).abs().max() < 1e-12
    assert list(board.sort_values("rank").index) == list(board.sort_values(["score", "cost"], ascending=[False, True]).index)
    recs = wh.read("compass.recommendations", where).set_index("policy")
    assert recs.loc["mlc_mean_actual_cost", "model_id"] == board.sort_values("rank").index[0]
    changes = wh.read("compass.leaderboard_changes", where).set_index("model_id")
    assert "cost changed 4.375 -> 0.1" in changes.loc["gpt-4o", "detail"]


def test_price_only_refresh_ends_equal_to_a_cold_refresh_of_the_new_inputs(price_cut):
    _, _, wh, cold_db = price_cut
    warm, cold = _content(wh.path), _content(cold_db)
    changes = "compass.leaderboard_changes"  # a cold refresh has no earlier leaderboard to compare with
    assert warm.keys() == cold.keys()
    for table in sorted(set(warm) - {changes}):
        pd.testing.assert_frame_equal(warm[table], cold[table], obj=table)


def test_only_what_the_price_reaches_runs_and_the_decisions_children_share_their_run(price_cut):
    report, runs, _, _ = price_cut
    derived = sorted(k for k in report.materialized if not k.startswith("report/"))
    decisions = ("targets", "recommendations", "leaderboards", "policy_values", "lambda_path", "rank_uncertainty",
                 "leaderboard_changes")
    scenarios = sorted({k.split("|")[1].rstrip("]") for k in derived if "|" in k})
    assert scenarios == sorted(SOME_SCENARIOS)
    # ops_nine's cost side follows its catalog's run (FOLLOWERS), but its unchanged data version stops it there.
    assert derived == sorted(["raw/model_costs", "datasets/model_costs", "compass/case_catalog[ops_nine]",
                              "compass/case_catalog[ops_tiny]", "compass/cost_side[ops_nine]",
                              "compass/cost_side[ops_tiny]", "compass/frontier_sensitivity[ops_tiny]",
                              *(f"compass/{a}[ops_tiny|{s}]" for a in decisions for s in scenarios),
                              # next_evaluations prices cells from its case's own price table (compass.case_prices):
                              # ops_nine's, without gpt-4o, is unchanged, so only ops_tiny's run (issue 49 review)
                              *(f"compass/next_evaluations[ops_tiny|{s}]" for s in scenarios)])
    for case in ("ops_tiny", "ops_nine"):  # the cost side ran in its catalog's run, not a tick later
        assert runs[f"compass/cost_side[{case}]"] == runs[f"compass/case_catalog[{case}]"]
    for s in scenarios:  # rank_uncertainty and leaderboard_changes ran in the decisions' run, not a tick later
        label = f"[ops_tiny|{s}]"
        assert runs[f"compass/rank_uncertainty{label}"] == runs[f"compass/leaderboard_changes{label}"] \
            == runs[f"compass/leaderboards{label}"]
    # catalogs with their cost sides; decisions with their children beside the robustness study; ops_tiny's next
    # evaluations (they do not join the decisions' run: measured, 2026-11-29); the report (a sink: no more)
    assert report.ticks == 4


def test_an_edited_case_field_below_the_measures_reaches_tiers_and_decisions(price_cut):
    _, _, wh, _ = price_cut
    tmp = wh.path.parent.parent
    where = {"case_id": "ops_tiny"}
    assert sorted(wh.read("compass.tiers", where)["tier"].unique()) == [1, 2, 3]
    path = tmp / "cases" / "ops_tiny.yaml"
    path.write_text(path.read_text().replace("\nn_tiers: 3\n", "\nn_tiers: 2\n"))
    config = config_with_extra(OPS / "config.yaml", tmp, [("model_costs", CUT)])
    with pytest.MonkeyPatch.context() as mp, \
            throwaway_instance(mp, tmp / "warm", config, {"COMPASS_CASES": str(tmp / "cases"),
                                                          "COMPASS_SCENARIOS": str(tmp / "scenarios")}) as instance:
        report = run_refresh(instance)
    assert not report.failed
    assert sorted(wh.read("compass.tiers", where)["tier"].unique()) == [1, 2]
    assert {"compass/tiers[ops_tiny]", "compass/leaderboards[ops_tiny|cost_aware_high]"} <= set(report.materialized)
    assert not any("ops_nine" in label for label in report.materialized)
