"""The matching page: its verdict follows the numbers of matching.summary (never hard-coded), then a chart and
the table in USD and percentages."""

import re

import numpy as np
import pandas as pd

from compass.matching.study import SUMMARY_COLUMNS
from pipelines.report.pages.matching import matching_body, matching_verdict
from resources.warehouse import Warehouse


def summary(cupid_on_h2: float) -> pd.DataFrame:
    rows = []
    for user in ("h1", "h2"):
        for method, found in (("cheapest_feasible", 100.0), ("two_cheapest", 0.0), ("cheapest_stated", 0.0),
                              ("most_capable_affordable", 100.0 if user == "h1" else 0.0),
                              ("rucb", 30.0), ("cupid", 85.0 if user == "h1" else cupid_on_h2)):
            se = 100 * np.sqrt(found / 100 * (1 - found / 100) / 19)
            rows.append(dict(user=user, method=method, cost_mean=0.05, cost_sd=0.01, rounds_to_converge=2.0,
                             converged_pct=100.0, n_runs=20, over_budget_pct=0.0, cost_se=0.002, rounds_se=0.2,
                             converged_se=0.0, best_found_pct=found, best_found_se=se))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def test_the_verdict_is_computed_from_the_table():
    text = matching_verdict(summary(80.0))
    # the oracle lookup finds the best model in every run on both users: a ceiling, not a bar
    assert "on 1 of 2 users (h2: 80 ± 9 % against at most 0 %)" in text and "(h1)" in text and "ceiling" in text
    assert "does not beat every reference a person could run" in matching_verdict(summary(5.0))


def test_the_page_opens_with_the_verdict_then_a_chart_and_a_table_for_people(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("matching.summary", summary(80.0))
    page = matching_body(wh)
    assert page.startswith('<p class="verdict">CUPID finds the user')
    assert page.index("chart-matching") < page.index("<table")
    assert "$0.0500 ± $0.00200" in page and re.search(r"85 ± 8 %", page)


def test_the_papers_users_are_shown_beside_table_1(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    ours = summary(80.0).assign(user=lambda f: f["user"].map({"h1": "a1", "h2": "h2"}))
    wh.replace("matching.summary", ours)
    page = matching_body(wh)
    assert "Table 1 beside the paper" in page
    # CUPID on A1: ours $0.0500 ± $0.0100, the paper's $0.0560 ± $0.0160, CR 2.2, CP 100 %; RUCB's paper CP 0 % on A1
    assert "$0.0560 ± $0.0160" in page and "2.20" in page
