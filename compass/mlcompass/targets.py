"""Continuous target profiles (x*, c*) on an estimated frontier (ML Compass §4.6, Problems (4)-(6)).

    max_{x,c}  Agg_z Û(x; z) - lam c
    s.t.       c <= B,  x_i >= R_i,  x in [0, 1]^I,  F_X(x) <= F_C(c) = c0 c^d,

with Agg = a single context (per-type, Problem 4), the weighted mean over contexts
(Problem 5) or the worst case over contexts (Problem 6). Since Û depends on x
only and lam >= 0, the optimal spend is the least cost that attains x,
c*(x) = (F_X(x)/c0)^(1/d) (ties in the objective go to the lower cost), so the
problem reduces to x in [R, 1]^I with F_X(x) <= c0 B^d. We solve it by a Sobol
screen of the feasible box (which also handles black-box, piecewise-constant
LightGBM utilities) followed by multi-start SLSQP from the best screened points
(robust: epigraph variable t <= Û(x; z) for all z). For one linear context with
b > 1 this is Problem (2) and agrees with compass.mlcompass.theory.optimal_profile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.stats import qmc

from compass.mlcompass.frontier import CESFrontier
from compass.mlcompass.recommend import AGGREGATIONS, as_utility_fn, aggregate_utility, expand_floors
from compass.mlcompass.utilities import UtilityFn


@dataclass(frozen=True)
class Target:
    """Continuous target; `utility` is the aggregated Û at x*, `objective` = utility - lam c*."""

    feasible: bool
    reason: str
    x_star: pd.Series | None
    c_star: float
    utility: float
    objective: float


def solve_target(
    utilities: Mapping[str, UtilityFn | pd.Series],
    frontier: CESFrontier,
    lam: float,
    measure_names: Sequence[str],
    budget: float = 1.0,
    floors: Mapping[str, float] | None = None,
    aggregation: str = "mean",
    weights: Mapping[str, float] | None = None,
    n_screen: int = 1024,
    n_starts: int = 6,
    seed: int = 0,
) -> Target:
    """Solve Problem (5) ("mean") or (6) ("robust"); a single context gives Problem (4).

    Infeasible constraint sets (floors not attainable within the budget on the
    frontier) return Target(feasible=False, reason=...) instead of raising.
    """
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    if lam < 0 or not (0 < budget):
        raise ValueError(f"need lam >= 0 and budget > 0; got lam={lam}, budget={budget}")
    names = list(measure_names)
    if len(names) != len(np.atleast_1d(frontier.a)):
        raise ValueError(f"{len(names)} measure names for a frontier over {len(frontier.a)} measures")
    R = np.array([expand_floors(floors, names)[m] for m in names])
    level = float(frontier.attainable(budget))  # F_C(B)
    if np.any(R > 1):
        return Target(False, f"compliance floors above 1 on {[m for m, r in zip(names, R) if r > 1]}", None, float("nan"), float("nan"), float("nan"))
    if float(frontier.capability(R)) > level:
        need = float(frontier.min_cost(R))
        return Target(False, f"compliance floors need cost {need:.4g} > budget {budget:.4g} on the frontier", None, float("nan"), float("nan"), float("nan"))

    b = frontier.b
    fns = {g: as_utility_fn(u, names) for g, u in utilities.items()}

    def agg(x: np.ndarray) -> np.ndarray:
        return aggregate_utility(x, fns, names, aggregation, weights)

    def objective(x: np.ndarray) -> np.ndarray:
        return agg(x) - lam * frontier.min_cost(x)

    sobol = qmc.Sobol(len(names), seed=seed).random(n_screen)
    cand = np.vstack([R, R + (1.0 - R) * sobol])
    cand = cand[frontier.capability(cand) <= level]
    values = objective(cand)
    best_x, best_v = cand[np.argmax(values)], float(values.max())
    polished: list[tuple[np.ndarray, float]] = []

    budget_con = {"type": "ineq", "fun": lambda v: level**b - np.sum(frontier.a * np.clip(v[: len(R)], 0, None) ** b)}
    bounds = list(zip(R, np.ones_like(R)))
    for x0 in cand[np.argsort(values)[::-1][:n_starts]]:
        if aggregation == "robust" and len(fns) > 1:
            cons = [budget_con] + [
                {"type": "ineq", "fun": (lambda v, f=f: float(f(v[:-1])[0]) - v[-1])} for f in fns.values()
            ]
            res = minimize(lambda v: -(v[-1] - lam * float(frontier.min_cost(v[:-1]))), np.r_[x0, agg(x0[None])[0]],
                           method="SLSQP", bounds=bounds + [(None, None)], constraints=cons,
                           options={"ftol": 1e-12, "maxiter": 500})
            x = np.clip(res.x[:-1], R, 1.0)
        else:
            res = minimize(lambda v: -float(objective(v[None])[0]), x0, method="SLSQP", bounds=bounds,
                           constraints=[budget_con], options={"ftol": 1e-12, "maxiter": 500})
            x = np.clip(res.x, R, 1.0)
        if float(frontier.capability(x)) <= level * (1 + 1e-9):
            v = float(objective(x[None])[0])
            polished.append((x, v))
            if v > best_v:
                best_x, best_v = x, v
    best_x = _least_cost_tie(frontier, best_v, cand, values, polished)
    c_star = float(min(frontier.min_cost(best_x), budget))
    u = float(agg(best_x[None])[0])
    return Target(True, "", pd.Series(best_x, index=names, name="x_star"), c_star, u, u - lam * c_star)


def _least_cost_tie(frontier: CESFrontier, best_v: float, cand: np.ndarray, values: np.ndarray,
                    polished: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Lexicographic second pass: among the evaluated points whose objective equals the best, the one of
    least cost. At lam = 0 a flat utility (a LightGBM step) leaves many x with exactly the same objective,
    and "ties go to the lower cost" must be enforced, not left to the order of the screen."""
    points = np.vstack([cand[values >= best_v]] + [x[None] for x, v in polished if v >= best_v])
    return points[int(np.argmin(frontier.min_cost(points)))]


def per_type_targets(
    utilities: Mapping[str, UtilityFn | pd.Series],
    frontier: CESFrontier,
    lam: float,
    measure_names: Sequence[str],
    budget: float = 1.0,
    floors: Mapping[str, float] | None = None,
    **kwargs,
) -> dict[str, Target]:
    """Problem (4) solved separately for each context group (MLC per-type)."""
    return {
        g: solve_target({g: u}, frontier, lam, measure_names, budget, floors, aggregation="mean", **kwargs)
        for g, u in utilities.items()
    }


def targets_table(targets: Mapping[str, Target]) -> pd.DataFrame:
    """One row per context: group, feasible, reason, x_<measure>..., c_star, utility, objective."""
    rows = []
    for g, t in targets.items():
        row = {"group": g, "feasible": t.feasible, "reason": t.reason}
        if t.x_star is not None:
            row.update({f"x_{m}": v for m, v in t.x_star.items()})
        row.update({"c_star": t.c_star, "utility": t.utility, "objective": t.objective})
        rows.append(row)
    return pd.DataFrame(rows)
