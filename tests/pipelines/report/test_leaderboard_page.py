"""The leaderboard page's verdict and columns from a hand-made board (no warehouse): near-tie group with its
cheapest member, the extrapolation flag, and no interval where the data cannot support one (issue 29)."""

import pandas as pd

from compass.mlcompass.decision_rule import SCENARIO_SOURCE, decision_frame
from pipelines.report.site import board_table, board_verdict, decision_table, leaderboard_body
from tests.pipelines.report.pages import table_rows


def _board(**overrides):
    board = pd.DataFrame({
        "rank": [1, 2, 3], "model_id": ["pricey", "cheap", "far"], "score": [0.80, 0.79, 0.40],
        "utility": [0.80, 0.79, 0.40], "cost": [0.9, 0.1, 0.05], "binding": "none", "extrapolated": [True, False, False],
        "outcome_range": ["C1 above, C2 inside", "C1 inside, C2 inside", "C1 inside, C2 below"],
        "measures_outside": [1, 0, 1], "rank_lo": [1, 1, 3], "rank_hi": [2, 2, 3], "p_rank1": [0.6, 0.4, 0.0],
        "near_leader": [True, True, False], "interval_supported": True, "n_outcome_models": 9})
    return board.assign(**overrides)


def _decision(board, tolerance=0.05):
    return decision_frame(board, tolerance, SCENARIO_SOURCE)


def test_the_verdict_names_the_near_tie_group_the_cheapest_within_tolerance_and_the_extrapolation():
    text = board_verdict(_board(), _decision(_board()))
    assert text.startswith("pricey leads; 2 models are within the bootstrap's noise of it; the cheapest within the "
                           "tolerance 0.05 of its score is cheap")
    assert "extrapolated: C1 above, C2 inside" in text
    shown = board_table(_board())
    assert shown["within noise of #1"].tolist() == ["yes", "yes", ""]
    assert shown["vs outcome models' range"].tolist() == _board()["outcome_range"].tolist()
    assert shown["90 % rank interval"].tolist() == ["1–2", "1–2", "3–3"]
    assert '<p class="verdict">' in leaderboard_body(_board(), _decision(_board()))


def test_no_interval_is_printed_where_the_data_cannot_support_one():
    few = _board(interval_supported=False, n_outcome_models=4)
    assert set(board_table(few)["90 % rank interval"]) == {"not supported: utility learned from 4 outcome models"}
    assert "too few for rank intervals" in board_verdict(few)
    alone = _board(near_leader=[True, False, False], measures_outside=[0, 0, 1])
    assert board_verdict(alone) == "pricey leads beyond the bootstrap's noise."


def test_the_page_shows_the_three_picks_and_every_likely_rank_one_with_percentages_and_unknown_attributes(tmp_path):
    """Issue 42: the model most often ranked #1 sat at point rank 11, off the board. Mutations, each red: the decision
    table without the P(rank 1) >= 10 % rows; P(rank 1) printed as a fraction; missing attributes left blank."""
    board = pd.concat([_board(), _board().iloc[[2] * 10].assign(
        rank=range(4, 14), model_id=[f"low{i}" for i in range(4, 14)], score=0.3, utility=0.3, p_rank1=0.0)],
        ignore_index=True)
    board["p_rank1"] = 0.0
    board.loc[:2, "p_rank1"] = [0.2, 0.1, 0.0]
    board.loc[board["model_id"] == "low11", "p_rank1"] = 0.5  # the bootstrap's favourite at point rank 11
    board.loc[board["model_id"] == "low12", "p_rank1"] = 0.2
    board = board.assign(context_window=[200_000] + [None] * 12, open_weights=[True, False] + [None] * 11)
    picks = _decision(board)
    path = tmp_path / "board.html"
    path.write_text(leaderboard_body(board, picks))
    rows = table_rows(path, "decision")
    assert [r["decision"] for r in rows[:3]] == ["point leader", "P(rank 1) leader", "cheapest within tolerance"]
    assert [(r["model"], r["point rank"]) for r in rows] == [("pricey", "1"), ("low11", "11"), ("cheap", "2"),
                                                              ("low12", "12")]
    likely = {r["model"]: r for r in rows}
    assert likely["low11"]["decision"] == "P(rank 1) leader" and likely["low12"]["point rank"] == "12"
    assert likely["low11"]["P(rank 1)"].endswith(" %")
    shown = table_rows(path, "leaderboard")
    assert shown[0]["context window"] == "200,000" and shown[1]["context window"] == "unknown"
    assert shown[1]["open weights"] == "no" and shown[2]["open weights"] == "unknown" and shown[0]["P(rank 1)"].endswith(" %")
    assert set(decision_table(board, picks)["model"]) >= {"low11", "low12"}


def test_models_dropped_for_an_unknown_attribute_are_said_under_the_verdict(tmp_path):
    """Issue 48: a governance filter that drops models whose attribute is unknown says how many in the verdict, and
    its note stands right under the verdict, above the decision table (red with the note back below the decision
    table, or without the count)."""
    note = ("filters keep 3 of 25 models (open_weights: 3 excluded, 19 more with the attribute unknown (a, b and 17 "
            "more))")
    unknown = "19 more models left out because an attribute a filter reads is unknown (open_weights 19); they may comply"
    board = _board(filter_note=note, filter_unknown=unknown)
    text = leaderboard_body(board, _decision(board))
    verdict_at, filters_at, decision_at = (text.index('class="verdict"'), text.index('id="filters"'),
                                           text.index('id="decision"'))
    assert verdict_at < filters_at < decision_at
    assert unknown in text[verdict_at:filters_at] and note in text[filters_at:decision_at]


def test_a_scenario_workload_shows_dollars_per_request_and_month_in_place_of_the_cases_per_query(tmp_path):
    """Issue 48: under a scenario's workload the page prices the team's request and month, next to the normalized
    cost, and drops the case's own per-query price (another workload). Red with the per-query column kept."""
    board = _board(usd_query=[1e-4, 2e-5, 1e-5], usd_per_request=[0.000466, 0.00039, 0.00022],
                   usd_per_month=[932.0, 780.0, 440.0])
    path = tmp_path / "board.html"
    path.write_text(leaderboard_body(board, _decision(board)))
    shown = table_rows(path, "leaderboard")
    assert [(r["USD/request"], r["USD/month"]) for r in shown] == [("$0.000466", "$932.00"), ("$0.000390", "$780.00"),
                                                                   ("$0.000220", "$440.00")]
    assert "USD/query" not in shown[0] and "normalized cost" in shown[0]
    plain = tmp_path / "plain.html"  # without a scenario workload: the case's per query, as before
    plain.write_text(leaderboard_body(_board(usd_query=[1e-4, 2e-5, 1e-5]), _decision(_board())))
    assert table_rows(plain, "leaderboard")[0]["USD/query"] == "$0.000100"
