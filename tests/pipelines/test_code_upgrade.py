"""Code upgrades recompute (issue 43 item 6): after a package upgrade changes one asset's code version, a refresh of
an existing warehouse re-materializes every partition of that asset and, beyond it, only what its new data
versions reach; a refresh without the upgrade re-materializes nothing (compass_small fixture)."""

import shutil

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.refresh import refresh
from tests.pipelines.conftest import compass_small_env
from tests.pipelines.helpers import SOURCE_KEYS

# Mid-graph, one partition per case (seven children); a decision, one partition per case x scenario.
UPGRADES = [dg.AssetKey(["compass", "utilities"]), dg.AssetKey(["compass", "leaderboards"])]


def upgraded(key: dg.AssetKey) -> dg.Definitions:
    """`defs` with `key`'s code version changed, as a new release of the package would change it."""
    def bump(spec: dg.AssetSpec) -> dg.AssetSpec:
        return spec.replace_attributes(code_version=f"{spec.code_version}+upgrade") if spec.key == key else spec

    assets = [a.map_asset_specs(bump) if isinstance(a, dg.AssetsDefinition) and key in a.keys else a
              for a in defs.assets]
    return dg.Definitions(assets=assets, asset_checks=defs.asset_checks, jobs=defs.jobs, sensors=defs.sensors,
                          resources=defs.resources)


def ran(report) -> dict[dg.AssetKey, set[str]]:
    """The partitions each derived asset materialized in a refresh (the raw sources of a copied folder are read
    again: their files' paths changed)."""
    out: dict[dg.AssetKey, set[str]] = {}
    for label in report.materialized:
        key, _, partition = label.partition("[")
        if key.startswith("raw/"):
            continue
        out.setdefault(dg.AssetKey(key.split("/")), set()).add(partition.rstrip("]"))
    return out


def reached(graph, key: dg.AssetKey) -> set[dg.AssetKey]:
    """What a code change of `key` may re-materialize: the assets of its op (a multi-asset that cannot subset
    writes all of them) and every asset below them."""
    found = set(graph.get(key).assets_def.keys)
    frontier = list(found)
    while frontier:
        frontier = [child for k in frontier for child in graph.get(k).child_keys if child not in found]
        found.update(frontier)
    return found


@pytest.fixture
def copied(tmp_path, compass_small_baseline, monkeypatch):
    """A copy of a materialized warehouse and its Dagster home: the user's state before the upgrade."""
    root = tmp_path / "copy"
    shutil.copytree(compass_small_baseline[0], root)
    for k, v in compass_small_env(root).items():
        monkeypatch.setenv(k, v)
    return root


@pytest.mark.parametrize("upgrade", UPGRADES, ids=lambda key: key.path[-1])
def test_a_code_version_change_reruns_that_asset_and_only_what_its_new_data_reaches(copied, upgrade):
    new_defs = upgraded(upgrade)
    graph = new_defs.resolve_asset_graph()
    with dg.DagsterInstance.from_config(str(copied / "home")) as instance:
        assert ran(refresh(defs, instance, SOURCE_KEYS, jobs=1)) == {}  # up to date: nothing to redo
        partitions = set(instance.get_materialized_partitions(upgrade))
        report = refresh(new_defs, instance, SOURCE_KEYS, jobs=1)
        first = ran(report)
        assert first.get(upgrade) == partitions and partitions, first
        assert len(report.materialized) == len(set(report.materialized)), report.materialized  # each once
        assert set(first) <= reached(graph, upgrade), sorted(k.to_user_string() for k in first)
        assert ran(refresh(new_defs, instance, SOURCE_KEYS, jobs=1)) == {}  # handled once, not on every refresh


def test_an_upgrade_is_seen_without_the_automation_cursor(copied):
    """The sensor cursor holds the last evaluation per condition node: an upgrade that also changes the refresh
    condition (or a home whose cursor is gone) has none to compare with, yet the upgraded asset must re-run."""
    upgrade = UPGRADES[0]
    (copied / "home" / "compass_automation_sensor_cursor").unlink()
    with dg.DagsterInstance.from_config(str(copied / "home")) as instance:
        partitions = set(instance.get_materialized_partitions(upgrade))
        first = ran(refresh(upgraded(upgrade), instance, SOURCE_KEYS, jobs=1))
    assert first.get(upgrade) == partitions and partitions, first
