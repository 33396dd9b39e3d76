"""A refresh with cases that cannot rank: one teaching paragraph per failure, no stack trace on the console, a
closing line naming only what failed; the other cases, and a scenario skipped for a case, still complete."""

import contextlib
import shutil

import pytest

from pipelines.cli import main
from resources.warehouse import Warehouse
from tests.paths import FIXTURES, ROOT

OPS = FIXTURES / "ops"
NO_UTILITY = """case_id: zz_nouti
description: no utility section
benchmarks: {include: [gpqa_diamond, math_level_5, otis_mock_aime], min_models_per_benchmark: 5, min_benchmarks_per_model: 3}
cost: {table: model_costs, column: blended_usd_per_mtok, provider_aggregate: min, scaling: max}
n_factors: 1
"""
FEW_ROWS = NO_UTILITY.replace("zz_nouti", "zz_fewrows").replace("no utility section", "no outcome rows") + (
    "utility: {source: query_records, datasets: [mmlu_pro], context: category, min_rows_per_group: 100}\n")


@pytest.fixture(scope="module")
def refusal_run(tmp_path_factory):
    """`compass run` on the ops fixture with ops_tiny and the two cases above; one scenario of the paper's and one
    whose person weights name C2, which these one-measure cases lack. Yields (exit code, stdout, stderr, db, cwd)."""
    tmp = tmp_path_factory.mktemp("refusals")
    (tmp / "cases").mkdir()
    shutil.copy(OPS / "cases" / "ops_tiny.yaml", tmp / "cases")
    (tmp / "cases" / "zz_nouti.yaml").write_text(NO_UTILITY)
    (tmp / "cases" / "zz_fewrows.yaml").write_text(FEW_ROWS)
    (tmp / "scenarios").mkdir()
    shutil.copy(ROOT / "scenarios" / "cost_aware_low.yaml", tmp / "scenarios")
    (tmp / "scenarios" / "mine.yaml").write_text("name: mine\nlam: low\nutility: {weights: {C1: 0.5, C2: 0.5}}\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        for name, value in {"DAGSTER_HOME": tmp / "home", "COMPASS_DB": tmp / "warehouse.duckdb",
                            "COMPASS_CONFIG": OPS / "config.yaml", "COMPASS_CASES": tmp / "cases",
                            "COMPASS_SCENARIOS": tmp / "scenarios"}.items():
            mp.setenv(name, str(value))
        out, err = tmp / "stdout.txt", tmp / "stderr.txt"
        with open(out, "w") as o, open(err, "w") as e, contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
            code = main(["run"])
        yield code, out.read_text(), err.read_text(), Warehouse(tmp / "warehouse.duckdb"), tmp


def test_the_closing_line_names_only_the_failed_assets(refusal_run):
    code, _, err, _, _ = refusal_run
    assert code == 1
    assert "failed (2): compass/utilities[zz_fewrows], compass/utilities[zz_nouti]\n" in err
    waiting = next(line for line in err.splitlines() if line.startswith("not run because of those failures"))
    assert "compass/targets[zz_nouti|*]" in waiting and "compass/leaderboards[zz_fewrows|*]" in waiting
    assert "tiers" not in waiting and "ops_tiny" not in waiting


def test_each_refusal_is_one_teaching_paragraph_and_no_stack_trace(refusal_run):
    _, out, err, _, cwd = refusal_run
    assert "Traceback" not in out + err and "dagster - DEBUG" not in out + err
    nouti = next(line for line in err.splitlines() if line.startswith("compass/utilities[zz_nouti]: "))
    assert "case zz_nouti: cannot rank models without a utility" in nouti
    assert "`utility: {source: weights, weights: {C1: 1}}` (this case's measures: C1)" in nouti
    few = next(line for line in err.splitlines() if line.startswith("compass/utilities[zz_fewrows]: "))
    assert "query_records of dataset(s) ['mmlu_pro']) has no rows for models with measures (0 rows in all)" in few
    assert "at least 100 outcome rows" in few
    assert "Stack Trace" in (cwd / "logs" / "run.log").read_text()  # the traces went to the log beside the warehouse


def test_other_cases_complete_and_a_person_scenario_is_skipped_not_failed(refusal_run):
    _, out, _, wh, _ = refusal_run
    boards = wh.read("compass.leaderboards")
    assert set(boards["case_id"]) == {"ops_tiny"} and set(boards["scenario"]) == {"cost_aware_low"}
    assert set(wh.read("compass.tiers")["case_id"]) == {"ops_tiny", "zz_nouti", "zz_fewrows"}
    changes = wh.read("compass.leaderboard_changes", {"case_id": "ops_tiny", "scenario": "mine"})
    assert changes["detail"].iloc[0].startswith("scenario mine: its utility weights name ['C2'], which case ops_tiny lacks")
    assert out.count("\n") < 60
