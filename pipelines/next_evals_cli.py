"""`compass next-evals`: the evaluations that would settle a decision, priced (issue 49; compass.next_evaluations).

Prints the decision now (the board's pick, its P(rank 1) and 90 % rank interval, and the chance that the
posterior-mean pick is not the best), the short list of the greedy batch (by expected regret drop, or by drop per
USD under --budget: the cells of that order that still fit), each cell's price and the pick if it came back high
(its predictive 90th percentile) or low (10th), and the chance of a wrong pick after the batch; then the outcome
evaluations worth most (a model's utility measured directly, `next_evaluations_outcome`), each valued on its own.
Every mistake in a flag is one line on stderr and exit code 2 (`pipelines.cli.main`).
"""

from __future__ import annotations

import argparse
import math

import pandas as pd

from compass.mlcompass.next_evaluations_decision import outcome_list, p_wrong_se, short_list
from pipelines.formatting import number, pct, usd

DEFAULT_K = 5
OUTCOME_SHOWN = 3  # outcome evaluations printed after the cells


def _flags(args: argparse.Namespace, usage_error: type[Exception]) -> tuple[int, float | None]:
    """(k, budget) from the raw flag strings, or `usage_error` naming the flag."""
    if not args.k.isdigit() or int(args.k) < 1:
        raise usage_error(f"--k must be a whole number >= 1, got {args.k!r}")
    budget = None
    if args.budget is not None:
        try:
            budget = float(args.budget)
        except ValueError:
            raise usage_error(f"--budget must be a positive number of US dollars, got {args.budget!r}") from None
        if not math.isfinite(budget) or budget <= 0:
            raise usage_error(f"--budget must be a positive number of US dollars, got {args.budget!r}")
    return int(args.k), budget


def report(case: str, scenario: str, table: pd.DataFrame, k: int, budget: float | None) -> str:
    """The text `compass next-evals` prints (module docstring)."""
    head = table.iloc[0]
    lines = [f"What to measure next: {case} / {scenario}",
             f"The decision now: {head['pick']} leads with P(rank 1) {pct(head['pick_p_rank1'], default_decimals=0)}, "
             f"90 % rank interval {int(head['pick_rank_lo'])}-{int(head['pick_rank_hi'])}; the posterior-mean pick "
             f"{head['pick_now']} is not the best with probability {pct(head['p_wrong_now'], default_decimals=0)}."]
    chosen, wrong = short_list(table, k, budget)
    if chosen.empty:
        cells = table[table["kind"].fillna("cell") == "cell"] if "kind" in table else table
        cheapest = cells.loc[cells["expected_reduction"] > 0, "cost_usd"].min()
        lines.append("No unmeasured cell is expected to change this decision." if budget is None or pd.isna(cheapest)
                     else f"No cell worth measuring fits {usd(budget)}; the cheapest costs {usd(cheapest)}.")
        return "\n".join(lines + outcome_lines(table, k, budget))
    by = "expected regret drop per USD" if budget is not None else "expected regret drop"
    lines.append(f"Measure ({by}, greedy; 'if high/low': the pick if the score came back at its 90th/10th percentile):")
    rows = [(str(i), r.model_id, r.benchmark, number(r.predicted), number(r.expected_reduction, 2), usd(r.cost_usd),
             r.pick_if_high, r.pick_if_low) for i, r in enumerate(chosen.itertuples(), 1)]
    header = ("#", "model", "benchmark", "predicted", "regret drop", "cost", "pick if high", "pick if low")
    widths = [max(len(row[j]) for row in [header, *rows]) for j in range(len(header))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in [header, *rows]]
    total = usd(chosen["cost_usd"].sum())
    after = (f"; P(wrong pick) {pct(head['p_wrong_now'], default_decimals=0)} -> "
             f"{pct(wrong, p_wrong_se(chosen, budget), default_decimals=0)} (± node error only, bootstrap "
             "draws held fixed)" if wrong is not None else "")
    lines.append(f"{len(chosen)} evaluations, {total} in all"
                 + (f" (budget {usd(budget)})" if budget is not None else "") + after + ".")
    if len(chosen) < k:
        lines.append(f"Only {len(chosen)} cells add value or fit; the others would not move this decision.")
    return "\n".join(lines + outcome_lines(table, k, budget))


def outcome_lines(table: pd.DataFrame, k: int, budget: float | None) -> list[str]:
    """The outcome evaluations worth most (`outcome_list`), each on its own; nothing when none has value."""
    rows = outcome_list(table, min(k, OUTCOME_SHOWN), budget)
    if rows.empty:
        return []
    head = rows.iloc[0]
    lines = [f"Or evaluate one model's outcome directly (each on its own, not a batch; {int(head['n_queries'])} "
             f"queries of the case's outcome data sets, outcome sd {number(head['outcome_sd'], 3)}):"]
    body = [(r.model_id, number(r.predicted), number(r.expected_reduction, 2), usd(r.cost_usd), r.pick_if_high,
             r.pick_if_low) for r in rows.itertuples()]
    header = ("model", "score now", "regret drop", "cost", "pick if high", "pick if low")
    widths = [max(len(row[j]) for row in [header, *body]) for j in range(len(header))]
    return lines + ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in [header, *body]]


def cmd_next_evals(args: argparse.Namespace) -> int:
    from pipelines.cli import UsageError, _warehouse, choices, known_case
    from resources.configs import scenario_files

    k, budget = _flags(args, UsageError)
    known_case(args.case)
    if args.scenario not in scenario_files():
        raise UsageError(f"unknown scenario {args.scenario!r}; shipped scenarios: {choices(scenario_files())}")
    wh = _warehouse()
    where = {"case_id": args.case, "scenario": args.scenario}
    if not wh.table_exists("compass.next_evaluations") or not wh.table_exists("compass.leaderboards") \
            or wh.read("compass.leaderboards", where).empty:
        raise UsageError(f"no decision for case {args.case!r}, scenario {args.scenario!r}; run `compass run` first")
    table = wh.read("compass.next_evaluations", where)
    if table.empty:
        raise UsageError(f"case {args.case!r}, scenario {args.scenario!r}: every benchmark of every ranked model "
                         "is measured or not for sale (votes, unpriced agentic runs); nothing to suggest")
    print(report(args.case, args.scenario, table, k, budget))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("next-evals", help="the evaluations that would settle a decision, priced, with the pick if "
                                          "each came back high or low")
    p.add_argument("--case", required=True)
    p.add_argument("--scenario", required=True, help="a shipped scenario's name (file stem in scenarios/)")
    p.add_argument("--budget", help="US dollars to spend: the cells by expected regret drop per USD that fit")
    p.add_argument("--k", default=str(DEFAULT_K), help=f"at most this many evaluations (default {DEFAULT_K})")
    p.set_defaults(func=cmd_next_evals)
