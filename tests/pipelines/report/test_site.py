"""The report site written by the refresh of the compass_small fixture (report/site asset), read back as HTML."""

from __future__ import annotations

import re
import shutil

import pandas as pd
import pytest

from pipelines.report.site import board_href, build_site, frontier_href
from resources.readers import source_ages
from resources.warehouse import Warehouse
from tests.pipelines.report.pages import pages, parse, table_rows

MAX_SITE_BYTES = 15 * 2**20


@pytest.fixture(scope="module")
def site(compass_small_baseline):
    root, report = compass_small_baseline
    assert "report/site" in report.materialized
    return root / "reports" / "site", Warehouse(root / "warehouse.duckdb")


def test_every_leaderboard_page_has_exactly_the_warehouse_rows_in_rank_order(site):
    folder, wh = site
    boards = wh.read("compass.leaderboards")
    ranks = wh.read("compass.rank_uncertainty").set_index(["case_id", "scenario", "model_id"])
    assert boards.groupby(["case_id", "scenario"]).ngroups == 2
    for (case_id, scenario), board in boards.groupby(["case_id", "scenario"]):
        rows = table_rows(folder / board_href(case_id, scenario), "leaderboard")
        board = board.sort_values("rank")
        assert [r["model"] for r in rows] == board["model_id"].tolist()
        assert [int(r["rank"]) for r in rows] == board["rank"].tolist()
        def interval(m):  # too few outcome models: no interval is printed (issue 29)
            row = ranks.loc[(case_id, scenario, m)]
            if not row["interval_supported"]:
                return f"not supported: utility learned from {row['n_outcome_models']} outcome models"
            label = board.set_index("model_id").loc[m]  # the coverage study's label (issue 42)
            conditional = "*" if pd.notna(label["interval_conditional"]) and label["interval_conditional"] else ""
            return f"{row['rank_lo']}–{row['rank_hi']}{conditional}"

        expected = [interval(m) for m in board["model_id"]]
        assert [r["90 % rank interval"] for r in rows] == expected
        assert [float(r["normalized cost"]) for r in rows] == pytest.approx(board["cost"].tolist(), abs=5e-5)
        # why: score = utility − λ·cost, the leader first
        assert "(best score)" in rows[0]["why this model"] and "behind #1" in rows[-1]["why this model"]


def test_the_front_page_names_each_leaderboards_rank_one(site):
    folder, wh = site
    top = wh.query("select case_id, scenario, model_id, cost from compass.leaderboards where rank = 1 order by 1, 2")
    rows = table_rows(folder / "index.html", "recommendations")
    assert [(r["case"], r["scenario"], r["recommended"]) for r in rows] == list(
        top[["case_id", "scenario", "model_id"]].itertuples(index=False, name=None))
    assert [float(r["normalized cost"]) for r in rows] == pytest.approx(top["cost"].tolist(), abs=5e-5)


def test_no_page_refers_outside_the_site_and_every_link_resolves(site):
    folder, _ = site
    found = pages(folder)
    assert {p.relative_to(folder).as_posix() for p in found} >= {
        "index.html", "changes.html", "provenance.html", "oracle.html", "frontier/small_open.html"}
    for page in found:
        for url in parse(page).urls:
            assert not re.match(r"^[a-z]+:|^//", url, re.I), f"{page.name} refers to {url}"
            assert (page.parent / url).resolve().is_file(), f"{page.name}: broken link {url}"
        assert not re.search(r"https?://", re.sub(r"<script[^>]*>.*?</script>", "", page.read_text(), flags=re.S)), page
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) < MAX_SITE_BYTES


def test_provenance_lists_each_source_with_its_rows(site):
    folder, wh = site
    rows = table_rows(folder / "provenance.html", "table0")
    shown = {(r["table"], r["source"]): int(r["rows"].replace(",", "")) for r in rows}
    raw = wh.query("select source, count(*) as n from raw.models group by source")
    assert {s: shown[("raw.models", s)] for s in raw["source"]} == dict(zip(raw["source"], raw["n"]))


def test_a_slice_page_appears_only_when_its_table_exists(site, tmp_path):
    """router.evaluation and matching.summary come from other slices: their pages render once the tables exist."""
    folder, wh = site
    copy = Warehouse(tmp_path / "warehouse.duckdb")
    shutil.copy(wh.path, copy.path)
    assert "router.html" not in build_site(copy, tmp_path / "before").pages
    copy.replace("router.evaluation", pd.DataFrame({
        "dataset": "d", "router": ["knn"] * 3 + ["mlp"] * 3, "n_gold": 50, "pmur": [0.0, 0.5, 1.0] * 2,
        "expected_gain": [0.0, 0.375, 0.0, 0.0, 0.75, 0.0], "se": 0.01, "mc_rounds": 2}))
    written = build_site(copy, tmp_path / "after").pages
    assert "router.html" in written and "matching.html" not in written
    rows = table_rows(tmp_path / "after" / "router.html", "table0")  # mean gain over the PMUR grid per router
    assert [(r["router"], float(r["mean_gain"])) for r in rows] == [("knn", 0.125), ("mlp", 0.25)]


