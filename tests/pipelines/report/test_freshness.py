"""The front page and every leaderboard page say how old the data the decision rests on is: each source's newest
as-of date and its age today (issue 42: the page said only "Warehouse refreshed" with today's date). Mutations
applied by hand, each red: the oldest as-of per source instead of the newest; the age counted from the refresh
instead of `today`."""

import pandas as pd

from pipelines.report.site import freshness
from resources.readers import source_ages
from resources.warehouse import Warehouse


def test_each_source_shows_its_newest_as_of_and_its_age_today(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("raw.benchmark_scores", pd.DataFrame({
        "model_id": ["a", "b", "c", "d"], "benchmark": "x", "score": 0.5,
        "source": ["lmarena", "livebench", "livebench", "epoch"],
        "as_of": pd.to_datetime(["2025-12-17", "2026-01-01", "2026-06-25", "2026-05-14"]).date}))
    wh.replace("raw.model_costs", pd.DataFrame({"model_id": ["a"], "provider": "p", "source": ["models_dev"],
                                                "as_of": pd.to_datetime(["2026-11-20"]).date}))
    wh.replace("raw.models", pd.DataFrame({"model_id": ["a"], "source": ["models_dev"],
                                           "as_of": pd.to_datetime(["2026-10-01"]).date}))
    today = pd.Timestamp("2026-11-27 23:00")
    ages = source_ages(wh, today).set_index("source")
    assert ages.loc["livebench", "as_of"] == pd.Timestamp("2026-06-25") and ages.loc["livebench", "age_days"] == 155
    assert ages.loc["lmarena", "age_days"] == 345 and ages.loc["models_dev", "tables"] == "raw.model_costs, raw.models"
    assert ages.loc["models_dev", "age_days"] == 7  # its newest delivery over both tables
    assert list(ages.index) == ["models_dev", "livebench", "epoch", "lmarena"]  # newest first
    text = freshness(wh, today)
    assert "livebench 2026-06-25 (155 days old)" in text and "lmarena 2025-12-17 (345 days old)" in text
    assert 'id="freshness"' in text
