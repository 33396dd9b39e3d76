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
    raw sources, which the refresh and the schedule run), the kinds, and one partition per backfill run."""
    import dagster as dg

    from assets.automation import REFRESH_CONDITION
    from pipelines.definitions import ASSETS, KINDS, PER_PARTITION

    specs = [(a, spec) for a in ASSETS for spec in a.specs]
    for asset, spec in specs:
        raw = spec.key.path[0] == "raw"
        assert spec.automation_condition is (None if raw else REFRESH_CONDITION), spec.key
        assert set(spec.kinds) == KINDS, spec.key
        assert asset.backfill_policy == (PER_PARTITION if asset.partitions_def else None), spec.key
    assert {spec.key.path[0] for _, spec in specs} >= {"raw", "compass", "datasets", "oracle", "cascade"}
    assert dg.AssetKey(["compass", "leaderboards"]) in {spec.key for _, spec in specs}
