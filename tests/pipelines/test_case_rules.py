"""A case file whose benchmark rule leaves no benchmark, or no model to rank: `compass run` exits 2 with one line
naming the file and the key, no traceback, and nothing already materialized changes (compass_small fixture)."""

import contextlib
import io
import shutil

import pytest

from pipelines.cli import main
from resources.warehouse import Warehouse
from tests.pipelines.conftest import compass_small_env

NO_BENCHMARK = """case_id: zz_empty
description: a rule that matches nothing
benchmarks: {choose_by: coverage, include: ["hf_no_such_*"], min_models_per_benchmark: 5, min_benchmarks_per_model: 2}
cost: {table: models, column: params_b, scaling: max}
utility: {source: weights, weights: {C1: 1}}
n_factors: 1
"""


NOTHING_TO_RANK = NO_BENCHMARK.replace("zz_empty", "zz_unranked").replace('["hf_no_such_*"]', '["*"]').replace(
    "min_benchmarks_per_model: 2}", "min_benchmarks_per_model: 2, min_benchmarks_to_rank: 999}")


@pytest.mark.parametrize("text, key, says", [
    (NO_BENCHMARK, "benchmarks.include", "leaves no benchmark"),
    (NOTHING_TO_RANK, "benchmarks.min_benchmarks_to_rank", "999 leaves no model to rank"),
])
def test_a_rule_that_leaves_no_benchmark_stops_the_run_with_exit_2(tmp_path, compass_small_baseline, text, key, says):
    root = tmp_path / "copy"
    shutil.copytree(compass_small_baseline[0], root)
    bad = root / "data" / "cases" / "zz_bad.yaml"
    bad.write_text(text)
    wh = Warehouse(root / "warehouse.duckdb")
    tables = ["compass.loadings", "compass.measures", "compass.leaderboards", "compass.case_benchmarks"]
    before = {t: wh.read(t) for t in tables}
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        for k, v in compass_small_env(root).items():
            mp.setenv(k, v)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["run"])
    assert code == 2
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err.getvalue()
    assert str(bad) in lines[0] and f"column {key}" in lines[0] and says in lines[0], lines[0]
    for table, frame in before.items():
        assert wh.read(table).equals(frame), table
