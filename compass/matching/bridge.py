"""The bridge from a matchmaking session to ML Compass: a scenario a leaderboard can rank with.

CUPID ends with one model (§3, Algorithm 1). ML Compass ranks a catalog under a scenario: utility weights
over a case's measures (C1, C2, ...), floors on measures, governance filters and a cost sensitivity lam
(compass.mlcompass.scenarios). A session holds both halves of such a scenario:
- the posterior over latent utilities: ū(m) = Σ_z b(z) μ(m, z) on the models the person saw; its
  non-negative least-squares fit on the measures (centred) gives the utility weights, normalized to 1;
- the change requests the person made: a floor on a measure becomes a scenario floor, a price cap or
  "cheaper" a non-zero lam ("low", the case's own low cost sensitivity), a requirement on open weights or
  on the context window a governance filter. Other requests have no scenario counterpart and are listed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from scipy.optimize import nnls

from compass.matching.users import Constraint

MEASURE = re.compile(r"C[1-9][0-9]*")
PRICE_COLUMNS = ("input_price", "output_price", "cached_price")


def learned_weights(utility: np.ndarray, measures: np.ndarray, names: Sequence[str], seen: np.ndarray) -> dict[str, float]:
    """Weights w >= 0, Σ w = 1, of the NNLS fit ū − mean ≈ (X − mean) w over the models seen in duels;
    uniform when the fit is all zero (nothing learned)."""
    X, y = measures[seen], utility[seen]
    w, _ = nnls(X - X.mean(0), y - y.mean()) if len(y) > 1 else (np.zeros(len(names)), 0.0)
    w = w if w.sum() > 0 else np.ones(len(names))
    return {n: round(float(v / w.sum()), 4) for n, v in zip(names, w, strict=True)}


def scenario_from_session(name: str, weights: dict[str, float], requests: Sequence[Constraint | None]) -> tuple[dict, list[str]]:
    """The scenario mapping (compass.mlcompass.scenarios.SCENARIO_KEYS) and the requests it could not carry.

    `requests` are the session's change requests: a constraint the person asked for, or None for "cheaper"."""
    floors: dict[str, float] = {}
    filters: dict[str, object] = {}
    lam, dropped = "zero", []
    for request in requests:
        if request is None or (request.column in PRICE_COLUMNS and request.high is not None):
            lam = "low"
        elif MEASURE.fullmatch(request.column) and request.low is not None:
            floors[request.column] = max(floors.get(request.column, -np.inf), float(request.low))
        elif request.column == "open_weights" and request.required is not None:
            filters["open_weights"] = bool(request.required)
        elif request.column == "context_window" and request.low is not None:
            filters["min_context_window"] = int(request.low)
        else:
            dropped.append(request.describe())
    spec: dict[str, object] = {"name": name, "lam": lam, "utility": {"weights": weights}}
    if floors:
        spec["floors"] = floors
    if filters:
        spec["filters"] = filters
    return spec, sorted(set(dropped))


def session_scenario(name: str, matcher, runs, requests: Sequence[int], constraints: Sequence[Constraint],
                     pool) -> tuple[dict, list[str]]:
    """The scenario of a finished HEART-UCB session on a pool with measure columns C1..Ck: weights from the
    belief-weighted posterior mean over the models seen, requests (constraint index, −1 = "cheaper", −2 = "better by
    my weights", which the learned weights carry)."""
    names = [c for c in pool.metadata.columns if MEASURE.fullmatch(c)]
    if not names:
        raise ValueError(f"pool {pool.name!r} has no measure columns C1, C2, ...: export needs a case pool (case:<id>)")
    mean, _ = matcher.posterior()
    seen = np.zeros(pool.size, bool)
    index = {m: k for k, m in enumerate(pool.models)}
    for pair in runs["pair"]:
        seen[[index[m] for m in pair.split(" vs ")]] = True
    weights = learned_weights(mean @ matcher.belief, pool.metadata[names].to_numpy(float), names, seen)
    return scenario_from_session(name, weights, [constraints[r] if r >= 0 else None for r in requests if r != -2])
