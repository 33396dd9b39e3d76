"""What to measure next, end to end (issue 49 items 3-4): the ops fixture (ten real models, three Epoch AI Hub
benchmarks, a structural case) with four of its cells withheld is refreshed once; compass.next_evaluations
suggests exactly the withheld cells of the board, `compass next-evals` prints them and refuses bad flags; a scores
file answering them with a malformed value is rejected (file, row, column) and changes nothing; the true scores
through the inbox and one refresh recompute only what raw/benchmark_scores reaches, and the board shows the pick's
P(rank 1) and rank interval before and after. One module-scoped instance, tests in file order.

Mutations applied by hand, each red: the asset not reading the previous suggestions (`answered` on an empty frame);
the cells' predictive sd replaced by 0 in `read_inputs` (the point imputation: nothing suggested)."""

import shutil

import dagster as dg
import pandas as pd
import pytest

from pipelines import cli
from pipelines.definitions import defs
from pipelines.refresh import refresh
from pipelines.report.next_evaluations import next_evaluations_section
from pipelines.sensors import inbox_sensor
from resources.warehouse import Warehouse, WarehouseResource
from tests.paths import FIXTURES, ROOT
from tests.pipelines.helpers import SOURCE_KEYS, assert_same_tables, snapshot

FIXTURE = FIXTURES / "ops"
CASE, SCENARIO = "ops_tiny", "pure_capability"
WITHHELD = [("deepseek-v3", "otis_mock_aime"), ("gemini-1.5-pro", "otis_mock_aime"),
            ("qwen2.5-72b-instruct", "math_level_5"), ("claude-3-5-sonnet", "gpqa_diamond")]


@pytest.fixture(scope="module")
def loop_env(tmp_path_factory):
    """(instance, db, inbox, truth of the withheld cells) after a first refresh without the withheld cells."""
    tmp = tmp_path_factory.mktemp("next_evals")
    data, home, inbox, scenarios = tmp / "data", tmp / "dagster_home", tmp / "inbox", tmp / "scenarios"
    for folder in (data / "cases", home, inbox, scenarios):
        folder.mkdir(parents=True)
    for name in ("models.csv", "model_costs.csv", "config.yaml"):
        shutil.copy(FIXTURE / name, data / name)
    scores = pd.read_csv(FIXTURE / "benchmark_scores.csv")
    held = scores.set_index(["model_id", "benchmark"]).index.isin(WITHHELD)
    scores[~held].to_csv(data / "benchmark_scores.csv", index=False)
    case = (FIXTURE / "cases" / "ops_tiny.yaml").read_text().replace("min_benchmarks_per_model: 3",
                                                                      "min_benchmarks_per_model: 2")
    (data / "cases" / "ops_tiny.yaml").write_text(case)
    shutil.copy(ROOT / "scenarios" / f"{SCENARIO}.yaml", scenarios)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {"DAGSTER_HOME": home, "COMPASS_DB": tmp / "warehouse.duckdb",
                           "COMPASS_CONFIG": data / "config.yaml", "COMPASS_CASES": data / "cases",
                           "COMPASS_SCENARIOS": scenarios, "COMPASS_INBOX": inbox,
                           "COMPASS_ACCEPTED": tmp / "accepted"}.items():
            mp.setenv(key, str(value))
        mp.delenv("COMPASS_DEBUG", raising=False)
        mp.chdir(tmp)
        with dg.DagsterInstance.from_config(str(home)) as instance:
            first = refresh(defs, instance, SOURCE_KEYS)
            assert not first.failed, first.errors
            yield instance, tmp / "warehouse.duckdb", inbox, scores[held]


def _one_line_error(capsys, argv: list[str], *named: str) -> None:
    capsys.readouterr()  # what ran before (a refresh's logs) is not the command's
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert all(word in err for word in named), err


def _inbox_sensor(instance):
    return inbox_sensor(dg.build_sensor_context(instance=instance, resources={"warehouse": WarehouseResource()}))


def _reached_by(source: dg.AssetKey) -> set[str]:
    """Every asset downstream of `source` in the definitions' graph, as 'a/b' labels."""
    graph, seen, todo = defs.resolve_asset_graph(), set(), [source]
    while todo:
        for child in graph.get(todo.pop()).child_keys:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return {k.to_user_string() for k in seen}


