"""Every `compass` read command answers a mistake (unknown case, scenario, dataset or file; a broken scenario file)
with one line on stderr naming it and the valid choices, exit code 2 and no traceback; a shipped scenario's name
and a scenario file's path are both accepted wherever a scenario is asked for."""

import io
import re

import pandas as pd
import pytest

from pipelines.cli import board_text, main
from tests.pipelines.conftest import compass_small_env

CASE, SCENARIO = "small_open", "cost_aware_low"


@pytest.fixture
def small(compass_small_baseline, monkeypatch):
    root, _ = compass_small_baseline
    for k, v in compass_small_env(root).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("COMPASS_DEBUG", raising=False)
    return root


def one_line_error(capsys, argv: list[str], *named: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    for word in named:
        assert word in err, (word, err)
    return err


def bad_yaml(tmp_path, text: str) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return str(path)


MISTAKES = [
    (["leaderboard", "--case", "nope", "--scenario", SCENARIO], ("'nope'", CASE)),
    (["leaderboard", "--case", CASE, "--scenario", "nope"], ("'nope'", SCENARIO)),
    (["leaderboard", "--case", CASE, "--scenario", "scenarios/nope.yaml"], ("scenarios/nope.yaml", SCENARIO)),
    (["recommend", "--case", "nope", "--scenario", SCENARIO], ("'nope'", CASE)),
    (["recommend", "--case", CASE, "--scenario", "nope"], ("'nope'", SCENARIO)),
    (["recommend", "--case", CASE, "--scenario", "scenarios/nope.yaml"], ("scenarios/nope.yaml", SCENARIO)),
    (["diff", "--case", "nope"], ("'nope'", f"{CASE}/{SCENARIO}")),
    (["oracle", "--dataset", "nope"], ("'nope'", "valid datasets")),
    (["cascade", "--dataset", "nope", "--models", "a,b", "--lambda", "1"], ("'nope'", "valid datasets")),
]


@pytest.mark.parametrize("argv,named", MISTAKES, ids=[" ".join(a[:3]) for a, _ in MISTAKES])
def test_an_unknown_name_is_one_line_naming_it_and_the_choices(small, capsys, argv, named):
    one_line_error(capsys, argv, *named)


@pytest.mark.parametrize("command", ["leaderboard", "recommend"])
@pytest.mark.parametrize("text,named", [("name: x\nlam: [\n", "row 3,"), ("- a list\n", "mapping"),
                                        ("lam: low\n", "name"), ("name: x\nfilters: {colour: red}\n", "colour"),
                                        ("name: x\ntolerance: -0.01\n", "tolerance"),
                                        ("name: x\ntolerance: small\n", "tolerance")])
def test_a_broken_scenario_file_is_one_line_naming_the_file(small, capsys, tmp_path, command, text, named):
    path = bad_yaml(tmp_path, text)
    one_line_error(capsys, [command, "--case", CASE, "--scenario", path], path, named)


def test_a_scenario_file_and_its_shipped_name_give_the_same_recommendation(small, capsys):
    assert main(["recommend", "--case", CASE, "--scenario", SCENARIO]) == 0
    by_name = capsys.readouterr().out
    assert main(["recommend", "--case", CASE, "--scenario", f"scenarios/{SCENARIO}.yaml"]) == 0
    assert capsys.readouterr().out == by_name and by_name.strip()


def test_a_leaderboard_of_a_scenario_file_ranks_like_the_published_one(small, capsys):
    assert main(["leaderboard", "--case", CASE, "--scenario", SCENARIO, "--format", "csv", "--top", "5"]) == 0
    published = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert main(["leaderboard", "--case", CASE, "--scenario", f"scenarios/{SCENARIO}.yaml", "--format", "csv",
                 "--top", "5"]) == 0
    ad_hoc = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert ad_hoc["model_id"].tolist() == published["model_id"].tolist()
    assert published["rank"].head(5).tolist() == [1, 2, 3, 4, 5]  # then the likely rank-1 models below (issue 42)


def test_the_leaderboard_keeps_every_likely_rank_one_below_its_top_rows_and_recommend_states_the_rule(small, capsys):
    """`--top 1` still lists the P(rank 1) leader and every model with P(rank 1) >= 10 %, with their point rank; the
    recommendation names the point leader, the P(rank 1) leader and the cheapest model within the tolerance.
    Mutation: `cmd_leaderboard` back to `board.head(args.top)`: red."""
    from resources.warehouse import Warehouse

    ranks = Warehouse(small / "warehouse.duckdb").read("compass.rank_uncertainty",
                                                       {"case_id": CASE, "scenario": SCENARIO})
    likely = ranks[(ranks["p_rank1"] >= 0.1) | (ranks["p_rank1"] == ranks["p_rank1"].max())]
    assert main(["leaderboard", "--case", CASE, "--scenario", SCENARIO, "--format", "csv", "--top", "1"]) == 0
    shown = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(likely["model_id"]) | {shown["model_id"].iloc[0]} == set(shown["model_id"]) and shown["rank"].iloc[0] == 1
    assert shown.set_index("model_id").loc[likely["model_id"], "rank"].tolist() == likely["rank"].tolist()
    assert main(["recommend", "--case", CASE, "--scenario", SCENARIO]) == 0
    out = capsys.readouterr().out
    assert "decision rule: the cheapest feasible model whose score is within" in out
    for label in ("point leader:", "P(rank 1) leader:", "cheapest within tolerance:"):
        assert label in out


def test_the_table_prints_dollars_and_percentages_never_scientific_notation():
    board = pd.DataFrame({"rank": [1, 2], "model_id": ["a", "b"], "usd_per_mtok": [0.05, 12.5],
                          "usd_per_query": [4.588e-05, 0.0001198], "p_rank1": [0.7, 0.3],
                          "normalized_cost": [2.5e-05, 0.5], "utility": [0.91234567, 0.00001234]})
    text = board_text(board)
    assert "$0.0000459" in text and "$0.000120" in text and "$12.50" in text and "70.0 %" in text
    assert not re.search(r"\de[-+]\d", text), text


@pytest.mark.parametrize("value", ["-0.5", "small"])
def test_a_run_with_a_bad_tolerance_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys, value):
    """`compass run` with a shipped scenario whose `tolerance` is negative or not a number: one line naming the file
    and the key, exit 2, and the refresh never starts (nothing materialized changes). Mutation: `check_scenarios`
    not called in `cmd_run`: red (the refresh starts)."""
    import pipelines.refresh

    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "tight.yaml").write_text(f"name: tight\nlam: low\ntolerance: {value}\n")
    for name, path in {"COMPASS_SCENARIOS": folder, "DAGSTER_HOME": tmp_path / "home",
                       "COMPASS_DB": tmp_path / "w.duckdb"}.items():
        monkeypatch.setenv(name, str(path))

    def refresh(*args, **kwargs):
        raise AssertionError("the refresh started")

    monkeypatch.setattr(pipelines.refresh, "refresh", refresh)
    err = one_line_error(capsys, ["run"], str(folder / "tight.yaml"), "column tolerance", "rejected input")
    assert "warehouse unchanged" in err and not (tmp_path / "w.duckdb").exists()


