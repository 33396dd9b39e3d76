"""`compass match`: a person's matchmaking session in the terminal (CUPID §4.4; compass.matching.interactive).

Each round shows two anonymous models' real answers to the same prompt side by side; the person types
A or B (q ends the session) and may type a change request ("cheaper", "more concise", ...). HEART-UCB
picks the pairs; a pair whose two answers would overrun the budget is never shown. At the end the
matched model is named with the evidence: its duels, the posterior, the spend.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import numpy as np

from compass.matching.heart import HeartUCB
from compass.matching.interactive import answer_costs, request_mask, side_by_side
from resources.matching import answers, priced_pool

SHIPPED_ANSWERS = "arena_bench_v1"


def _ask(prompt: str, stdin: TextIO, out: TextIO) -> str | None:
    """One line from the person, None at the end of input."""
    out.write(prompt)
    out.flush()
    line = stdin.readline()
    return None if line == "" else line.strip()


def _pick(stdin: TextIO, out: TextIO) -> str | None:
    while (choice := _ask("Which answer is better? [A/B, q to stop] ", stdin, out)) is not None:
        if choice.lower() in ("a", "b", "q"):
            return choice.lower()
        out.write("please type A, B or q\n")
    return None


def run_match(args: argparse.Namespace, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    responses = None if args.pool == SHIPPED_ANSWERS else args.pool
    table = answers(responses)
    pool, unpriced = priced_pool(table, args.pool)
    if unpriced:
        out.write(f"left out (no catalog price): {', '.join(unpriced)}\n")
    if pool.size < 2:
        out.write("fewer than two models with a price: no duel possible\n")
        return 2
    table = table[table["model"].isin(pool.models)]
    costs = answer_costs(table, pool).dropna()  # prompts every pool model answered
    prompts = table.drop_duplicates("question_id").set_index("question_id")["prompt"]
    texts = table.set_index(["question_id", "model"])["response"]
    mean_length = table.groupby("model")["response"].apply(lambda s: s.str.len().mean()).reindex(list(pool.models)).to_numpy()
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(costs.index.to_numpy())[: args.rounds]
    matcher = HeartUCB(None, pool.cost_proxy, costs.mean().to_numpy(), args.budget, args.rounds, args.seed)
    out.write(f"{pool.size} models, budget ${args.budget:.4f}, up to {args.rounds} rounds.\n")
    first = _ask("What are you looking for? (optional, e.g. 'cheap', 'concise') ", stdin, out) or ""
    matcher.feedback(request_mask(first, pool, None, mean_length))
    spent, duels = 0.0, []
    for t, question in enumerate(order, start=1):
        matcher.call_cost = costs.loc[question].to_numpy()
        pair = matcher.select(t, args.budget - spent)
        if pair is None:
            out.write(f"\nNo pair of answers fits the remaining ${args.budget - spent:.4f}: stopping.\n")
            break
        i, j = pair
        out.write(f"\n=== Round {t} (spent ${spent:.4f} of ${args.budget:.4f}) ===\nPrompt: {prompts[question]}\n\n")
        out.write(side_by_side(texts[(question, pool.models[i])], texts[(question, pool.models[j])],
                               max_lines=args.max_lines) + "\n")
        choice = _pick(stdin, out)
        if choice in (None, "q"):
            break
        request = _ask("Change request (optional): ", stdin, out) or ""
        cost = float(matcher.call_cost[i] + matcher.call_cost[j])
        matcher.observe(t, i, j, choice == "a", cost)
        spent += cost
        winner = i if choice == "a" else j
        duels.append((t, i, j, winner))
        matcher.feedback(request_mask(request, pool, winner, mean_length))
    out.write(evidence(matcher, pool, duels, spent, args.budget))
    return 0


def evidence(matcher: HeartUCB, pool, duels: list[tuple[int, int, int, int]], spent: float, budget: float) -> str:
    """The matched model and why: posterior utility, its duels, the spend."""
    if not duels:
        return "\nNo duel was decided: no match.\n"
    best = matcher.best()
    mean, sd = matcher.posterior()
    utility, spread = mean @ matcher.belief, sd @ matcher.belief
    lines = [f"\nYour match: {pool.models[best]}  (posterior utility {utility[best]:+.2f} ± {spread[best]:.2f}; "
             f"price ${pool.price_in[best]:g} / ${pool.price_out[best]:g} per 1M tokens in / out)"]
    for t, i, j, winner in duels:
        if best in (i, j):
            other = j if best == i else i
            lines.append(f"  round {t}: {'beat' if winner == best else 'lost to'} {pool.models[other]}")
    runner_up = [m for m in np.argsort(-utility) if m != best][:2]
    lines.append("  next best: " + ", ".join(f"{pool.models[m]} ({utility[m]:+.2f})" for m in runner_up))
    lines.append(f"Spent ${spent:.4f} of ${budget:.4f} over {len(duels)} rounds.")
    return "\n".join(lines) + "\n"


def run_simulated(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """A simulated person (a user YAML, spec-004 §5) through one session; optionally the session's scenario."""
    from pathlib import Path

    from compass.matching.bridge import session_scenario
    from compass.matching.heart import HeartOptions
    from compass.matching.study import Session, simulate_session
    from resources.matching import load_user, token_model, write_scenario
    from resources.warehouse import Warehouse

    user, pool = load_user(Path(args.simulate), Warehouse())
    session = Session(pool, user, token_model().call_cost(pool), HeartOptions(model_inputs=args.inputs))
    result = simulate_session("cupid", session, args.seed)
    runs = result.runs
    out.write(runs[["round", "pair", "winner", "cumulative_cost_usd", "best_so_far", "feasible"]].to_string(index=False) + "\n")
    if runs.empty:
        out.write("no duel fits the budget\n")
        return 2
    out.write(f"\nMatched: {runs['best_so_far'].iloc[-1]} after {len(runs)} duels, ${runs['cumulative_cost_usd'].iloc[-1]:.4f} "
              f"of ${user.budget_usd:.4f}\n")
    if args.export_scenario:
        name = Path(args.export_scenario).stem
        spec, notes = session_scenario(name, result.matcher, runs, result.requests, user.constraints, pool)
        out.write(f"scenario written: {write_scenario(args.export_scenario, spec, notes)}\n")
    return 0


def add_parser(sub) -> None:
    match = sub.add_parser("match", help="find your model by picking between answers (CUPID, seed 004)")
    match.add_argument("--pool", default=SHIPPED_ANSWERS,
                       help=f"{SHIPPED_ANSWERS} (the 17 models x 300 prompts shipped in data/matching/) or the path "
                            "of your own CSV with columns prompt, model, response")
    match.add_argument("--budget", type=float, default=0.05, help="USD for the whole session")
    match.add_argument("--rounds", type=int, default=10)
    match.add_argument("--seed", type=int, default=0)
    match.add_argument("--max-lines", dest="max_lines", type=int, default=30, help="lines shown per answer")
    match.add_argument("--simulate", metavar="USER_YAML", help="run a simulated person (a user file) instead of you")
    match.add_argument("--inputs", choices=["onehot", "metadata"], default="metadata",
                       help="GP inputs of a simulated session (metadata lets utility generalize over the catalog)")
    match.add_argument("--export-scenario", dest="export_scenario", metavar="YAML",
                       help="with --simulate: write the session's scenario (weights, floors, filters) for compass leaderboard")
    match.set_defaults(func=lambda args: run_simulated(args) if args.simulate else run_match(args))
