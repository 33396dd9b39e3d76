"""The resolver on labelled cross-source name pairs: precision >= 0.99, recall >= 0.90 (issue 42, item 3)."""

from __future__ import annotations

import sys
from pathlib import Path

from compass.ingest.name_pairs import read_pairs, score

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "names" / "cross_source_pairs.csv"
sys.path.insert(0, str(ROOT / "scripts"))

import mlcompass_source_join  # noqa: E402


def test_fixture_is_large_mixed_and_cross_source():
    pairs = read_pairs(FIXTURE.read_text(), str(FIXTURE))
    assert len(pairs) >= 100
    assert pairs["same_model"].sum() >= 40 and (pairs["same_model"] == 0).sum() >= 40
    assert (pairs["source_a"] != pairs["source_b"]).mean() >= 0.9
    assert pairs[["source_a", "source_b"]].stack().nunique() >= 8


def test_resolver_precision_and_recall_on_the_fixture():
    s = score(read_pairs(FIXTURE.read_text(), str(FIXTURE)))
    assert s.precision >= 0.99, s
    assert s.recall >= 0.90, s


def test_a_duplicate_pair_is_bad_input_named_by_file_and_key(tmp_path, capsys):
    lines = FIXTURE.read_text().splitlines()
    a, sa, b, sb, *rest = lines[1].split(",")
    bad = tmp_path / "pairs.csv"
    bad.write_text("\n".join([*lines[:3], ",".join([b, sb, a, sa, *rest])]) + "\n")  # row 1 again, reversed
    assert mlcompass_source_join.main(["--pairs", str(bad), "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(bad) in err and "row 3" in err and f"{sa}:{a}" in err and "duplicate" in err
