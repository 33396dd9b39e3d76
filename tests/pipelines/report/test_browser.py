"""The report site in a real browser (headless Chromium over the DevTools protocol): every page loads with no
console error and no request leaving the machine, the leaderboard sorts, and every chart draws."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipelines.report.site import board_href, frontier_href
from resources.warehouse import Warehouse
from tests.pipelines.report.browser import Browser, chromium_binary
from tests.pipelines.report.pages import pages

pytestmark = pytest.mark.skipif(chromium_binary() is None,
                                reason="chromium is not installed; `make test` installs it (apt-get install chromium)")
LOCAL = ("file:", "data:", "about:", "blob:")


@pytest.fixture(scope="module")
def site(compass_small_baseline):
    root, _ = compass_small_baseline
    return root / "reports" / "site", Warehouse(root / "warehouse.duckdb")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = Browser(tmp_path_factory.mktemp("chromium_profile"))
    yield chromium
    chromium.close()


def column(browser: Browser, heading: str) -> list[str]:
    """The cells of the leaderboard column under `heading`, top to bottom, as shown."""
    return browser.evaluate(f"""(() => {{
        const heads = [...document.querySelectorAll('#leaderboard th')].map(th => th.textContent.trim());
        const i = heads.indexOf({json.dumps(heading)});
        return [...document.querySelectorAll('#leaderboard tbody tr')].map(tr => tr.cells[i].textContent.trim());
    }})()""")


def click_heading(browser: Browser, heading: str) -> None:
    browser.evaluate(f"[...document.querySelectorAll('#leaderboard th')]"
                     f".find(th => th.textContent.trim() === {json.dumps(heading)}).click()")


def test_every_page_loads_with_no_console_error_and_no_request_off_the_machine(site, browser):
    folder, _ = site
    visited = 0
    for page in pages(folder):
        visit = browser.open(page.as_uri())
        assert visit.errors == [], f"{page.name}: {visit.errors}"
        assert [u for u in visit.requests if not u.startswith(LOCAL)] == [], page.name
        assert any(u.endswith("plotly.min.js") for u in visit.requests) == ("frontier" in str(page) or
                                                                              page.name == "oracle.html")
        visited += 1
    assert visited == len(pages(folder)) >= 7


def test_the_leaderboard_shows_the_warehouse_rows_and_sorts_by_price(site, browser):
    folder, wh = site
    board = wh.read("compass.leaderboards", {"case_id": "small_open", "scenario": "cost_aware_low"}).sort_values("rank")
    browser.open((folder / board_href("small_open", "cost_aware_low")).as_uri())
    assert column(browser, "model") == board["model_id"].tolist()
    price = "cost (case unit)"  # this fixture's case prices by parameter count (B params), not USD/Mtok
    click_heading(browser, price)
    ascending = [float(v.replace(",", "")) for v in column(browser, price)]
    assert ascending == sorted(board["raw_cost"]) and ascending != board["raw_cost"].tolist()
    assert sorted(column(browser, "model")) == sorted(board["model_id"])
    cheapest = board.loc[board["raw_cost"] == board["raw_cost"].min(), "model_id"].tolist()
    assert column(browser, "model")[0] in cheapest
    click_heading(browser, price)
    assert [float(v.replace(",", "")) for v in column(browser, price)] == sorted(board["raw_cost"], reverse=True)


def test_every_chart_draws_its_points_and_a_non_blank_image(site, browser):
    folder, wh = site
    n_models = len(wh.read("compass.costs", {"case_id": "small_open"}))
    n_tiers = wh.read("compass.tiers", {"case_id": "small_open"})["tier"].nunique()
    charts = 0
    for page in (folder / frontier_href("small_open"), folder / "oracle.html"):
        browser.open(page.as_uri())
        ids = browser.evaluate("[...document.querySelectorAll('.js-plotly-plot')].map(e => e.id)")
        assert ids, page.name
        for chart in ids:
            image = browser.screenshot(f"#{chart}")
            assert image.height > 200 and len(image.getcolors(image.width * image.height)) > 20, f"{page.name}#{chart} looks blank"
            charts += 1
        if "frontier" in page.name or page.parent.name == "frontier":
            drawn = browser.evaluate("document.querySelectorAll('#chart-frontier .scatterlayer path.point').length")
            assert drawn == n_models + n_tiers  # every model, and each tier level
    assert charts >= 3


STUDY_PAGES = ("oracle.html", "cascades.html", "clusters.html", "router.html", "matching.html")
MAX_SERIES = 8  # legend entries a chart may have: more is spaghetti
SCIENTIFIC = r"\b\d(?:\.\d+)?e[-+]?\d+\b"
ARTIFACTS = Path(__file__).resolve().parents[3] / "var" / "test-artifacts" / "screenshots"


def test_every_study_page_opens_with_its_verdict_above_the_fold(site, browser):
    folder, _ = site
    found = [folder / name for name in STUDY_PAGES if (folder / name).exists()]
    assert found, "the fixture writes at least one study page"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for page in found:
        browser.open(page.as_uri())
        box = browser.evaluate("(() => { const v = document.querySelector('main .verdict');"
                               " if (!v) return null; const r = v.getBoundingClientRect();"
                               " return [r.top, v.textContent.trim().length, window.innerHeight]; })()")
        assert box is not None, f"{page.name}: no element of class verdict"
        top, length, height = box
        assert length > 20 and top < height, f"{page.name}: verdict empty or below the fold"
        browser.screenshot("body").save(ARTIFACTS / page.name.replace(".html", ".png"))


def test_no_page_prints_scientific_notation_and_no_chart_is_spaghetti(site, browser):
    folder, _ = site
    for page in pages(folder):
        browser.open(page.as_uri())
        text = browser.evaluate("document.querySelector('main').innerText")
        assert not re.search(SCIENTIFIC, text, flags=re.I), f"{page.name}: {re.search(SCIENTIFIC, text, re.I)[0]}"
        series = browser.evaluate("[...document.querySelectorAll('.js-plotly-plot')]"
                                  ".map(e => e.data.filter(t => t.showlegend !== false).length)")
        assert all(n <= MAX_SERIES for n in series), f"{page.name}: {series} series"
