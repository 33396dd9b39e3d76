"""`compass clusters describe / export / sample` (issue 30 item 4): what a researcher gets, and one-line errors."""

import json

import numpy as np
import pytest
import yaml

from compass.clusters import Archetype, generate
from pipelines.cli import main

TINY = "n_clusters: 3\ndim: 2\nn_samples: 90\nmax_overlap: 0.01\nmin_overlap: 0.001\n"


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


def test_export_writes_the_data_set_generate_draws(tiny, tmp_path, capsys):
    """The JSONL holds exactly the seeded data set (points and labels). Mutation killed: export drawing with
    seed + 1 (another data set), red."""
    out = tmp_path / "data.jsonl"
    assert main(["clusters", "export", str(tiny), "--out", str(out), "--seed", "3"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    data = generate(Archetype.from_yaml(tiny), 3)
    assert np.allclose([r["x"] for r in rows], data.X) and [r["label"] for r in rows] == data.y.tolist()
    assert "90 points, 3 clusters" in capsys.readouterr().out


def test_describe_reports_requested_and_realised_overlap(tiny, capsys):
    assert main(["clusters", "describe", str(tiny), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    overlap = summary["dataset"]["overlap"]
    assert overlap["requested_max"] == 0.01 and len(overlap["pairs"]) == 3
    assert sum(c["size"] for c in summary["dataset"]["clusters"]) == 90
    assert main(["clusters", "describe", str(tiny)]) == 0
    assert "of 3 pairs outside the band" in capsys.readouterr().out


def test_sample_writes_valid_archetypes(tiny, tmp_path):
    folder = tmp_path / "sampled"
    folder.mkdir()
    assert main(["clusters", "sample", str(tiny), "--n", "4", "--out", str(folder)]) == 0
    files = sorted(folder.glob("*.yaml"))
    assert len(files) == 4 and all(Archetype.from_yaml(f).n_clusters >= 1 for f in files)
    assert yaml.safe_load(files[0].read_text())["max_overlap"] == 0.01


@pytest.mark.parametrize("argv, names", [
    (["describe", "{bad}"], "key 'min_overlap' = 0.05"),
    (["describe", "no_such_archetype"], "no archetype file no_such_archetype.yaml"),
    (["describe", "{missing}"], "missing.yaml: no such archetype file"),
    (["export", "{tiny}", "--out", "{tmp}/no/dir/x.jsonl"], "--out"),
    (["sample", "{tiny}", "--n", "0"], "--n 0"),
    (["describe", "{tiny}", "--seed", "-1"], "--seed -1"),
])
def test_bad_input_is_one_line_and_writes_nothing(tiny, tmp_path, capsys, argv, names):
    """Mutation killed: the commands without their error guard (`set_defaults(func=func)`): a traceback, red."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("n_clusters: 3\nmax_overlap: 0.01\nmin_overlap: 0.05\n")
    subs = {"bad": bad, "tiny": tiny, "missing": tmp_path / "missing.yaml", "tmp": tmp_path}
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert main(["clusters", *[a.format(**subs) for a in argv]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and names in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
