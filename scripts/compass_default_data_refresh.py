"""What the default-data refresh (issue 36 item 6) changed at the top of each scenario's leaderboard.

Compares two materialized warehouses, the one built from the previous embedded data and the one
built from the refreshed data, and prints the markdown of docs/results/mlcompass.md's section
"Default data refreshed to mid-2026": per case, the catalog (models, organisations, newest release
date) and per scenario the top 5 before and after, the models new to the top 10 and the ranks of
the mid-2026 models named in the issue.

Usage: .venv/bin/python scripts/compass_default_data_refresh.py BEFORE.duckdb AFTER.duckdb
"""

from __future__ import annotations

import sys

import pandas as pd

from pipelines.formatting import count, pct
from resources.warehouse import Warehouse

SCENARIOS = ["pure_capability", "cost_aware_low", "cost_aware_high", "constrained_single", "constrained_all"]
WATCH = ["gpt-5.5", "gpt-5.5-pro", "claude-opus-5", "claude-fable-5", "claude-opus-4-8", "gemini-3.7-flash", "gpt-5.6-sol"]
TOP = 5


def read(path: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    wh = Warehouse(path)
    with wh.reading():
        boards = wh.read("compass.leaderboards")[["case_id", "scenario", "rank", "model_id", "score", "imputed_share"]]
        catalog = wh.read("compass.case_catalog")[["case_id", "model_id", "organization", "release_date"]]
    return boards, catalog


def top(boards: pd.DataFrame, case: str, scenario: str, n: int) -> list[str]:
    part = boards[(boards["case_id"] == case) & (boards["scenario"] == scenario)].sort_values("rank")
    return list(part["model_id"].head(n))


def imputed(boards: pd.DataFrame, case: str, scenario: str, n: int) -> str:
    """Mean share of imputed x_raw cells over the top n (how much of their rank rests on imputation)."""
    part = boards[(boards["case_id"] == case) & (boards["scenario"] == scenario)].sort_values("rank").head(n)
    return pct(part["imputed_share"].mean(), default_decimals=0)


def catalog_line(catalog: pd.DataFrame, case: str) -> str:
    part = catalog[catalog["case_id"] == case]
    return (f"{count(len(part))} models, {count(part['organization'].nunique())} organisation spellings, "
            f"newest release {pd.Timestamp(part['release_date'].max()).date()}")


def section(before: tuple[pd.DataFrame, pd.DataFrame], after: tuple[pd.DataFrame, pd.DataFrame]) -> str:
    (b_boards, b_cat), (a_boards, a_cat) = before, after
    out = []
    for case in sorted(a_boards["case_id"].unique()):
        out += [f"### Case `{case}`\n", f"* catalog before: {catalog_line(b_cat, case)}",
                f"* catalog after: {catalog_line(a_cat, case)}\n"]
        rows = []
        for scenario in SCENARIOS:
            old, new = top(b_boards, case, scenario, 10), top(a_boards, case, scenario, 10)
            board = a_boards[(a_boards["case_id"] == case) & (a_boards["scenario"] == scenario)].set_index("model_id")
            watched = [f"{m} #{int(board.loc[m, 'rank'])}" for m in WATCH if m in board.index]
            rows.append({
                "scenario": scenario, f"top {TOP} before": ", ".join(old[:TOP]), f"top {TOP} after": ", ".join(new[:TOP]),
                f"imputed, top {TOP} before / after": f"{imputed(b_boards, case, scenario, TOP)} / "
                                                       f"{imputed(a_boards, case, scenario, TOP)}",
                "new in the top 10": ", ".join(m for m in new if m not in old) or "none",
                "mid-2026 models ranked": ", ".join(watched) or "none",
            })
        out += [pd.DataFrame(rows).to_markdown(index=False), ""]
    return "\n".join(out)


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    print(section(read(argv[0]), read(argv[1])))


if __name__ == "__main__":
    main(sys.argv[1:])
