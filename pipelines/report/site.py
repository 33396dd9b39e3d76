"""The browsable report site: every decision of the warehouse as static pages that open from disk.

Pages (README, "The report site"): index.html (every case x scenario's recommendation), one sortable
leaderboard per case x scenario, the capability-cost picture per case, what changed since the previous
refresh, one page per study slice whose tables exist, and provenance. Reads the warehouse through
resources.readers; markup is pipelines.report.html, charts pipelines.report.charts.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import plotly

from compass.mlcompass.frontier import ces_score
from pipelines.formatting import pct, usd
from pipelines.report import charts
from pipelines.report.html import esc, link, page, table, verdict
from pipelines.report.pages import cascades, clusters, matching, oracle, router, sources
from pipelines.report.sections import section
from resources import provenance, readers
from resources.warehouse import Warehouse

# Leaderboard columns shown, in order, and their headings.
BOARD_COLUMNS = {"rank": "rank", "rank_interval": "90 % rank interval", "p_rank1": "P(rank 1)", "model_id": "model",
                 "organization": "organization", "open_weights": "open weights", "usd_mtok": "price USD/Mtok",
                 "usd_query": "USD/query", "raw_cost": "cost (case unit)", "cost": "normalized cost",
                 "utility": "utility", "score": "score", "binding": "binding constraints",
                 "imputed_share": "imputed share", "tier": "tier", "why": "why this model",
                 "near_tie": "within noise of #1", "outcome_range": "vs outcome models' range",
                 "beyond_outcome_range": "beyond outcome range (measure units)"}


def slug(*parts: str) -> str:
    return "__".join(p.replace("/", "_") for p in parts)


def board_href(case_id: str, scenario: str) -> str:
    return f"leaderboards/{slug(case_id, scenario)}.html"


def frontier_href(case_id: str) -> str:
    return f"frontier/{slug(case_id)}.html"


def rank_interval(board: pd.DataFrame) -> pd.Series:
    """'3–7'; '3–7 (conditional: top-5 coverage 0.845)' where the coverage study labels it conditional; where the
    data cannot support an interval (too few outcome models, compass.rank_uncertainty's interval_supported), says
    so instead of printing one."""
    have = board["rank_lo"].notna()
    text = board["rank_lo"].astype("Int64").astype(str) + "–" + board["rank_hi"].astype("Int64").astype(str)
    if "interval_conditional" in board:  # the coverage study's label (compass.mlcompass.rank_coverage.interval_label)
        conditional = have & board["interval_conditional"].eq(True)
        measured = board["interval_coverage_top5"].map(lambda c: f"{c:.3f}" if pd.notna(c) else "?")
        text = text.mask(conditional, text + " (conditional: top-5 coverage " + measured + ")")
    if "interval_supported" in board:
        unsupported = have & ~board["interval_supported"].fillna(True).astype(bool)
        few = board["n_outcome_models"].astype("Int64").astype(str)
        text = text.mask(unsupported, "not supported: utility learned from " + few + " outcome models")
    return text.where(have, "")


def near_tie(board: pd.DataFrame) -> pd.Series:
    """'yes' for the models the bootstrap cannot tell from the leader (compass.rank_uncertainty near_leader)."""
    if "near_leader" not in board:
        return pd.Series(None, index=board.index, dtype=object)
    return board["near_leader"].map({True: "yes", False: ""})


def board_verdict(board: pd.DataFrame) -> str:
    """The leaderboard's answer: the leader, the near-tie group with its cheapest member, and whether the
    leader's utility is extrapolated beyond the outcome models' range."""
    from pipelines.formatting import number  # here, not at the top: the import lines are another branch's

    leader = board.iloc[0]
    text = f"{leader['model_id']} leads"
    if "interval_supported" in board and not bool(board["interval_supported"].fillna(True).iloc[0]):
        text += (f", but the utility is learned from {int(leader['n_outcome_models'])} outcome models, too few for "
                 "rank intervals: the order is the point estimate only.")
    elif "near_leader" in board and board["near_leader"].fillna(False).astype(bool).sum() > 1:
        group = board[board["near_leader"].fillna(False).astype(bool)]
        cheapest = group.sort_values(["cost", "rank"], kind="mergesort").iloc[0]
        text += (f"; {len(group)} models are within the bootstrap's noise of it, the cheapest being "
                 f"{cheapest['model_id']} (normalized cost {number(cheapest['cost'])} vs {number(leader['cost'])}).")
    elif "near_leader" in board:
        text += " beyond the bootstrap's noise."
    else:
        text += "."
    if "measures_outside" in board and pd.notna(leader.get("measures_outside")) and leader["measures_outside"] > 0:
        text += (f" Its utility is extrapolated: {leader['outcome_range']} the range of the models with outcome data.")
    return text


def why(board: pd.DataFrame) -> pd.Series:
    """Why each model sits where it does: score = utility − λ·cost (ML Compass problem 7), its gap to the leader,
    the constraints that bind it, and whether its utility is extrapolated."""
    penalty = board["utility"] - board["score"]
    gap = board["score"].iloc[0] - board["score"]
    text = [f"utility {u:.3f} − λ·cost {p:.3f} = {s:.3f}" + (" (best score)" if g <= 0 else f", {g:.3f} behind #1")
            + ("" if b in ("none", None) or b != b else f"; bound by {b}") + ("; utility extrapolated" if e else "")
            for u, p, s, g, b, e in zip(board["utility"], penalty, board["score"], gap, board["binding"],
                                        board["extrapolated"].fillna(False))]
    return pd.Series(text, index=board.index)


def board_table(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as shown: the BOARD_COLUMNS that hold anything, renamed."""
    shown = board.assign(rank_interval=rank_interval(board), why=why(board), near_tie=near_tie(board))
    shown = shown[[c for c in BOARD_COLUMNS if c in shown.columns]].dropna(axis=1, how="all")
    return shown.rename(columns=BOARD_COLUMNS)


# What each page was last written from (`SiteWriter`), kept in the site folder.
MANIFEST = "pages.json"
# The code that turns tables into pages: a change rewrites every page.
_SITE_CODE = hashlib.sha256(b"".join(Path(__file__).with_name(f).read_bytes()
                                     for f in ("site.py", "html.py", "charts.py"))
                            + plotly.__version__.encode()).hexdigest()


def tables_digest(wh: Warehouse, tables: Sequence[str], where: Mapping[str, object] | None = None,
                  extra: str = "") -> str | None:
    """What a page shows, as the published data versions of the `tables` it reads (their rows selected by
    `where`), the site's code and `extra`: equal digests, equal pages. None when a table has no data versions
    (not published by an asset): the page is then always rewritten."""
    h = hashlib.sha256((_SITE_CODE + extra).encode())
    for name in tables:
        versions = wh.data_versions(name, where)
        if versions is None:
            return None
        h.update(f"{name}: {','.join(versions)};".encode())
    return h.hexdigest()


class SiteWriter:
    """Writes pages under `root` with the shared navigation; a page whose inputs did not change since it was
    written (same `inputs` digest, same navigation) is kept as it is (issue 17: a price change rewrites the
    pages it reaches, not the studies)."""

    def __init__(self, root: Path, nav: list[tuple[str, str]]):
        self.root, self.nav, self.pages, self.rewritten = root, nav, [], []
        manifest = root / MANIFEST
        self.before: dict[str, str] = json.loads(manifest.read_text()) if manifest.exists() else {}
        self.after: dict[str, str] = {}

    def write(self, href: str, title: str, body: str | Callable[[], str], charts_used: bool = False,
              inputs: str | None = None) -> None:
        """Write the page; with `inputs` (a `tables_digest` of what `body()` shows), only when they changed."""
        path = self.root / href
        key = hashlib.sha256(f"{inputs}|{title}|{self.nav}|{charts_used}".encode()).hexdigest() if inputs else None
        self.pages.append(href)
        if key is not None:
            self.after[href] = key
            if self.before.get(href) == key and path.exists():
                return
        depth = href.count("/")
        text = page(title, body() if callable(body) else body, self.nav, depth,
                    scripts=[charts.PLOTLY_JS] if charts_used else [])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.rewritten.append(href)

    def finish(self, folders: Sequence[str]) -> None:
        """Drop the pages of `folders` not written this time (a case or scenario gone) and save the manifest."""
        for folder in folders:
            for path in (self.root / folder).glob("*.html"):
                if path.relative_to(self.root).as_posix() not in self.pages:
                    path.unlink()
        (self.root / MANIFEST).write_text(json.dumps(self.after, indent=0, sort_keys=True))


def live_boards(wh: Warehouse) -> dict[tuple[str, str], pd.DataFrame]:
    """(case, scenario) -> its leaderboard as shown (readers.leaderboard_view), every non-empty one."""
    boards = {(c, s): readers.leaderboard_view(wh, c, s) for c, s in readers.leaderboard_pairs(wh).itertuples(index=False)}
    return {k: b for k, b in boards.items() if len(b)}


def recommendations(boards: dict[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Rank 1 of every leaderboard with its price (USD/Mtok, USD/query, case unit, normalized) and rank interval."""
    rows = [{"case": case_id, "scenario": scenario, "recommended": board["model_id"].iloc[0],
             "price USD/Mtok": board["usd_mtok"].iloc[0], "USD/query": board["usd_query"].iloc[0],
             "cost (case unit)": board["raw_cost"].iloc[0], "cost unit": board["cost_column"].iloc[0],
             "normalized cost": board["cost"].iloc[0], "90 % rank interval": rank_interval(board).iloc[0],
             "P(rank 1)": board["p_rank1"].iloc[0]} for (case_id, scenario), board in boards.items()]
    return pd.DataFrame(rows).dropna(axis=1, how="all")


# How the front page and the leaderboards show numbers to people (the sorter keeps the values).
PEOPLE = {"price USD/Mtok": usd, "USD/query": usd, "P(rank 1)": pct}


def front_verdict(summary: pd.DataFrame) -> str:
    """Per case: the model most scenarios recommend, and who wins the others."""
    sentences = []
    for case_id, part in summary.groupby("case", sort=True):
        counts = part["recommended"].value_counts()
        lead = counts.index[0]
        others = part[part["recommended"] != lead]
        rest = "; ".join(f"{m} under {', '.join(g['scenario'])}" for m, g in others.groupby("recommended", sort=True))
        sentences.append(f"{case_id}: {lead} in {counts.iloc[0]} of {len(part)} scenarios" + (f" ({rest})" if rest else ""))
    return "Recommended: " + ". ".join(sentences) + "."


def index_body(wh: Warehouse, boards: dict[tuple[str, str], pd.DataFrame]) -> str:
    pages = [link(board_href(c, s), "leaderboard") + " · " + link(frontier_href(c), "capability–cost") for c, s in boards]
    summary = recommendations(boards).assign(pages=pages) if boards else pd.DataFrame()
    when = readers.published(wh, "compass.leaderboards")["refreshed_at"].max() if boards else None
    return (verdict(front_verdict(summary)) if len(summary) else "") + (
            f'<p class="note">The recommended model (rank 1) of every case study and scenario. Warehouse '
            f'refreshed {esc(when or "never")}; the 90 % rank interval comes from the bootstrap of the measures and '
            "utilities (compass.rank_uncertainty).</p>"
            + table(summary, sortable=True, html_columns=["pages"], table_id="recommendations", formats=PEOPLE))


def leaderboard_body(board: pd.DataFrame) -> str:
    from pipelines.report.html import verdict  # here, not at the top: the import lines are another branch's

    return (verdict(board_verdict(board))
            + '<p class="note">Click a column heading to sort. Score = utility − λ·normalized cost; the 90 % rank '
            "interval and P(rank 1) come from the bootstrap (measures, utilities, the models with outcome data and "
            "each model's own effect); \"within noise of #1\" marks the models that score at least as high as the "
            "leader in 5 % of the replicates or more; \"vs outcome models' range\" says, per measure, whether the "
            "model lies inside the range of the models whose outcomes the utility was learned from (outside: "
            "extrapolated). The price in USD per million tokens is shown when the case prices by tokens.</p>"
            + table(board_table(board), sortable=True, table_id="leaderboard"))


def frontier_body(wh: Warehouse, case_id: str, scenarios: list[str]) -> str:
    """Every model at (normalized cost, CES capability), the Pareto tiers, the fitted frontier c0·c^d, the λ paths."""
    measures = readers.measures(wh, case_id)
    shape = readers.ces_shape(wh, case_id, list(measures.columns))
    params = readers.frontier_parameters(wh, case_id)
    costs = readers.published(wh, "compass.costs").query("case_id == @case_id").set_index("model_id")
    tiers = readers.tiers(wh, case_id).set_index("model_id")
    models = pd.DataFrame({"capability": ces_score(measures.to_numpy(), shape.a, shape.b)}, index=measures.index)
    models = models.join(costs[["cost", "raw_cost", "cost_column"]], how="inner").join(
        tiers[["tier", "pareto_efficient"]]).reset_index()
    models["hover"] = [f"{m}<br>tier {t}{' (Pareto-efficient)' if e else ''}<br>cost {r:g} ({c}), normalized {n:.3g}"
                       for m, t, e, r, c, n in zip(models["model_id"], models["tier"], models["pareto_efficient"],
                                                   models["raw_cost"], models["cost_column"], models["cost"])]
    positive = models["cost"][models["cost"] > 0]
    grid = np.geomspace(positive.min(), positive.max(), 200) if len(positive) else np.empty(0)
    curve = pd.DataFrame({"cost": grid, "capability": float(params["c0"]) * grid ** float(params["d"])})
    levels = costs.groupby("tier")["tier_cost"].first().rename("cost").reset_index()
    levels["level"] = [float(params.get(f"lambda_{t}", np.nan)) for t in levels["tier"]]
    figure = charts.capability_cost(models, curve, levels, f"{case_id}: capability vs normalized cost")
    parts = [charts.figure_div(figure, "chart-frontier"),
             f'<p class="note">CES frontier: b = {shape.b:.3f}, c0 = {float(params["c0"]):.3f}, '
             f'd = {float(params["d"]):.3f} (the envelope of the tier levels, ML Compass §4.4); weights ' + ", ".join(f"{f} {a:.3f}" for f, a in zip(shape.factors, shape.a))
             + ". Ringed points are Pareto-efficient.</p>"]
    paths = readers.published(wh, "compass.lambda_path")
    for i, scenario in enumerate(scenarios):
        path = paths[(paths["case_id"] == case_id) & (paths["scenario"] == scenario)] if len(paths) else paths
        if len(path):
            parts.append(charts.figure_div(charts.lambda_path(path, f"λ path, scenario {scenario}"),
                                           f"chart-lambda-{i}"))
    return "".join(parts)


def changes_body(wh: Warehouse) -> str:
    changes = readers.published(wh, "compass.leaderboard_changes")
    if changes.empty:
        return '<p class="note">No leaderboard published yet.</p>'
    real = changes[changes["change"] != "none"]
    quiet = changes[changes["change"] == "none"][["case_id", "scenario", "detail"]]
    cols = ["case_id", "scenario", "change", "model_id", "old_rank", "new_rank", "detail"]
    return (f"<p>{len(real)} change(s) on {real[['case_id', 'scenario']].drop_duplicates().shape[0]} leaderboard(s) "
            "since the previous refresh (new and dropped models, rank moves, a changed recommendation, with the "
            "reason).</p>" + table(real[cols].astype({"old_rank": object, "new_rank": object}), sortable=True)
            + "<h2>Leaderboards without changes</h2>" + table(quiet))


SLICES = [oracle.SLICE, cascades.SLICE, clusters.SLICE, router.SLICE, matching.SLICE, sources.SLICE]
# What a case's capability-cost page reads (frontier_body), its rows selected by case_id.
FRONTIER_READS = ("compass.measures", "compass.frontier", "compass.costs", "compass.tiers", "compass.lambda_path")


def provenance_body(wh: Warehouse) -> str:
    sources = readers.source_freshness(wh).merge(provenance.source_licences(), on="source", how="left")
    return (section("Sources: rows per raw table, as-of date, licence", sources,
                    "Licences from data/PROVENANCE.md (the embedded data); a source of your own config shows none.")
            + section("Warehouse tables", readers.table_counts(wh))
            + section("Raw names not imported (data/unmatched_names.csv)", provenance.unmatched_names()))


@dataclass
class Site:
    """A written site: every page (root-relative), those rewritten this time, the leaderboards it shows."""

    pages: list[str]
    rewritten: list[str]
    boards: dict[tuple[str, str], pd.DataFrame]


def build_site(wh: Warehouse, root: Path) -> Site:
    """Write the site under `root` (every read on one warehouse connection): the pages whose inputs changed since
    they were written (index, leaderboards, changes and provenance every time), dropping those of vanished
    leaderboards."""
    with wh.reading():
        boards = live_boards(wh)
        slices = [s for s in SLICES if wh.table_exists(s.table)]
        nav = ([("index.html", "Recommendations"), ("changes.html", "Changes")]
               + [(f"{s.name}.html", s.title) for s in slices] + [("provenance.html", "Provenance")])
        charts.write_plotly_js(root)
        site = SiteWriter(root, nav)
        site.write("index.html", "LLM Compass: recommendations", index_body(wh, boards))
        for (case_id, scenario), board in boards.items():
            site.write(board_href(case_id, scenario), f"{case_id} / {scenario}: leaderboard", leaderboard_body(board))
        for case_id in sorted({c for c, _ in boards}):
            scenarios = [s for c, s in boards if c == case_id]
            site.write(frontier_href(case_id), f"{case_id}: capability vs cost",
                       functools.partial(frontier_body, wh, case_id, scenarios), charts_used=True,
                       inputs=tables_digest(wh, FRONTIER_READS, {"case_id": case_id}, "|".join(scenarios)))
        site.write("changes.html", "Changes since the previous refresh", changes_body(wh))
        for s in slices:
            site.write(f"{s.name}.html", s.title, functools.partial(s.body, wh), charts_used=True,
                       inputs=tables_digest(wh, s.reads))
        site.write("provenance.html", "Provenance and freshness", provenance_body(wh))
        site.finish(["leaderboards", "frontier"])
        return Site(site.pages, site.rewritten, boards)