@pytest.mark.parametrize("kind", ["folder", "not_duckdb"])
def test_a_db_that_is_no_warehouse_is_one_line_at_once(small, capsys, tmp_path, kind):
    """Issue 43: a folder as --db waited ~2 minutes (50 retries of every IO error), then printed a traceback."""
    import time

    db = tmp_path / "warehouse.duckdb"
    db.mkdir() if kind == "folder" else db.write_text("not a database")
    started = time.monotonic()
    one_line_error(capsys, ["--db", str(db), "status"], str(db), "--db")
    assert time.monotonic() - started < 20  # no lock-conflict retries (load 10: a margin for the imports)


def test_jobs_beyond_its_bound_is_refused_naming_the_bound(capsys):
    """Issue 43: --jobs had no upper bound and Python forks every worker of a pool at once."""
    from pipelines.cli import JOBS_PER_CORE
    from pipelines.run_pool import default_jobs

    with pytest.raises(SystemExit) as exit_:
        main(["run", "--jobs", "5000"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"at most {JOBS_PER_CORE * default_jobs()}" in err and "Traceback" not in err


FLAG_MISTAKES = [  # (argv, the flag named); a stratified sample of every numeric flag's out-of-range values
    (["leaderboard", "--case", CASE, "--scenario", SCENARIO, "--top", "-5"], "--top"),  # was: all rows but 5, exit 0
    (["leaderboard", "--case", CASE, "--scenario", SCENARIO, "--top", "0"], "--top"),
    (["cascade", "--dataset", "d", "--models", "a,b", "--lambda", "nan"], "--lambda"),
    (["cascade", "--dataset", "d", "--models", "a,b", "--lambda", "-inf"], "--lambda"),
    (["clusters", "sample", "archetypes/four_clusters_100d_100_samples_each.yaml", "--n", "100000"], "--n"),
    (["clusters", "describe", "archetypes/four_clusters_100d_100_samples_each.yaml", "--seed", "-1"], "--seed"),
    (["match", "--budget", "nan"], "--budget"),
    (["match", "--rounds", "0"], "--rounds"),
    (["match", "--max-lines", "-2"], "--max-lines"),
    (["run", "--jobs", "0"], "--jobs"),
]


@pytest.mark.parametrize("argv,flag", FLAG_MISTAKES, ids=[" ".join(a[:1] + a[-2:]) for a, _ in FLAG_MISTAKES])
def test_a_flag_out_of_its_range_is_one_line_naming_it(small, capsys, argv, flag):
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own refusal
        code = exit_.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and "Traceback" not in err and flag in err.splitlines()[-1], err


@pytest.mark.parametrize("value", ["nan", "-1", "1e9", "abc"])
def test_queue_refresh_timeout_is_a_bounded_number_of_seconds(capsys, value):
    from pipelines.queue_refresh import main as queue_main

    with pytest.raises(SystemExit) as exit_:
        queue_main(["--timeout", value])
    assert exit_.value.code == 2 and "--timeout" in capsys.readouterr().err
