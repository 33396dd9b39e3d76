"""The automated validation of CUPID §4.1 (App. C.1, D; Table 1): every method against every simulated
user over seeds, one duel per round, with the evaluation of spec-004 §2.13 and §4.1, and reference rows that do
not learn (compass.matching.references): three a person could run before any duel, and an oracle lookup shown as
a ceiling.

Each run shuffles the pool with its seed (as §4.2 does), so no method profits from the row order. A run
converges at the first round whose current best model is feasible for `k_conv` consecutive rounds (CR =
that first round); its cost is the spend up to the streak's last round, or of every round played when it
does not converge. It found the best model when its final recommendation is one of the user's best models
(compass.matching.users.User.best_models). CR averages converged runs only; CP is the share of converged
runs; every mean has its standard error over runs (seeds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.matching.baselines import RUCB, CostLMA, EpsilonGreedy, LMArena
from compass.matching.duel import Matcher
from compass.matching.heart import HEART_METHODS, HeartOptions, HeartUCB, options_for
from compass.matching.pool import Pool
from compass.matching.references import CheapestFeasible, MostCapableAffordable, TwoCheapest
from compass.matching.simulate import LanguageFeedback, MetadataJudge
from compass.matching.users import User

# Rows that do not learn: the oracle lookup is a ceiling; a claim must beat the ones a person could run.
CEILINGS = ("cheapest_feasible",)
PERSON_REFERENCES = ("most_capable_affordable", "cheapest_stated", "two_cheapest")
REFERENCES = CEILINGS + PERSON_REFERENCES
# The catalog's capability column a person would sort by: the zoo's `intelligence`, a case pool's first measure.
CAPABILITY_COLUMNS = ("intelligence", "C1")
# Table 1's rows, in its order.
TABLE_1 = ("latent_dueling", "rucb", "lma", "cost_lma", "eps_greedy", "cupid_no_cost", "cupid_no_language", "cupid")
METHODS = REFERENCES + TABLE_1 + ("cupid_cost_tiebreak",)
METHOD_LABELS = {"cheapest_feasible": "Cheapest feasible model (oracle lookup, a ceiling)",
                 "most_capable_affordable": "Most capable affordable model (catalog, no duels)",
                 "cheapest_stated": "Cheapest model meeting the first stated wish (no duels)",
                 "two_cheapest": "Always duel the two cheapest",
                 "latent_dueling": "Latent Dueling Bandits", "rucb": "RUCB", "lma": "LMA",
                 "cost_lma": "Cost-constrained LMA", "eps_greedy": "ε-greedy", "cupid_no_cost": "CUPID w/o cost penalty",
                 "cupid_no_language": "CUPID w/o language", "cupid": "CUPID",
                 "cupid_cost_tiebreak": "CUPID, paper's round-1 cost tie-break"}
RUN_COLUMNS = ["user", "method", "seed", "round", "pair", "winner", "cost_usd", "cumulative_cost_usd", "best_so_far",
               "feasible", "missed_constraints", "best_found"]
SUMMARY_COLUMNS = ["user", "method", "cost_mean", "cost_sd", "rounds_to_converge", "converged_pct", "n_runs",
                   "over_budget_pct", "cost_se", "rounds_se", "converged_se", "best_found_pct", "best_found_se"]
ROUTER_USD = 0.00191  # the auxiliary LLM per round, Grok 4.1 Fast (§4.3 Table 6)


@dataclass(frozen=True)
class Session:
    """A run's setting: pool, user, expected call costs (USD), HEART options, feedback variant, judge noise
    (None: the user's `judge_noise`), per-seed pool shuffling, the router's cost per round charged to methods
    that use language feedback."""

    pool: Pool
    user: User
    call_cost: np.ndarray
    heart: HeartOptions = HeartOptions()
    feedback_variant: str = "informative"
    p_flip: float | None = None
    shuffle: bool = True
    router_usd: float = 0.0


def make_matcher(method: str, session: Session, seed: int) -> Matcher:
    """One method of Table 1 for a session."""
    pool, user = session.pool, session.user
    if method in HEART_METHODS:
        return HeartUCB(pool.features(), pool.cost_proxy, session.call_cost, user.budget_usd, user.rounds, seed,
                        options_for(method, session.heart))
    factories: dict[str, Callable[[], Matcher]] = {
        "cheapest_feasible": lambda: CheapestFeasible(pool.cost_proxy, user.feasible(pool), session.call_cost),
        "cheapest_stated": lambda: CheapestFeasible(pool.cost_proxy, stated_wish(user, pool), session.call_cost),
        "most_capable_affordable": lambda: MostCapableAffordable(capability(pool), pool.cost_proxy, user.budget_usd,
                                                                 session.call_cost),
        "two_cheapest": lambda: TwoCheapest(pool.cost_proxy, session.call_cost),
        "rucb": lambda: RUCB(pool.size, seed),
        "eps_greedy": lambda: EpsilonGreedy(pool.size, seed),
        "lma": lambda: LMArena(pool.size, seed),
        "cost_lma": lambda: CostLMA(pool.size, seed, pool.cost_proxy, session.call_cost, user.budget_usd, user.rounds),
    }
    if method not in factories:
        raise ValueError(f"unknown method {method!r}; known: {list(METHODS)}")
    return factories[method]()


def stated_wish(user: User, pool: Pool) -> np.ndarray:
    """Per model: does it meet the one constraint the user states before any duel (the initial direction, else the
    first constraint)? What a person can check against the catalog once."""
    column = user.initial_direction or user.constraints[0].column
    constraint = next(c for c in user.constraints if c.column == column)
    return constraint.met(pool.metadata[column].to_numpy(float))


def capability(pool: Pool) -> np.ndarray:
    """The pool's catalog capability per model (`CAPABILITY_COLUMNS`; NaN where unknown or no such column)."""
    column = next((c for c in CAPABILITY_COLUMNS if c in pool.metadata.columns), None)
    return np.full(pool.size, np.nan) if column is None else pool.metadata[column].to_numpy(float)


@dataclass(frozen=True)
class SessionResult:
    """A simulated run: its rows of matching.runs, the matcher at the end, the person's change requests
    (constraint index into the user's constraints, −1 = "cheaper", −2 = "better by my weights"), and the pool in
    the run's (shuffled) order, which the matcher's model indices refer to."""

    runs: pd.DataFrame
    matcher: Matcher
    requests: list[int]
    pool: Pool


def run_session(method: str, session: Session, seed: int) -> pd.DataFrame:
    """One simulated run's rows of matching.runs."""
    return simulate_session(method, session, seed).runs


def simulate_session(method: str, session: Session, seed: int) -> SessionResult:
    """One simulated run on the pool shuffled with `seed`: up to T duels (fewer if a budget-guarded method finds
    no affordable pair); a round costs the two calls plus, for a method that reads feedback, the router."""
    user = session.user
    rng = np.random.default_rng([seed, 1])
    order = np.random.default_rng([seed, 2]).permutation(session.pool.size) if session.shuffle else np.arange(session.pool.size)
    pool = session.pool.take(order)
    session = Session(pool, user, session.call_cost[order], session.heart, session.feedback_variant,
                      user.judge_noise if session.p_flip is None else session.p_flip, False, session.router_usd)
    judge = MetadataJudge.for_user(user, pool, rng, session.p_flip)
    feedback = LanguageFeedback.for_user(user, pool, rng, session.feedback_variant)
    columns = [c.column for c in user.constraints]
    matcher = make_matcher(method, session, seed)
    router = session.router_usd if matcher.uses_language else 0.0
    feasible, sat, best_set = user.feasible(pool), user.satisfied(pool).sum(1), user.best_models(pool)
    mask = feedback.initial(columns.index(user.initial_direction) if user.initial_direction else None)
    spent, rows = 0.0, []
    for t in range(1, user.rounds + 1):
        matcher.feedback(mask)
        pair = matcher.select(t, user.budget_usd - spent - router)
        if pair is None:
            break
        i, j = pair
        cost = float(session.call_cost[i] + session.call_cost[j]) + router
        i_won = judge.i_wins(i, j)
        matcher.observe(t, i, j, i_won, cost)
        spent += cost
        winner = i if i_won else j
        best = matcher.best()
        rows.append((user.name, method, seed, t, f"{pool.models[i]} vs {pool.models[j]}", pool.models[winner], cost,
                     spent, pool.models[best], bool(feasible[best]), int(len(columns) - sat[best]), bool(best_set[best])))
        mask = feedback.after(winner)
    return SessionResult(pd.DataFrame(rows, columns=RUN_COLUMNS), matcher, feedback.requests, pool)


def convergence(feasible: Sequence[bool], k_conv: int = 2) -> int | None:
    """First round (1-based) of the first run of `k_conv` consecutive feasible rounds, None if none."""
    streak = 0
    for t, ok in enumerate(feasible, start=1):
        streak = streak + 1 if ok else 0
        if streak == k_conv:
            return t - k_conv + 1
    return None


def run_outcome(run: pd.DataFrame, budget: float, k_conv: int = 2) -> dict:
    """Convergence round, converged flag, cost (spend to the end of the streak, else of all rounds), whether the
    final recommendation is a best model."""
    cr = convergence(run["feasible"].tolist(), k_conv)
    cost = run["cumulative_cost_usd"].iloc[cr + k_conv - 2] if cr else (run["cumulative_cost_usd"].iloc[-1] if len(run) else 0.0)
    total = run["cumulative_cost_usd"].iloc[-1] if len(run) else 0.0
    found = bool(run["best_found"].iloc[-1]) if len(run) and "best_found" in run else False
    return {"converged": cr is not None, "cr": cr, "cost": float(cost), "over_budget": bool(total > budget + 1e-12),
            "best_found": found}


def standard_error(values: pd.Series) -> float:
    """sd / √n over runs (NaN with fewer than two)."""
    values = values.dropna().astype(float)
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else np.nan


def summarize(runs: pd.DataFrame, budgets: dict[str, float], k_conv: int = 2) -> pd.DataFrame:
    """Table 1's shape per (user, method): cost mean ± sd, CR (converged runs), CP (%), runs, % over budget, and the
    standard errors of cost, CR and CP, with the best-model-found rate (%) and its standard error."""
    rows = []
    for (user, method), group in runs.groupby(["user", "method"], sort=False):
        out = pd.DataFrame([run_outcome(r, budgets[user], k_conv) for _, r in group.groupby("seed")])
        converged = out["converged"].astype(float)
        rows.append((user, method, out["cost"].mean(), out["cost"].std(ddof=1) if len(out) > 1 else 0.0,
                     out.loc[out["converged"], "cr"].mean() if out["converged"].any() else np.nan,
                     100 * converged.mean(), len(out), 100 * out["over_budget"].mean(), standard_error(out["cost"]),
                     standard_error(out.loc[out["converged"], "cr"]), 100 * standard_error(converged),
                     100 * out["best_found"].mean(), 100 * standard_error(out["best_found"].astype(float))))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def run_study(sessions: Sequence[Session], methods: Sequence[str] = METHODS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every method x session x seed of the user: (runs, summary)."""
    runs = pd.concat([run_session(m, s, seed) for s in sessions for m in methods for seed in s.user.seeds],
                     ignore_index=True)
    return runs, summarize(runs, {s.user.name: s.user.budget_usd for s in sessions})
