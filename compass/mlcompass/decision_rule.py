"""A decision a person can act on, next to the ranking (issue 42 item 7; ML Compass §4.6 leaderboard, with the
bootstrap of `rank_uncertainty`).

A scenario's leaderboard ranks the feasible models by Score_s(m) = Agg_z Û(x(m); z) - lam c(m) (§4.6). Its
rank 1 (the point leader) can win by less than the estimates can resolve, and the bootstrap's most frequent
rank 1 (the P(rank 1) leader) can sit far down the point order. Three picks are stated side by side:

  * point_leader: rank 1 of the leaderboard (problem (7) over the feasible models);
  * p_rank1_leader: the model with the highest P(rank 1) over the bootstrap replicates (ties: better point rank);
  * tolerance_pick: the rule "the cheapest feasible model whose score is within `tolerance` of the leader's"
    (ties: better point rank). `tolerance` is in utility-score units: the scenario's `tolerance` key, or by
    default the bootstrap's median gap between each replicate's rank-1 and rank-2 scores
    (`rank_uncertainty.top_gap`): a score difference the size the estimates typically put between the best
    two models is not one to pay for.

The board a person reads always shows the P(rank 1) leader and every model with P(rank 1) >= `P_RANK1_SHOWN`,
whatever their point rank (`shown_rows`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.rank_uncertainty import top_gap
from compass.mlcompass.recommend import TIE_DECIMALS

__all__ = ["P_RANK1_SHOWN", "DECISION_COLUMNS", "plain", "resolve_tolerance", "tolerance_pick", "decision_frame",
           "shown_rows", "decision_text"]

# Every model at least this likely to be rank 1 is on the board, whatever its point rank.
P_RANK1_SHOWN = 0.10
RULES = {"point_leader": "point leader", "p_rank1_leader": "P(rank 1) leader",
         "tolerance_pick": "cheapest within tolerance"}
DECISION_COLUMNS = ["rule", "model_id", "rank", "score", "score_gap", "utility", "cost", "raw_cost", "p_rank1",
                    "tolerance", "tolerance_source"]
SCENARIO_SOURCE = "scenario key `tolerance`"
BOOTSTRAP_SOURCE = "bootstrap median gap between the rank-1 and rank-2 scores"
NO_BOOTSTRAP_SOURCE = "no bootstrap replicates: 0, the rule picks the point leader"


def plain(x: float) -> str:
    """A score difference with 3 significant digits in positional notation (2.9e-05 -> "0.000029")."""
    return np.format_float_positional(float(x), precision=3, unique=True, fractional=False, trim="-")


def resolve_tolerance(tolerance: float | None, score: np.ndarray | None) -> tuple[float, str]:
    """(tolerance, where it comes from): the scenario's own, else `top_gap` of the replicate scores (B, n) of the
    leaderboard's models, else 0 when there are no replicates."""
    if tolerance is not None:
        return float(tolerance), SCENARIO_SOURCE
    if score is None:
        return 0.0, NO_BOOTSTRAP_SOURCE
    return top_gap(score), BOOTSTRAP_SOURCE


def tolerance_pick(board: pd.DataFrame, tolerance: float) -> pd.Series:
    """The cheapest row of `board` (a leaderboard: rank, model_id, score, cost; feasible models only) whose
    score is within `tolerance` of the leader's; ties go to the better point rank."""
    if board.empty:
        raise ValueError("an empty leaderboard has no pick")
    best = float(board["score"].max())
    within = board[board["score"].round(TIE_DECIMALS) >= round(best - tolerance, TIE_DECIMALS)]
    return within.sort_values(["cost", "rank"], kind="mergesort").iloc[0]


def _p_rank1(board: pd.DataFrame) -> pd.Series:
    """P(rank 1) of each row as a number (NaN where the bootstrap gave none)."""
    return pd.to_numeric(board["p_rank1"], errors="coerce") if "p_rank1" in board else pd.Series(np.nan, index=board.index)


def decision_frame(board: pd.DataFrame, tolerance: float, source: str) -> pd.DataFrame:
    """The three picks (`RULES`) of a leaderboard `board` (rank, model_id, score, utility, cost, optionally
    raw_cost (the case's own cost unit) and, where the bootstrap ran, p_rank1): DECISION_COLUMNS, score_gap = the leader's score minus the pick's. No rows for an
    empty board; no p_rank1_leader row without P(rank 1)."""
    if board.empty:
        return pd.DataFrame(columns=DECISION_COLUMNS)
    ordered = board.sort_values("rank", kind="mergesort")
    picks = {"point_leader": ordered.iloc[0]}
    p = _p_rank1(ordered)
    if p.notna().any():
        picks["p_rank1_leader"] = ordered.loc[p.fillna(-1.0).idxmax()]  # first maximum in rank order
    picks["tolerance_pick"] = tolerance_pick(ordered, tolerance)
    leader = float(ordered["score"].iloc[0])
    rows = [{"rule": rule, "model_id": r["model_id"], "rank": int(r["rank"]), "score": float(r["score"]),
             "score_gap": leader - float(r["score"]), "utility": float(r["utility"]), "cost": float(r["cost"]),
             "raw_cost": float(r.get("raw_cost", np.nan)), "p_rank1": float(r.get("p_rank1", np.nan)), "tolerance": float(tolerance), "tolerance_source": source}
            for rule, r in picks.items()]
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def shown_rows(board: pd.DataFrame, top: int, p_min: float = P_RANK1_SHOWN) -> pd.DataFrame:
    """The first `top` rows of `board` (in rank order) and, appended below them with their point rank, the
    P(rank 1) leader and every model with P(rank 1) >= `p_min` that the first rows leave out."""
    ordered = board.sort_values("rank", kind="mergesort")
    p = _p_rank1(ordered)
    if p.isna().all():
        return ordered.head(top)
    keep = np.zeros(len(ordered), dtype=bool)
    keep[:top] = True
    keep |= (p >= p_min - 1e-12).to_numpy()
    keep[int(np.argmax(p.fillna(-1.0).to_numpy()))] = True
    return ordered[keep]


def decision_text(decision: pd.DataFrame, prices: pd.Series | None = None) -> list[str]:
    """The rule stated with its tolerance, then one line per pick: its rule, model, point rank, P(rank 1), score gap
    to the leader and its price (`prices[model_id]`, a price text, where given; else the normalized cost)."""
    if decision.empty:
        return []
    lines = []
    for r in decision.itertuples():
        cost = prices[r.model_id] if prices is not None and r.model_id in prices else f"normalized cost {r.cost:.3f}"
        p1 = f", P(rank 1) {100 * r.p_rank1:.0f} %" if r.p_rank1 == r.p_rank1 else ""
        gap = "the leader's score" if r.score_gap <= 0 else f"{plain(r.score_gap)} below the leader's score"
        lines.append(f"  {RULES[r.rule] + ':':<28}{r.model_id} (rank {r.rank}{p1}; score {r.score:.4f}, {gap}; {cost})")
    first = decision.iloc[0]
    return ([f"decision rule: the cheapest feasible model whose score is within {plain(first['tolerance'])} of the "
             f"leader's ({first['tolerance_source']})"] + lines)
