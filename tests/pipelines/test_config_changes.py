"""An edited cluster archetype file asks for its own clusters/benchmark partition again (issue 13: archetypes are
configuration, like cases, scenarios and users); a new file is not a change, and an untouched one asks nothing."""

import dagster as dg

from pipelines.config_changes import ARCHETYPE_ROOTS, config_digests, config_requests, save_digests

TINY = "n_clusters: 3\ndim: 2\nn_samples: 60\nmax_overlap: 0.01\nmin_overlap: 0.001\n"


def test_an_edited_archetype_reruns_only_its_benchmark(tmp_path, monkeypatch):
    folder, empty = tmp_path / "archetypes", tmp_path / "empty"
    folder.mkdir()
    empty.mkdir()
    for var in ("COMPASS_CASES", "COMPASS_SCENARIOS", "COMPASS_USERS"):
        monkeypatch.setenv(var, str(empty))
    monkeypatch.setenv("COMPASS_ARCHETYPES", str(folder))
    (folder / "tiny.yaml").write_text(TINY)
    (folder / "other.yaml").write_text(TINY)
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as instance:
        save_digests(instance, config_digests())
        assert config_requests(instance) == []
        (folder / "tiny.yaml").write_text(TINY.replace("n_samples: 60", "n_samples: 80"))
        (folder / "new.yaml").write_text(TINY)
        assert config_requests(instance) == [("tiny", ARCHETYPE_ROOTS)]
