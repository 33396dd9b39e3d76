"""Archetype validation (§5.1 rules): a bad value is an error naming the file, the key and the value."""

from pathlib import Path

import pytest
import yaml

from compass.clusters.archetype import Archetype, ArchetypeError
from tests.paths import ROOT

SHIPPED = sorted((ROOT / "archetypes").glob("*.yaml"))


def test_the_six_mock_benchmark_archetypes_ship_as_in_the_thesis():
    """§5.4's six archetypes, verbatim."""
    got = {p.stem: Archetype.from_yaml(p) for p in SHIPPED}
    assert len(got) == 6
    a = got["twelve_different_distributions_high_class_imbalance"]
    assert (a.n_clusters, a.dim, a.n_samples, a.imbalance_ratio, a.max_overlap, a.min_overlap) == (12, 2, 1200, 5, 0.05, 0.001)
    assert a.distributions == ("normal", "exponential", "gamma", "weibull", "lognormal")
    b = got["seven_highly_separated_10d_very_different_shapes"]
    assert (b.dim, b.aspect_maxmin, b.max_overlap, b.min_overlap, b.mode) == (10, 3.0, 1e-4, 1e-5, "lda")
    c = got["four_clusters_100d_1000_samples_each"]
    assert (c.n_samples, c.aspect_ref, c.aspect_maxmin, c.name) == (4000, 1.0, 1.0, "four_clusters_100d_1000_samples_each")


@pytest.mark.parametrize("key,value,words", [
    ("min_overlap", 0.2, "min_overlap < max_overlap"),
    ("max_overlap", 0.0, "(0, 1]"),
    ("aspect_maxmin", 0.5, ">= 1"),
    ("radius_maxmin", 0.9, ">= 1"),
    ("imbalance_ratio", -2, ">= 1"),
    ("aspect_ref", 0.8, ">= 1"),
    ("distributions", ["normal", "cauchy"], "unknown distribution"),
    ("n_clusters", -3, "positive"),
    ("n_samples", 0, "positive"),
    ("n_clusters", 2.5, "whole number"),
    ("dim", "two", "expected a number"),
    ("n_clust", 3, "unknown parameter"),
    ("overlap_mode", "exact", "one of"),
])
def test_a_bad_archetype_names_file_key_and_value(tmp_path, key, value, words):
    path = Path(tmp_path) / "bad.yaml"
    spec = {"n_clusters": 3, "max_overlap": 0.1, "min_overlap": 0.01, key: value}
    path.write_text(yaml.safe_dump(spec))
    with pytest.raises(ArchetypeError) as err:
        Archetype.from_yaml(path)
    message = str(err.value)
    shown = "cauchy" if key == "distributions" else value  # the offending element, not the whole list
    assert str(path) in message and repr(key) in message and repr(shown) in message and words in message
    assert err.value.key == key


def test_n_samples_below_n_clusters_and_unparsable_yaml(tmp_path):
    with pytest.raises(ArchetypeError, match="n_samples"):
        Archetype.from_dict({"n_clusters": 5, "n_samples": 4}, "x.yaml")
    (tmp_path / "broken.yaml").write_text("n_clusters: [1,\n")
    with pytest.raises(ArchetypeError, match="line 2: malformed YAML"):
        Archetype.from_yaml(tmp_path / "broken.yaml")
    with pytest.raises(ArchetypeError, match="<root>"):
        Archetype.from_dict(["n_clusters", 3], "list.yaml")


def test_defaults_and_overlap_mode_follow_table_5_1():
    a = Archetype()
    assert (a.n_clusters, a.dim, a.n_samples, a.max_overlap, a.min_overlap, a.packing) == (6, 2, 500, 0.05, 1e-3, 0.1)
    assert a.mode == "lda" and Archetype(n_clusters=101, dim=100, n_samples=202).mode == "c2c"
    assert Archetype.from_dict(a.to_dict()) == a
