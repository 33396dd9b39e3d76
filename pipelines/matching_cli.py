"""`compass match`: a person's matchmaking session in the terminal (CUPID §4.4; compass.matching.interactive).

Each round shows two anonymous models' real answers to the same prompt side by side; the person types
A or B (q ends the session) and may type a change request ("cheaper", "more concise", ...). HEART-UCB
picks the pairs; a pair whose two answers would overrun the budget is never shown. At the end the
matched model is named with the evidence: its duels, the posterior, the spend; with --export-scenario
the session's scenario (utility weights over a case's measures, "cheaper" as a cost sensitivity) is
written for `compass leaderboard`.

Every mistake in a flag or an input file is one line on stderr naming the file, key or flag and the fix,
exit code 2, and nothing written; everything is checked before the first duel.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

from compass.ingest.errors import IngestError
from compass.matching.bridge import MEASURE, learned_weights, scenario_from_session
from compass.matching.heart import HeartUCB
from compass.matching.interactive import answer_costs, request_mask, scenario_requests, side_by_side
from resources.matching import answers, model_prices, priced_pool

SHIPPED_ANSWERS = "arena_bench_v1"


class FlagError(ValueError):
    """A bad command-line flag; the message names the flag and the fix."""


def _ask(prompt: str, stdin: TextIO, out: TextIO) -> str | None:
    """One line from the person, None at the end of input."""
    out.write(prompt)
    out.flush()
    line = stdin.readline()
    return None if line == "" else line.strip()


PICK_PROMPT = "Which answer is better? [A or B, a change request may follow, e.g. 'A cheaper'; q to stop] "
PICK = re.compile(r"([abq])(?:[\s:,.;-]+(.*))?", re.IGNORECASE)


def _pick(stdin: TextIO, out: TextIO) -> tuple[str, str] | None:
    """One question a round: the pick and, on the same line, an optional change request ("a cheaper"); a second
    prompt after the pick mixed up people's first keystrokes (issue 48). None at the end of input."""
    while (line := _ask(PICK_PROMPT, stdin, out)) is not None:
        if match := PICK.fullmatch(line):
            return match.group(1).lower(), (match.group(2) or "").strip()
        out.write("please type A or B (a change request may follow on the same line), or q\n")
    return None


def price_lines(prices) -> str:
    """Where each model's price comes from, and each model left out with its reason (none is dropped silently)."""
    priced = prices[prices["reason"].isna()]
    lines = [f"{len(priced)} of {len(prices)} models priced (USD per 1M tokens, input / output):\n"]
    lines += [f"  {m}: ${r.input_usd_per_mtok:.2f} / ${r.output_usd_per_mtok:.2f} from {r.price_source}\n"
              for m, r in priced.iterrows()]
    lines += [f"left out: {m} ({reason})\n" for m, reason in prices["reason"].dropna().items()]
    if len(priced) < len(prices):
        lines.append("give your CSV input_price and output_price columns (USD per 1M tokens) to include them\n")
    return "".join(lines)


#: The most duels one session asks of a person, who answers each one.
MAX_ROUNDS = 1000


def check_flags(args: argparse.Namespace) -> None:
    """--rounds, --budget, --max-lines, --seed and --export-scenario, before anything runs."""
    if not 1 <= args.rounds <= MAX_ROUNDS:
        raise FlagError(f"--rounds {args.rounds}: give a whole number of duels from 1 to {MAX_ROUNDS} (a person answers "
                        "each one; e.g. --rounds 10)")
    if not (math.isfinite(args.budget) and args.budget > 0):
        raise FlagError(f"--budget {args.budget:g}: give the session's money budget in USD > 0 (e.g. --budget 0.05)")
    if args.max_lines < 1:
        raise FlagError(f"--max-lines {args.max_lines}: give a number of lines >= 1")
    if args.seed < 0:
        raise FlagError(f"--seed {args.seed}: give a whole number >= 0 (e.g. --seed 0)")
    if args.export_scenario:
        target = Path(args.export_scenario)
        if target.suffix not in (".yaml", ".yml"):
            raise FlagError(f"--export-scenario {target}: the scenario is a YAML file; end its name in .yaml")
        if not target.parent.is_dir():
            raise FlagError(f"--export-scenario {target}: folder {target.parent} does not exist; create it first")
        if not args.simulate and not args.case:
            raise FlagError("--export-scenario needs --case <case_id> in a person's session: the scenario's weights are "
                            "over that case's measures (e.g. --case frontier_api)")


