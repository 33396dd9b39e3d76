"""The leaderboard page's verdict and columns from a hand-made board (no warehouse): near-tie group with its
cheapest member, the extrapolation flag, and no interval where the data cannot support one (issue 29)."""

import pandas as pd

from pipelines.report.site import board_table, board_verdict, leaderboard_body


def _board(**overrides):
    board = pd.DataFrame({
        "rank": [1, 2, 3], "model_id": ["pricey", "cheap", "far"], "score": [0.80, 0.79, 0.40],
        "utility": [0.80, 0.79, 0.40], "cost": [0.9, 0.1, 0.05], "binding": "none", "extrapolated": [True, False, False],
        "outcome_range": ["C1 above, C2 inside", "C1 inside, C2 inside", "C1 inside, C2 below"],
        "measures_outside": [1, 0, 1], "rank_lo": [1, 1, 3], "rank_hi": [2, 2, 3], "p_rank1": [0.6, 0.4, 0.0],
        "near_leader": [True, True, False], "interval_supported": True, "n_outcome_models": 9})
    return board.assign(**overrides)


def test_the_verdict_names_the_near_tie_group_its_cheapest_member_and_the_extrapolation():
    text = board_verdict(_board())
    assert text.startswith("pricey leads; 2 models are within the bootstrap's noise of it, the cheapest being cheap")
    assert "extrapolated: C1 above, C2 inside" in text
    shown = board_table(_board())
    assert shown["within noise of #1"].tolist() == ["yes", "yes", ""]
    assert shown["vs outcome models' range"].tolist() == _board()["outcome_range"].tolist()
    assert shown["90 % rank interval"].tolist() == ["1–2", "1–2", "3–3"]
    assert '<p class="verdict">' in leaderboard_body(_board())


def test_no_interval_is_printed_where_the_data_cannot_support_one():
    few = _board(interval_supported=False, n_outcome_models=4)
    assert set(board_table(few)["90 % rank interval"]) == {"not supported: utility learned from 4 outcome models"}
    assert "too few for rank intervals" in board_verdict(few)
    alone = _board(near_leader=[True, False, False], measures_outside=[0, 0, 1])
    assert board_verdict(alone) == "pricey leads beyond the bootstrap's noise."
