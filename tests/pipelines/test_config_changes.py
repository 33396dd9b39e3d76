"""An edited cluster archetype file asks for its own clusters/benchmark partition again (issue 13: archetypes are
configuration, like cases, scenarios and users); a new file is not a change, and an untouched one asks nothing.
An edited case file asks for every asset of its case and its decision partitions, not only those reading the
benchmarks (a new `eps` changes the tiers, not the measures above them)."""

import shutil

import dagster as dg

from pipelines.config_changes import (ARCHETYPE_ROOTS, DECISIONS, case_assets, config_digests, config_requests,
                                      save_digests)
from pipelines.definitions import defs
from tests.paths import ROOT

TINY = "n_clusters: 3\ndim: 2\nn_samples: 60\nmax_overlap: 0.01\nmin_overlap: 0.001\n"
FOLDERS = ("COMPASS_CASES", "COMPASS_SCENARIOS", "COMPASS_USERS", "COMPASS_ARCHETYPES")


def only_folder(tmp_path, monkeypatch, var: str):
    """A fresh folder for the configuration kind `var`; every other kind's folder empty."""
    folder, empty = tmp_path / var.lower(), tmp_path / "empty"
    folder.mkdir()
    empty.mkdir()
    for other in FOLDERS:
        monkeypatch.setenv(other, str(folder if other == var else empty))
    (tmp_path / "home").mkdir()
    return folder


def test_an_edited_archetype_reruns_only_its_benchmark(tmp_path, monkeypatch):
    folder = only_folder(tmp_path, monkeypatch, "COMPASS_ARCHETYPES")
    (folder / "tiny.yaml").write_text(TINY)
    (folder / "other.yaml").write_text(TINY)
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as instance:
        save_digests(instance, config_digests())
        assert config_requests(instance, []) == []
        (folder / "tiny.yaml").write_text(TINY.replace("n_samples: 60", "n_samples: 80"))
        (folder / "new.yaml").write_text(TINY)
        assert config_requests(instance, []) == [("tiny", ARCHETYPE_ROOTS)]


def test_an_edited_case_reruns_its_whole_case_and_its_decisions(tmp_path, monkeypatch):
    cases = only_folder(tmp_path, monkeypatch, "COMPASS_CASES")
    for name in ("frontier_api", "open_mmlu_pro"):
        shutil.copy(ROOT / "cases" / f"{name}.yaml", cases)
    keys = case_assets(defs.resolve_asset_graph())
    assert {"compass/tiers", "compass/cost_side", "compass/measures"} <= {k.to_user_string() for k in keys}
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as instance:
        instance.add_dynamic_partitions("scenario", ["pure_capability", "cost_aware_low"])
        save_digests(instance, config_digests())
        path = cases / "frontier_api.yaml"
        assert "\neps: 0.05\n" in path.read_text()
        path.write_text(path.read_text().replace("\neps: 0.05\n", "\neps: 0.02\n"))
        assert config_requests(instance, keys) == [
            ("frontier_api", keys), ("frontier_api|pure_capability", DECISIONS),
            ("frontier_api|cost_aware_low", DECISIONS)]
