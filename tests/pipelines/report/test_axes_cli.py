"""A coding assistant picked by named axis, as a new user would (issue 48 item 2): a scenario file with
`axes: {coding: 1}` recommends the model strongest on the catalog's coding benchmarks, `axis_floors` keeps only the
models at or above the floor, a mistake in either key is one line naming it (exit 2, nothing changes), and
`recommend` names what the measures C1, C2 are.

The catalog is compass_small (hf_* benchmarks, what the case's measures are built from) plus the real LMArena
coding and HumanEval rows of its models (tests/fixtures/axes/coding_scores.csv, extracted from raw.benchmark_scores
of the 2026-11-28 refresh): 9 models have a coding score, llama-3.1-70b-instruct the highest (lmarena_coding 1259).
"""

import hashlib
import shutil

import duckdb
import pandas as pd
import pytest

from pipelines.cli import main
from tests.paths import FIXTURES
from tests.pipelines.conftest import compass_small_env
from tests.pipelines.report.test_cli_mistakes import bad_yaml, one_line_error

CASE = "small_open"
CODING_ROWS = FIXTURES / "axes" / "coding_scores.csv"
CODING_LEADER = "llama-3.1-70b-instruct"


@pytest.fixture(scope="module")
def catalog(compass_small_baseline, tmp_path_factory):
    """A copy of the compass_small warehouse whose catalog also holds the coding rows."""
    root, _ = compass_small_baseline
    db = tmp_path_factory.mktemp("axes") / "warehouse.duckdb"
    shutil.copy(root / "warehouse.duckdb", db)
    rows = pd.read_csv(CODING_ROWS)  # noqa: F841 (read by the SQL below)
    with duckdb.connect(str(db)) as con:
        con.execute("insert into raw.benchmark_scores by name select * from rows")
    return root, db


@pytest.fixture
def small(catalog, monkeypatch):
    root, db = catalog
    for k, v in {**compass_small_env(root), "COMPASS_DB": str(db)}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("COMPASS_DEBUG", raising=False)
    return db


def recommend(capsys, tmp_path, text: str) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    assert main(["recommend", "--case", CASE, "--scenario", str(path)]) == 0
    return capsys.readouterr().out


def recommended(out: str) -> str:
    line = next(x for x in out.splitlines() if x.startswith("recommended: "))
    return line.split()[1]


def test_a_coding_assistant_weighted_on_the_coding_axis_gets_the_strongest_coder(small, capsys, tmp_path):
    """`axes: {coding: 1}` at λ 0.5 recommends the model with the highest coding score, utility 1.000 (the top of
    the min-max scale: its 0.5 x normalized cost 0.498 is less than the next coders' lead in coding), names the
    coding benchmarks it read and the models it could not rank; the case's own utility, same scenario without
    `axes`, picks another model (granite-3.1-8b-instruct). Mutation: `with_axes` keeping the case's
    utility (the axis weights ignored): red (the case utility's pick, granite-3.1-8b-instruct)."""
    out = recommend(capsys, tmp_path, "name: coding_assistant\nlam: 0.5\naxes: {coding: 1}\n")
    assert recommended(out) == CODING_LEADER, out
    assert f"recommended: {CODING_LEADER} (utility 1.000" in out
    assert "utility: scenario axes coding=1 (1 benchmarks: lmarena_coding)" in out
    assert "not ranked on axes: 33 model(s) observed on no benchmark of coding" in out
    general = recommend(capsys, tmp_path, "name: general_assistant\nlam: 0.5\n")
    assert recommended(general) != CODING_LEADER, general


def test_an_axis_floor_keeps_only_the_models_at_or_above_it(small, capsys, tmp_path):
    """`axis_floors: {coding: 0.6}` under the case's utility: of the 9 models with a coding score those scaled
    below 0.6 (5: command-r 0.49, granite-3.1-2b 0.58, llama-3.2-1b, smollm2, llama-2-7b) are left out and said to
    be; the pick is one of the 4 others. Mutation: the floors ignored in `with_axes`: red (on the note; the case
    utility's pick, llama-3.1-70b-instruct, happens to clear the floor)."""
    out = recommend(capsys, tmp_path, "name: coding_floor\nlam: 0\naxis_floors: {coding: 0.6}\n")
    assert "axis floors (coding >= 0.6) leave out 5 model(s) (command-r, granite-3.1-2b-instruct, " in out, out
    assert recommended(out) in {"aya-expanse-32b", "granite-3.1-8b-instruct", CODING_LEADER, "llama-3.1-8b-instruct"}


def test_recommend_names_the_measures_from_their_loadings(small, capsys, tmp_path):
    """Under the recommendation, each measure with its label and one-line summary (compass.measure_names): on
    compass_small C1 loads on BBH, MuSR, GPQA (reasoning 59 %), C2 on IFEval alone. Mutation: the legend left out
    of `cmd_recommend`: red."""
    out = recommend(capsys, tmp_path, "name: coding_assistant\nlam: 0\naxes: {coding: 1}\n")
    legend = out[out.index("\nmeasures:\n"):].strip().splitlines()[1:]
    assert [line.split(":")[0].strip() for line in legend] == ["C1 = reasoning", "C2 = instruction following"]
    assert all("share of its squared loadings by skill" in line for line in legend)


def test_an_axis_the_case_has_no_benchmark_for_is_one_line_saying_so(small, capsys, tmp_path):
    """compass_small has no agentic benchmark: `axes: {agentic: 1}` is refused for the case, one line, exit 2."""
    path = bad_yaml(tmp_path, "name: agent\naxes: {agentic: 1}\n")
    one_line_error(capsys, ["recommend", "--case", CASE, "--scenario", path], "no benchmark of axis agentic")


@pytest.mark.parametrize("text,key", [
    ("axes: {cooking: 1}", "axes.cooking"),
    ("axes: {coding: lots}", "axes.coding"),
    ("axes: {coding: -1}", "axes.coding"),
    ("axis_floors: {coding: 1.5}", "axis_floors.coding"),
    ("axis_floors: {maths: -0.1}", "axis_floors.maths"),
    ("axes: {coding: 1}\nutility: {weights: {C1: 1}}", "axes"),
])
def test_a_bad_axis_is_one_line_naming_the_key_and_nothing_changes(small, capsys, tmp_path, text, key):
    before = hashlib.sha256(small.read_bytes()).hexdigest()
    path = bad_yaml(tmp_path, f"name: x\n{text}\n")
    err = one_line_error(capsys, ["recommend", "--case", CASE, "--scenario", path], path, f"column {key}:")
    assert hashlib.sha256(small.read_bytes()).hexdigest() == before, err
