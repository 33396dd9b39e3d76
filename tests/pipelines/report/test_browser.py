"""The report site in a real browser (headless Chromium over the DevTools protocol): every page loads with no
console error and no request leaving the machine, the leaderboard sorts, and every chart draws."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
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


# The geometry of the capability-cost chart as drawn: the plot area, every label's text box and text, the line
# traces' boxes, and the axis ranges against the curve's data (all in page px; ranges in axis units).
CHART_GEOMETRY = """(() => {
    const gd = document.getElementById('chart-frontier'), box = r => [r.left, r.top, r.right, r.bottom];
    const lines = gd.data.map((t, i) => [t, i]).filter(([t]) => t.mode === 'lines');
    const traces = gd.querySelectorAll('.scatterlayer .trace');
    return {plot: box(gd.querySelector('.nsewdrag').getBoundingClientRect()),
            labels: [...gd.querySelectorAll('.annotation')].map(a => [a.textContent,
                     box(a.querySelector('.annotation-text-g').getBoundingClientRect())]),
            lines: lines.map(([t, i]) => box(traces[i].querySelector('path.js-line').getBoundingClientRect())),
            curve_y: lines.flatMap(([t, i]) => gd.calcdata[i].map(p => p.y).filter(Number.isFinite)),
            y_range: gd._fullLayout.yaxis.range,
            legend: [...gd.querySelectorAll('.legendtext')].map(e => e.textContent)};
})()"""


def _inside(inner: list[float], outer: list[float], slack: float = 1.0) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack and inner[2] <= outer[2] + slack
            and inner[3] <= outer[3] + slack)


def _apart(a: list[float], b: list[float]) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def test_the_capability_cost_chart_names_its_leaders_and_keeps_its_frontier_inside_the_plot(site, browser):
    """Issue 48 item 6: each scenario's rank 1 is named on the chart, labels apart and inside the plot; the fitted
    curve stays within the plot area (it ran off the top at normalized cost 0.03 before); the legend says what
    the curve was fitted on; the page says why models lie above it. Red on the old chart: no labels, and its
    curve ran to c0·1^d = 4.85 on a 0-1.15 axis."""
    folder, wh = site
    boards = wh.read("compass.leaderboards", {"case_id": "small_open"})
    leaders = set(boards.loc[boards["rank"] == 1, "model_id"])
    browser.open((folder / frontier_href("small_open")).as_uri())
    chart = browser.evaluate(CHART_GEOMETRY)
    named = [text for text, _ in chart["labels"]]
    assert leaders and all(any(text.startswith(m) for text in named) for m in leaders), named
    assert all(_inside(b, chart["plot"]) for _, b in chart["labels"]), chart
    assert chart["lines"] and all(_inside(b, chart["plot"]) for b in chart["lines"]), chart
    assert max(chart["curve_y"]) <= chart["y_range"][1]
    assert any("fitted through the 3 tier points" in t for t in chart["legend"]), chart["legend"]
    n_models = len(wh.read("compass.costs", {"case_id": "small_open"}))
    note = browser.evaluate("document.getElementById('above-frontier').textContent")
    assert re.search(rf"Why \d+ of {n_models} priced models lie above the fitted frontier: the curve is fitted to "
                     "tiers, not to models", note), note
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.screenshot("#chart-frontier").save(ARTIFACTS / "capability_cost.png")


def test_crowded_labels_on_the_capability_cost_chart_do_not_overlap(browser, tmp_path):
    """Seven labelled models within a few pixels of each other (and one at the plot's corner), drawn by Chromium:
    every label's box is inside the plot area and apart from every other (red with every label put straight
    above its point)."""
    from pipelines.report import charts
    from pipelines.report.html import page

    rng = np.random.default_rng(3)
    models = pd.DataFrame({"model_id": [f"m{i}" for i in range(40)], "cost": 10 ** rng.uniform(-3, 0, 40),
                           "capability": rng.uniform(0.1, 0.9, 40), "tier": rng.integers(1, 4, 40),
                           "pareto_efficient": rng.random(40) < 0.2})
    models.loc[:6, ["cost", "capability"]] = [[0.01 * 1.1**i, 0.5 + 0.01 * i] for i in range(7)]
    models.loc[7, ["cost", "capability"]] = [models["cost"].max(), models["capability"].max() + 0.05]
    models["hover"] = models["model_id"]
    labels = models.loc[:7, ["model_id", "cost", "capability"]].rename(columns={"model_id": "text"})
    labels["text"] = [f"some-provider/model-{i}<br>#1 in scenario {i}" for i in range(8)]
    levels = pd.DataFrame({"tier": [1, 2, 3], "cost": [0.01, 0.05, 0.2], "level": [0.3, 0.5, 0.8]})
    grid = np.geomspace(models["cost"].min(), 0.3, 50)
    curve = pd.DataFrame({"cost": grid, "capability": 0.3 * (grid / 0.01) ** 0.2, "fitted": grid >= 0.01})
    names = {"ringed": "ringed", "levels": "tier points", "curve": "frontier"}
    fig = charts.capability_cost(models, curve, levels, labels, 1.0, names, "crowded")
    charts.write_plotly_js(tmp_path)
    (tmp_path / "crowded.html").write_text(page("crowded", charts.figure_div(fig, "chart-frontier"), [],
                                                scripts=[charts.PLOTLY_JS]))
    browser.open((tmp_path / "crowded.html").as_uri())
    chart = browser.evaluate(CHART_GEOMETRY)
    boxes = [b for _, b in chart["labels"]]
    assert len(boxes) == 8 and all(_inside(b, chart["plot"]) for b in boxes), chart
    assert all(_apart(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), chart
