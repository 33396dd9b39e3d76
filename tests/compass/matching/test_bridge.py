"""The bridge: a simulated session's posterior and requests exported as a scenario that ML Compass loads."""

import numpy as np
import pandas as pd
import pytest

from compass.matching.bridge import learned_weights, scenario_from_session, session_scenario
from compass.matching.costs import TokenModel
from compass.matching.heart import HeartOptions
from compass.matching.pool import pool_from_frame
from compass.matching.study import Session, simulate_session
from compass.matching.users import Constraint, User
from compass.mlcompass.scenarios import Scenario
from resources.matching import write_scenario


def test_learned_weights_recover_a_linear_utility():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(30, 3))
    seen = np.arange(30) < 20
    weights = learned_weights(0.75 * X[:, 0] + 0.25 * X[:, 2] + 3.0, X, ["C1", "C2", "C3"], seen)
    assert weights == pytest.approx({"C1": 0.75, "C2": 0.0, "C3": 0.25}, abs=1e-4)
    assert learned_weights(np.zeros(30), X, ["C1", "C2", "C3"], seen) == pytest.approx({"C1": 1 / 3, "C2": 1 / 3, "C3": 1 / 3}, abs=1e-4)


def test_requests_map_to_floors_filters_and_lam():
    requests = [Constraint("C2", low=0.4), Constraint("C2", low=0.6), Constraint("open_weights", required=True),
                Constraint("context_window", low=32000), Constraint("speed", low=3), None]
    spec, dropped = scenario_from_session("me", {"C1": 1.0}, requests)
    assert spec == {"name": "me", "lam": "low", "utility": {"weights": {"C1": 1.0}}, "floors": {"C2": 0.6},
                    "filters": {"open_weights": True, "min_context_window": 32000}}
    assert dropped == ["speed >= 3"]
    assert scenario_from_session("me", {"C1": 1.0}, [Constraint("C1", low=0.1)])[0]["lam"] == "zero"


def test_a_simulated_stakeholder_exports_a_scenario_that_loads(tmp_path):
    """A person who prefers C1 and needs C3 >= 0.2 and open weights: the scenario weights C1 and keeps the floor."""
    rng = np.random.default_rng(0)
    K = 40
    frame = pd.DataFrame({"model": [f"m{i}" for i in range(K)], "C1": rng.uniform(0, 1, K), "C2": rng.uniform(0, 1, K),
                          "C3": rng.uniform(0, 1, K), "input_price": 10 ** rng.uniform(-1, 1, K),
                          "output_price": 10 ** rng.uniform(-1, 1.3, K), "open_weights": rng.integers(0, 2, K)})
    pool = pool_from_frame("case:synthetic", frame.astype(str))
    user = User("stakeholder", "case:synthetic", (Constraint("C3", low=0.2), Constraint("open_weights", required=True)),
                budget_usd=0.05, rounds=15, seeds=(1,), initial_direction="C3", prefer=(("C1", 1.0),))
    session = Session(pool, user, TokenModel().call_cost(pool), HeartOptions(model_inputs="metadata"))
    result = simulate_session("cupid", session, 3)
    spec, _ = session_scenario("stakeholder", result.matcher, result.runs, result.requests, user.constraints, result.pool)
    scenario = Scenario.from_yaml(write_scenario(tmp_path / "stakeholder.yaml", spec, []))
    assert scenario.name == "stakeholder" and scenario.floors == {"C3": 0.2}
    assert max(scenario.utility_weights, key=scenario.utility_weights.get) == "C1"
    assert scenario.utility_weights["C1"] > 0.8 and sum(scenario.utility_weights.values()) == pytest.approx(1, abs=1e-3)
    assert scenario.lam == ("low" if -1 in result.requests else "zero")
    best = pool.models.index(result.runs["best_so_far"].iloc[-1])
    assert user.feasible(pool)[best]