def test_the_withheld_cells_are_suggested_priced_and_printed(loop_env, capsys):
    _, db, _, _ = loop_env
    wh = Warehouse(db)
    table = wh.read("compass.next_evaluations", {"case_id": CASE, "scenario": SCENARIO})
    board = set(wh.read("compass.leaderboards", {"case_id": CASE, "scenario": SCENARIO})["model_id"])
    assert set(zip(table["model_id"], table["benchmark"])) == {c for c in WITHHELD if c[0] in board}
    assert (table["expected_reduction"] >= 0).all() and (table["cost_usd"] > 0).all()
    assert table["expected_reduction"].max() > 0  # the top is withheld: measuring it can change the pick
    assert sorted(table["rank_all"]) == list(range(1, len(table) + 1))
    cells = table[table["kind"] == "cell"]
    assert sorted(cells["rank"]) == list(range(1, len(cells) + 1))
    assert cli.main(["next-evals", "--case", CASE, "--scenario", SCENARIO, "--k", "2"]) == 0
    out = capsys.readouterr().out
    top = table.sort_values("greedy_step").query("greedy_step > 0").iloc[0]
    assert f"{top.model_id}" in out and "$" in out and "pick if high" in out and "P(wrong pick)" in out
    for flag, value in (("--k", "0"), ("--budget", "-5"), ("--budget", "ten")):
        _one_line_error(capsys, ["next-evals", "--case", CASE, "--scenario", SCENARIO, flag, value], flag, repr(value))
    _one_line_error(capsys, ["next-evals", "--case", "nope", "--scenario", SCENARIO], "'nope'", CASE)
    _one_line_error(capsys, ["next-evals", "--case", CASE, "--scenario", "nope"], "'nope'", SCENARIO)


def test_a_malformed_answer_is_rejected_with_file_row_and_column_and_nothing_changes(loop_env):
    instance, db, inbox, truth = loop_env
    before = snapshot(db)
    bad = truth[["model_id", "benchmark", "score", "score_scale"]].astype({"score": object})
    bad.iloc[1, bad.columns.get_loc("score")] = "0.7x"
    bad.to_csv(inbox / "benchmark_scores_answers.csv", index=False)
    assert _inbox_sensor(instance).run_requests == []
    error = (inbox / "rejected" / "benchmark_scores_answers.csv.error.txt").read_text()
    assert "benchmark_scores_answers.csv: row 2, column score" in error, error  # row 2: the second data row
    assert_same_tables(before, snapshot(db))


def test_the_measured_answers_reach_only_their_branch_and_the_board_shows_before_and_after(loop_env, capsys):
    instance, db, inbox, truth = loop_env
    wh = Warehouse(db)
    where = {"case_id": CASE, "scenario": SCENARIO}
    suggested = wh.read("compass.next_evaluations", where)
    measured_file = inbox / "benchmark_scores_measured.csv"
    truth[["model_id", "benchmark", "score", "score_scale"]].to_csv(measured_file, index=False)
    [request] = _inbox_sensor(instance).run_requests
    assert request.asset_selection == [dg.AssetKey(["raw", "benchmark_scores"])]
    report = refresh(defs, instance, SOURCE_KEYS)
    assert not report.failed, report.errors
    ran = {label.split("[")[0] for label in report.materialized if not label.startswith("raw/")}
    assert {"compass/next_evaluations", "compass/rank_uncertainty", "compass/measures"} <= ran
    assert ran <= _reached_by(dg.AssetKey(["raw", "benchmark_scores"]))  # only what a scores file reaches
    answered = wh.read("compass.next_evaluations_answered", where)
    cells = ["model_id", "benchmark"]
    assert set(map(tuple, answered[cells].to_numpy())) == set(map(tuple, suggested[cells].to_numpy()))
    first = answered.iloc[0]
    assert first["p_rank1_before"] == pytest.approx(suggested["pick_p_rank1"].iloc[0])
    ranks = wh.read("compass.rank_uncertainty", where).set_index("model_id")
    assert first["p_rank1_after"] == pytest.approx(ranks.loc[first["pick_after"], "p_rank1"])
    measured = truth.set_index(["model_id", "benchmark"])["score"]
    assert answered.set_index(["model_id", "benchmark"])["measured"].to_dict() == pytest.approx(
        measured.reindex(answered.set_index(["model_id", "benchmark"]).index).to_dict())
    html = next_evaluations_section(wh, CASE, SCENARIO)
    assert "Measured since the suggestion" in html and "nothing to suggest" in html
    assert f"{first['pick_before']}" in html and "90 % rank interval" in html
    # every cell is measured now: the command says so in one line
    _one_line_error(capsys, ["next-evals", "--case", CASE, "--scenario", SCENARIO], "nothing to suggest")