def run_match(args: argparse.Namespace, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    responses = None if args.pool == SHIPPED_ANSWERS else args.pool
    table = answers(responses)
    pool, unpriced = priced_pool(table, args.pool)
    out.write(price_lines(model_prices(table)))
    if pool.size < 2:
        raise IngestError(str(args.pool), None, "model", "fewer than two models with a price: no duel possible; add "
                          "input_price and output_price columns (USD per 1M tokens)")
    measures = _export_measures(args, list(pool.models)) if args.export_scenario else None
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
    spent, duels, requests = 0.0, [], [first]
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
        picked = _pick(stdin, out)
        if picked is None or picked[0] == "q":
            break
        choice, request = picked
        cost = float(matcher.call_cost[i] + matcher.call_cost[j])
        matcher.observe(t, i, j, choice == "a", cost)
        spent += cost
        winner = i if choice == "a" else j
        duels.append((t, i, j, winner))
        requests.append(request)
        matcher.feedback(request_mask(request, pool, winner, mean_length))
    out.write(evidence(matcher, pool, duels, spent, args.budget))
    if measures is not None and duels:
        seen = np.zeros(pool.size, bool)
        seen[[m for _, i, j, _ in duels for m in (i, j)]] = True
        out.write(_export_person(args, matcher, pool, measures, seen, requests))
    return 0


def _export_measures(args: argparse.Namespace, models: list[str]):
    """The case's measures of the pool's models, checked before the first duel."""
    from resources.matching import case_measures
    from resources.warehouse import Warehouse

    try:
        frame, missing = case_measures(Warehouse(), args.case, models)
    except ValueError as err:
        raise FlagError(f"--case {args.case}: {err}") from None
    if len(frame) < 2:
        raise FlagError(f"--case {args.case}: only {len(frame)} of the pool's models have measures in that case; "
                        "choose a case whose catalog holds your models (`compass cases`)")
    return frame


def _export_person(args: argparse.Namespace, matcher: HeartUCB, pool, measures, seen: np.ndarray,
                   requests: list[str]) -> str:
    """Weights: the NNLS fit of the posterior utility of the seen models that have measures; "cheaper" -> lam."""
    from resources.matching import write_scenario

    names = [c for c in measures.columns if MEASURE.fullmatch(c)]
    rows = [k for k, m in enumerate(pool.models) if m in measures.index]
    mean, _ = matcher.posterior()
    utility = (mean @ matcher.belief)[rows]
    weights = learned_weights(utility, measures.loc[[pool.models[k] for k in rows], names].to_numpy(float), names,
                              seen[rows])
    carried, notes = scenario_requests(requests)
    spec, dropped = scenario_from_session(Path(args.export_scenario).stem, weights, carried)
    path = write_scenario(args.export_scenario, spec, sorted(set(dropped + notes)))
    return f"scenario written: {path} (weights over case {args.case}'s measures: {weights})\n"


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
    from compass.matching.bridge import session_scenario
    from compass.matching.heart import HeartOptions
    from compass.matching.study import Session, simulate_session
    from resources.matching import load_user, token_model, write_scenario
    from resources.warehouse import Warehouse

    path = Path(args.simulate)
    user, pool = load_user(path, Warehouse())
    if args.export_scenario and not any(MEASURE.fullmatch(c) for c in pool.metadata.columns):
        raise FlagError(f"--export-scenario: pool {pool.name!r} of {path} has no measure columns C1, C2, ... for "
                        "scenario weights; use a user whose pool is a case of the catalog (pool: case:<case_id>, "
                        "e.g. examples/stakeholder.yaml)")
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
        spec, notes = session_scenario(name, result.matcher, runs, result.requests, user.constraints, result.pool)
        out.write(f"scenario written: {write_scenario(args.export_scenario, spec, notes)}\n")
    return 0


def run(args: argparse.Namespace, stdin: TextIO | None = None, out: TextIO | None = None,
        err: TextIO | None = None) -> int:
    """`compass match`: a bad flag or input file is one line on stderr and exit code 2, before anything is written.
    The streams default to sys.stdin/stdout/stderr as they are when called (not when this module was imported)."""
    out = out or sys.stdout
    try:
        check_flags(args)
        return run_simulated(args, out) if args.simulate else run_match(args, stdin or sys.stdin, out)
    except (IngestError, FlagError) as exc:
        (err or sys.stderr).write(f"error: {exc}\n")
        return 2


def add_parser(sub) -> None:
    match = sub.add_parser("match", help="find your model by picking between answers (CUPID, seed 004)")
    match.add_argument("--pool", default=SHIPPED_ANSWERS,
                       help=f"{SHIPPED_ANSWERS} (the 17 models x 300 prompts shipped in data/matching/) or the path "
                            "of your own CSV with columns prompt, model, response")
    match.add_argument("--budget", type=float, default=0.05, help="USD for the whole session (> 0)")
    match.add_argument("--rounds", type=int, default=10, help=f"most duels (1 to {MAX_ROUNDS})")
    match.add_argument("--seed", type=int, default=0)
    match.add_argument("--max-lines", dest="max_lines", type=int, default=30, help="lines shown per answer")
    match.add_argument("--simulate", metavar="USER_YAML", help="run a simulated person (a user file) instead of you")
    match.add_argument("--inputs", choices=["onehot", "metadata"], default="metadata",
                       help="GP inputs of a simulated session (metadata lets utility generalize over the catalog)")
    match.add_argument("--case", help="a case of the catalog (e.g. frontier_api) whose measures a person's exported "
                                      "scenario weights; needs `compass run` first")
    match.add_argument("--export-scenario", dest="export_scenario", metavar="YAML",
                       help="write the session's scenario (weights, floors, filters) for compass leaderboard")
    match.set_defaults(func=run)
