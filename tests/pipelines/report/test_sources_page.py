"""The Live sources page's banner counts from the rows its table shows (issue 43: "3 live source(s), all fetched"
above a table listing two of them with errors, a ZIP refused and a body that is not JSON, both with status 200).
Red with the old count (status 0 only)."""

import pandas as pd

from pipelines.report.pages.sources import sources_body
from resources.live_sources import FETCH_COLUMNS, UNMATCHED_COLUMNS
from resources.warehouse import Warehouse


def _banner(page: str) -> str:
    return page.split('<p class="verdict">')[1].split("</p>")[0]


def test_the_banner_counts_the_sources_the_table_shows_failing(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    when = pd.Timestamp("2026-11-28 10:00")
    fetches = pd.DataFrame([
        {"connector": "lmarena", "url": "https://a.example/leaderboard.json", "status": 200, "bytes": 10},
        {"connector": "epoch", "url": "https://b.example/benchmarks.zip", "status": 200, "bytes": 20,
         "error": "benchmarks.zip: entry '../../etc/passwd' leaves the archive (path traversal): refused"},
        {"connector": "livebench", "url": "https://c.example/table.json", "status": 200, "bytes": 30,
         "error": "table.json: not valid JSON (line 1, column 1)"},
    ]).reindex(columns=FETCH_COLUMNS).assign(fetched_at=when)
    wh.replace("raw.fetches", fetches)
    wh.replace("raw.unmatched_names", pd.DataFrame(columns=UNMATCHED_COLUMNS, dtype="string"))
    page = sources_body(wh)
    assert _banner(page).startswith("3 live source(s), 2 failed at the last fetch and kept their previous rows;")
    assert "path traversal" in page and "not valid JSON" in page

    wh.replace("raw.fetches", fetches.assign(error=None))
    assert _banner(sources_body(wh)).startswith("3 live source(s), all fetched;")
