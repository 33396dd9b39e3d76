"""Decisions a person can act on (issue 42 item 7), measured on a warehouse: per case x scenario the point leader,
the P(rank 1) leader and the decision rule's pick (the cheapest feasible model within the tolerance of the leader's
score), with prices; next to them what the board and the near-tie sentence showed before (the 10-row board; the
cheapest model of the whole noise group).

    python scripts/mlcompass_decisions.py --db var/warehouse.duckdb [--top 10]

Prints the markdown of `docs/results/mlcompass.md`, "Decisions a person can act on". Reads only: the published
leaderboards, rank intervals and bootstrap replicates, and the scenario files of this checkout.
"""

from __future__ import annotations

import argparse

import pandas as pd

from compass.mlcompass import decisions as dec
from compass.mlcompass.decision_rule import shown_rows
from pipelines.summary import COST_UNITS
from resources import readers
from resources.configs import cases, scenario_for
from resources.warehouse import Warehouse


def _price(row: pd.Series) -> str:
    unit = COST_UNITS.get(row["cost_column"], row["cost_column"])
    raw = f"${row['raw_cost']:.3g}/Mtok" if unit == "$/Mtok" else f"{row['raw_cost']:.3g} {unit}"
    return f"{raw}, c={row['cost']:.3f}"


def board_decision(wh: Warehouse, case_id: str, scenario_name: str, top: int) -> dict:
    """One results row: the three picks with prices, the old near-tie pick and the rows the board gained."""
    case = cases()[case_id]
    where = {"case_id": case_id, "scenario": scenario_name}
    scenario = dec.numeric_lambda(scenario_for(scenario_name, case), case)
    board = wh.read("compass.leaderboards", where).sort_values("rank").reset_index(drop=True)
    board = board.merge(readers.prices(wh, case_id)[["model_id", "cost_column"]], on="model_id", how="left")
    ranks = wh.read("compass.rank_uncertainty", where)
    costs = wh.read("compass.costs", {"case_id": case_id}).set_index("model_id")["cost"]
    replicates = readers.rank_replicates(wh, case_id)
    picks = dec.decision_rows(board, ranks, scenario, replicates, costs).set_index("rule")
    board = board.merge(ranks[["model_id", "p_rank1", "near_leader"]], on="model_id", how="left").set_index("model_id")
    group = board[board["near_leader"].fillna(False).astype(bool)]
    old = group.sort_values(["cost", "rank"], kind="mergesort").iloc[0] if len(group) > 1 else board.iloc[0]
    gained = len(shown_rows(board.reset_index(), top)) - min(top, len(board))

    def pick(rule: str) -> str:
        m = picks.loc[rule, "model_id"]
        r = board.loc[m]
        return (f"{m} (#{int(r['rank'])}, P1 {100 * r['p_rank1']:.0f} %, {_price(r)}, "
                f"gap {picks.loc[rule, 'score_gap']:.2g})")

    leader = board.iloc[0]
    return {"case": case_id, "scenario": scenario_name, "point leader": pick("point_leader"),
            "P(rank 1) leader": pick("p_rank1_leader"), "tolerance": f"{picks['tolerance'].iloc[0]:.3g}",
            "cheapest within tolerance": pick("tolerance_pick"),
            "before: near-tie 'cheapest'": (f"{old.name} (gap {leader['score'] - old['score']:.2g}, "
                                            f"{len(group)} in the noise group)"),
            f"rows added to the {top}-row board": gained}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    wh = Warehouse(args.db)
    pairs = readers.leaderboard_pairs(wh)
    rows = pd.DataFrame([board_decision(wh, c, s, args.top) for c, s in pairs.itertuples(index=False)])
    print(rows.to_markdown(index=False))
    added = rows[f"rows added to the {args.top}-row board"]
    print(f"\n{int((added > 0).sum())} of {len(rows)} boards gained rows ({int(added.sum())} in all) for models with "
          f"P(rank 1) >= 10 % or the highest P(rank 1) beyond point rank {args.top}; the tolerance pick differs from "
          f"the point leader on {int((rows['cheapest within tolerance'].str.split(' ').str[0] != rows['point leader'].str.split(' ').str[0]).sum())} "
          f"of {len(rows)}.")


if __name__ == "__main__":
    main()
