"""`compass leaderboard` prints the rank interval and the cost normalized and in the case's unit, row for row."""

import io

import pandas as pd
import pytest

from pipelines.cli import main
from resources.warehouse import Warehouse
from tests.pipelines.conftest import compass_small_env


def test_leaderboard_csv_has_rank_interval_and_costs_of_the_warehouse(compass_small_baseline, monkeypatch, capsys):
    root, _ = compass_small_baseline
    for k, v in compass_small_env(root).items():
        monkeypatch.setenv(k, v)
    assert main(["leaderboard", "--case", "small_open", "--scenario", "cost_aware_low", "--top", "100",
                 "--format", "csv"]) == 0
    shown = pd.read_csv(io.StringIO(capsys.readouterr().out))
    wh = Warehouse(root / "warehouse.duckdb")
    board = wh.read("compass.leaderboards", {"case_id": "small_open", "scenario": "cost_aware_low"}).sort_values("rank")
    ranks = wh.read("compass.rank_uncertainty", {"case_id": "small_open", "scenario": "cost_aware_low"})
    ranks = ranks.set_index("model_id").loc[board["model_id"]]
    assert shown["model_id"].tolist() == board["model_id"].tolist()
    assert shown["rank_90"].tolist() == [f"{lo}-{hi}" for lo, hi in zip(ranks["rank_lo"], ranks["rank_hi"])]
    assert shown["normalized_cost"].to_numpy() == pytest.approx(board["cost"].to_numpy(), rel=1e-12)  # CSV digits
    assert shown["raw_cost"].to_numpy() == pytest.approx(board["raw_cost"].to_numpy(), rel=1e-12)
    assert "usd_per_mtok" not in shown  # this case prices by parameter count: no dollars to show
