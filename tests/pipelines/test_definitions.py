"""`dagster definitions validate` passes from the repository root (pyproject's [tool.dagster])."""

import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT


def test_dagster_definitions_validate(tmp_path):
    dagster = Path(sys.executable).with_name("dagster")
    done = subprocess.run([str(dagster), "definitions", "validate"], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": str(dagster.parent), "DAGSTER_HOME": str(tmp_path), "HOME": str(tmp_path)},
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation successful" in done.stdout + done.stderr


def test_shared_attributes_are_applied_to_every_asset():
    """Definitions apply the shared attributes once: the refresh condition on every derived asset (none on the
    raw sources and live/fetches, which the refresh and the schedule run; the report's own at the end), the kinds,
    and one partition per backfill run."""
    import dagster as dg

    from assets.automation import FOLLOW_CONDITION, REFRESH_CONDITION, REPORT_CONDITION
    from pipelines.definitions import ASSETS, FOLLOWERS, KINDS, PER_PARTITION

    specs = [(a, spec) for a in ASSETS for spec in a.specs]
    conditions = {"raw": None, "live": None, "report": REPORT_CONDITION}
    followers = {key for a in FOLLOWERS for key in a.keys}
    assert followers == {dg.AssetKey(["compass", "rank_uncertainty"]), dg.AssetKey(["compass", "leaderboard_changes"]),
                         dg.AssetKey(["compass", "cost_side"]), dg.AssetKey(["compass", "next_evaluations"])}
    for asset, spec in specs:
        expected = FOLLOW_CONDITION if spec.key in followers else conditions.get(spec.key.path[0], REFRESH_CONDITION)
        assert spec.automation_condition is expected, spec.key
        assert set(spec.kinds) == KINDS, spec.key
        assert asset.backfill_policy == (PER_PARTITION if asset.partitions_def else None), spec.key
    assert {spec.key.path[0] for _, spec in specs} >= {"raw", "compass", "datasets", "oracle", "cascade"}
    assert dg.AssetKey(["compass", "leaderboards"]) in {spec.key for _, spec in specs}


def test_every_asset_and_check_has_a_description():
    """The Dagster UI shows each asset's description; an asset without one fails here, named."""
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    missing = [k.to_user_string() for k in graph.get_all_asset_keys() if not (graph.get(k).description or "").strip()]
    assert missing == []
    checks = [c for c in defs.asset_checks or [] for c in c.check_specs if not (c.description or "").strip()]
    assert [c.key for c in checks] == []


def test_the_report_site_is_the_last_asset_and_depends_on_what_it_shows():
    """report/site has no children, and a new leaderboard, oracle, cascade or cluster result re-runs it."""
    import dagster as dg

    from pipelines.definitions import defs

    node = defs.resolve_asset_graph().get(dg.AssetKey(["report", "site"]))
    assert node.child_keys == set()
    assert {dg.AssetKey(k) for k in (["compass", "leaderboard_changes"], ["compass", "rank_uncertainty"],
                                     ["oracle", "estimates"], ["cascade", "curves"], ["clusters", "benchmark"])} \
        <= node.parent_keys
