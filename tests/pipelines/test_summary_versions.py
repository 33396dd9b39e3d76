"""The run summary never prints one run's picks next to another run's rank intervals (issue 42: after a refresh that
held back a case's decisions, the old rank-1 pick was printed with a new interval, "claude-fable-5 … rank interval
[148–178]"). Mutations applied by hand, each red: `_same_board` joining on case and scenario only (the new interval
printed next to the old pick); `_stale` always False (no STALE mark); the decision picks joined without versions."""

import pandas as pd

from pipelines.summary import print_recommendations
from resources.warehouse import Warehouse


def _warehouse(tmp_path, board_version_of_ranks: str, measures_now: str, measures_of_ranks: str | None = None) -> Warehouse:
    wh = Warehouse(tmp_path / "w.duckdb")
    board = pd.DataFrame({"case_id": "c", "scenario": "s", "rank": [1, 2], "model_id": ["old-pick", "other"],
                          "score": [0.9, 0.8], "utility": [0.9, 0.8], "cost": [0.5, 0.1], "raw_cost": [5.0, 1.0],
                          "data_version": "board-A", "measures_version": "measures-1"})
    wh.replace("compass.leaderboards", board)
    wh.replace("compass.costs", pd.DataFrame({"case_id": "c", "model_id": ["old-pick", "other"], "cost": [0.5, 0.1],
                                              "raw_cost": [5.0, 1.0], "cost_column": "blended_usd_per_mtok"}))
    wh.replace("compass.measures", pd.DataFrame({"case_id": "c", "model_id": ["old-pick"], "factor": "C1",
                                                 "value": [0.5], "data_version": measures_now}))
    wh.replace("compass.rank_uncertainty", pd.DataFrame({
        "case_id": "c", "scenario": "s", "rank": [1, 2], "model_id": ["old-pick", "other"], "rank_lo": [148, 1],
        "rank_hi": [178, 2], "p_rank1": [0.0, 1.0], "data_version": "ru-X", "board_version": board_version_of_ranks,
        "measures_version": measures_of_ranks or measures_now}))
    wh.replace("compass.decisions", pd.DataFrame({
        "case_id": "c", "scenario": "s", "rule": ["point_leader", "p_rank1_leader", "tolerance_pick"],
        "model_id": ["old-pick", "other", "other"], "p_rank1": [0.0, 1.0, 1.0], "cost": [0.5, 0.1, 0.1],
        "tolerance": 0.2, "data_version": "d-X", "board_version": board_version_of_ranks}))
    return wh


def _line(capsys, wh) -> str:
    capsys.readouterr()
    print_recommendations(wh)
    return next(line for line in capsys.readouterr().out.splitlines() if line.startswith("    s:"))


def test_intervals_and_picks_of_another_leaderboard_are_not_printed_and_an_old_board_is_marked_stale(tmp_path, capsys):
    line = _line(capsys, _warehouse(tmp_path, board_version_of_ranks="board-B", measures_now="measures-2"))
    assert line.startswith("    s: old-pick, $5/Mtok") and "rank interval" not in line and "other" not in line
    assert "STALE: ranked on earlier measures" in line


def test_the_same_leaderboards_interval_and_picks_are_printed(tmp_path, capsys):
    line = _line(capsys, _warehouse(tmp_path, board_version_of_ranks="board-A", measures_now="measures-1"))
    assert "rank interval [148-178]" in line and "P(rank 1) leader other (100 %)" in line
    assert "cheapest within tolerance 0.2: other (normalized cost 0.100)" in line and "STALE" not in line


def test_new_replicates_scored_on_the_held_back_board_are_not_printed_next_to_its_pick(tmp_path, capsys):
    """The issue's case: the refresh held back the decisions (the board is the old one) while the intervals were
    recomputed from the new measures' replicates on that old board. Mutation: `_same_board` without the
    measures_version key: red."""
    wh = _warehouse(tmp_path, board_version_of_ranks="board-A", measures_now="measures-2",
                    measures_of_ranks="measures-2")
    line = _line(capsys, wh)
    assert "rank interval" not in line and "STALE" in line