def test_key_assets_show_their_figure_in_the_dagster_ui(compass_small_baseline):
    """The latest materialization of each key asset carries an inline PNG (Markdown metadata), and the report's
    carries the recommendations."""
    import dagster as dg

    root, _ = compass_small_baseline
    with dg.DagsterInstance.from_config(str(root / "home")) as instance:
        def metadata(key: list[str]) -> dict:
            event = instance.get_latest_materialization_event(dg.AssetKey(key))
            return event.asset_materialization.metadata

        for key in (["compass", "measures"], ["compass", "cost_side"], ["compass", "leaderboards"],
                    ["compass", "targets"]):
            images = [v for v in metadata(key).values() if "data:image/png;base64," in str(getattr(v, "value", ""))]
            assert images, key
        shown = metadata(["report", "site"])["recommendations"].value
    first = Warehouse(root / "warehouse.duckdb").query("select scenario, model_id from compass.leaderboards where rank = 1")
    assert shown.count("small_open") == len(first) == 2
    assert all(f"| {s} " in shown and f"| {m} " in shown for s, m in first.itertuples(index=False))


def test_a_rebuild_rewrites_only_the_pages_whose_tables_changed(site, tmp_path):
    """Issue 17: the study pages are kept when their tables kept their data versions; a changed table rewrites its
    page (with the new rows), and the page of a vanished leaderboard goes."""
    folder, wh = site
    copy = Warehouse(tmp_path / "warehouse.duckdb")
    shutil.copy(wh.path, copy.path)
    out = tmp_path / "site"
    first = build_site(copy, out)
    assert sorted(first.rewritten) == sorted(first.pages)
    always = {"index.html", "changes.html", "provenance.html", *(p for p in first.pages if p.startswith("leaderboards/"))}
    assert set(build_site(copy, out).rewritten) == always  # oracle.html, cascades.html, frontier/* kept
    summary = copy.read("oracle.summary")
    copy.replace("oracle.summary", summary.assign(dataset="renamed_ds", data_version="v2"))
    gone = copy.read("compass.leaderboards").iloc[0]
    copy.delete_rows(["compass.leaderboards"], {"case_id": gone["case_id"], "scenario": gone["scenario"]})
    third = build_site(copy, out)
    assert set(third.rewritten) - always == {"oracle.html", frontier_href(gone["case_id"])}  # one λ path fewer
    assert "renamed_ds" in (out / "oracle.html").read_text()
    assert not (out / board_href(gone["case_id"], gone["scenario"])).exists()
    assert board_href(gone["case_id"], gone["scenario"]) not in third.pages


def test_the_pages_state_the_decision_and_how_old_the_data_are(site):
    """Issue 42: next to rank 1 the front page names the P(rank 1) leader and the tolerance pick (compass.decisions),
    every leaderboard page opens with the three picks, and every one of these pages says each source's newest as-of
    date. Mutation: `build_site` passing no decisions to the pages: red."""
    folder, wh = site
    picks = wh.read("compass.decisions").set_index(["case_id", "scenario", "rule"])["model_id"]
    rows = table_rows(folder / "index.html", "recommendations")
    assert rows
    for r in rows:
        assert r["P(rank 1) leader"].startswith(picks[r["case"], r["scenario"], "p_rank1_leader"] + " (")
        assert r["cheapest within tolerance"].startswith(picks[r["case"], r["scenario"], "tolerance_pick"] + " (")
        decision = table_rows(folder / board_href(r["case"], r["scenario"]), "decision")
        assert [d["model"] for d in decision[:3]] == [picks[r["case"], r["scenario"], rule] for rule in
                                                      ("point_leader", "p_rank1_leader", "tolerance_pick")]
    ages = source_ages(wh, pd.Timestamp.now())
    newest = list(zip(ages["source"], ages["as_of"]))
    for page in [folder / "index.html", *sorted((folder / "leaderboards").glob("*.html"))]:
        text = page.read_text()
        assert 'id="freshness"' in text and all(f"{s} {d:%Y-%m-%d}" in text for s, d in newest), page


def test_every_p_rank1_on_the_site_is_a_percentage(site):
    """Issue 48: leaderboard pages printed P(rank 1) as 0.4167 where the front page and the CLI print percentages.
    Every table column headed P(rank 1), on every page, shows "12.3 %" or nothing (red with the leaderboard's
    P(rank 1) format dropped)."""
    folder, _ = site
    shown = {}
    for page in pages(folder):
        for header, *rows in parse(page).tables.values():
            if "P(rank 1)" in header:
                at = header.index("P(rank 1)")
                shown[page.name] = [row[at] for row in rows]
    assert {"index.html"} < set(shown) and len(shown) >= 3, shown  # the front page and both leaderboards
    assert all(re.fullmatch(r"(\d{1,3}(\.\d)? %)?", cell) for cells in shown.values() for cell in cells), shown
