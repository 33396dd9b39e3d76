"""The matchmaking page (seed 004, CUPID): a verdict computed from matching.summary (does CUPID beat every
reference a person could run beyond its standard error, and on which users; the oracle lookup is a ceiling), a chart of best-model-found
rate against cost per method, and the table formatted for people."""

from __future__ import annotations

import pandas as pd

from compass.matching.paper import table_1 as paper_table_1
from compass.matching.study import CEILINGS, METHOD_LABELS, PERSON_REFERENCES, REFERENCES
from compass.matching.verdict import advantages, claimed_users
from pipelines.formatting import number, pct, usd
from pipelines.report import charts
from pipelines.report.html import verdict
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse

NEEDED = {"best_found_pct", "best_found_se", "cost_se"}


def matching_verdict(summary: pd.DataFrame) -> str:
    """One sentence from the table: the users where CUPID's best-model-found rate beats every reference a person could
    run by more than the SE of the difference, and what happens elsewhere."""
    if "cupid" not in set(summary["method"]) or not set(REFERENCES) <= set(summary["method"]):
        return "CUPID or a reference row was not run: no comparison (run every method of matching/runs)."
    users = list(dict.fromkeys(summary["user"]))
    won = claimed_users(summary)
    table = advantages(summary)
    refs = table[table["versus"].isin(PERSON_REFERENCES)]
    if not won:
        worst = refs.loc[refs["difference"].idxmin()]
        return (f"CUPID does not beat every reference a person could run on any of the {len(users)} users: e.g. on "
                f"{worst['user']} it finds the best model {number(worst['difference'], 2)} points more often than "
                f"\"{METHOD_LABELS[worst['versus']]}\" (± {number(worst['se'], 2)}).")
    by = summary.set_index(["user", "method"])
    shown = ", ".join(f"{u}: {pct(by.loc[(u, 'cupid'), 'best_found_pct'] / 100, by.loc[(u, 'cupid'), 'best_found_se'] / 100, 0)}"
                      f" against at most {pct(max(by.loc[(u, r), 'best_found_pct'] for r in PERSON_REFERENCES) / 100, None, 0)}"
                      for u in won)
    others = [u for u in users if u not in won]
    rest = (f"; on the other {len(others)} users ({', '.join(others)}) a reference a person could run does as well "
            "or better, so no advantage is claimed there") if others else ""
    return (f"CUPID finds the user's best model more often than every reference a person could run, beyond the "
            f"standard error, on {len(won)} of {len(users)} users ({shown}){rest}; the oracle lookup, told the "
            "user's hidden constraints, is a ceiling, not a bar.")


def people_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with costs in USD and rates as percentages ± SE."""
    return pd.DataFrame({
        "user": summary["user"], "method": summary["method"].map(METHOD_LABELS).fillna(summary["method"]),
        "cost": [f"{usd(m)} ± {usd(s if s > 1e-9 else 0.0)}" for m, s in zip(summary["cost_mean"], summary["cost_se"], strict=True)],
        "rounds to converge": summary["rounds_to_converge"].map(lambda v: number(v, 2)),
        "converged": [pct(c / 100, s / 100, 0) for c, s in zip(summary["converged_pct"], summary["converged_se"].fillna(0), strict=True)],
        "best model found": [pct(b / 100, s / 100, 0) for b, s in zip(summary["best_found_pct"], summary["best_found_se"].fillna(0), strict=True)],
        "runs over budget": (summary["over_budget_pct"] / 100).map(lambda v: pct(v, None, 0)),
        "runs": summary["n_runs"].astype(int)})


def beside_the_paper(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 1's rows for the paper's users present in the summary: ours beside the paper's (cost mean ± sd, CR, CP)."""
    paper = paper_table_1()
    both = summary.merge(paper, on=["user", "method"], suffixes=("", "_paper"))
    if both.empty:
        return both
    def cost(mean: pd.Series, sd: pd.Series) -> list[str]:
        return [f"{usd(m)} ± {usd(s)}" for m, s in zip(mean, sd, strict=True)]
    return pd.DataFrame({
        "user": both["user"], "method": both["method"].map(METHOD_LABELS),
        "cost (ours)": cost(both["cost_mean"], both["cost_sd"]), "cost (paper)": cost(both["cost_mean_paper"], both["cost_sd_paper"]),
        "CR (ours)": both["rounds_to_converge"].map(lambda v: number(v, 2)),
        "CR (paper)": both["rounds_to_converge_paper"].map(lambda v: number(v, 3)),
        "CP (ours)": (both["converged_pct"] / 100).map(lambda v: pct(v, None, 0)),
        "CP (paper)": (both["converged_pct_paper"] / 100).map(lambda v: pct(v, None, 1))})


def matching_body(wh: Warehouse) -> str:
    summary = readers.published(wh, "matching.summary")
    if summary.empty or not NEEDED <= set(summary.columns):
        return '<p class="note">matching.summary is missing or predates the best-model-found columns: run `compass run`.</p>'
    frame = summary.assign(label=summary["method"].map(METHOD_LABELS).fillna(summary["method"]),
                           lo=summary["best_found_pct"] - summary["best_found_se"].fillna(0),
                           hi=summary["best_found_pct"] + summary["best_found_se"].fillna(0))
    fig = charts.points_with_intervals(frame, "cost_mean", "best_found_pct", "label",
                                       "Best model found (% of runs, ± SE) against cost (USD) per method; one colour per user",
                                       "lo", "hi", group="user", log_x=True)
    note = ("Simulated users (users/*.yaml) with the LLM-free judge of spec-004 §5; cost is the spend up to convergence "
            "(all rounds when a run does not converge). Reference rows a person could run (no duels): "
            + ", ".join(f'"{METHOD_LABELS[r]}"' for r in PERSON_REFERENCES) + "; a ceiling: "
            + ", ".join(f'"{METHOD_LABELS[r]}"' for r in CEILINGS) + ". docs/results/matching.md compares with the paper.")
    paper = beside_the_paper(summary)
    paper_note = ("The paper's users with its Table 1 (an LLM judge, live API bills, 5 runs); compare orderings and "
                  "CP classes, not values. Every deviation is named in docs/results/matching.md.")
    return (verdict(matching_verdict(summary)) + charts.figure_div(fig, "chart-matching")
            + section("Per user and method (mean ± standard error over seeds)", people_table(summary), note)
            + (section("Table 1 beside the paper (A1-A4, cost mean ± sd)", paper, paper_note) if len(paper) else ""))


SLICE = Slice("matching", "Matching", "matching.summary", matching_body, ("matching.summary",))
