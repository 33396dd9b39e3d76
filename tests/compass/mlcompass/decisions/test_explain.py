"""What `compass leaderboard` / `compass recommend` print under the table (explain.py): near-ties, extrapolation,
the target's regimes with the utility's sign."""

import pandas as pd

from compass.mlcompass import decisions as dec
from compass.mlcompass.decision_rule import SCENARIO_SOURCE, decision_frame
from compass.mlcompass.explain import explain, near_tie_text, regime_text, utility_slopes
from compass.mlcompass.scenarios import Scenario
from tests.compass.mlcompass.decisions.test_person_weights import _inputs


def _board():
    return pd.DataFrame({"rank": [1, 2, 3, 4], "model_id": ["pricey", "mid", "cheap", "far"],
                         "cost": [0.9, 0.5, 0.1, 0.05], "score": [0.80, 0.79, 0.79, 0.5]})


def test_near_tie_sentence_names_the_cheapest_model_within_the_tolerance_not_the_cheapest_of_the_group():
    """Issue 42: the sentence named the cheapest of the noise group (19 % worse) instead of the model 3e-5 behind at a
    fifth of the cost. Mutation: the sentence naming the group's cheapest again: red."""
    ranks = pd.DataFrame({"model_id": ["pricey", "mid", "cheap", "far"], "near_leader": [True, True, True, False],
                          "n_boot": 60, "interval_supported": True, "n_outcome_models": 9})
    board = _board().assign(score=[0.80, 0.79997, 0.65, 0.5], utility=[0.80, 0.79997, 0.65, 0.5])
    text = " ".join(near_tie_text(board, ranks, decision_frame(board, 0.001, SCENARIO_SOURCE)))
    assert "3 models are within the bootstrap's noise of the leader pricey" in text
    assert "The cheapest model within the tolerance 0.001 of the leader's score is mid" in text
    assert "is cheap" not in text and "far" not in text
    alone = ranks.assign(near_leader=[True, False, False, False])
    assert "leads beyond the bootstrap's noise" in " ".join(near_tie_text(_board(), alone))
    few = ranks.assign(interval_supported=False, n_outcome_models=4)
    assert "not supported" in " ".join(near_tie_text(_board(), few)) and "4 outcome models" in " ".join(
        near_tie_text(_board(), few))
    assert near_tie_text(_board(), None) == []


def test_a_negative_coefficient_is_shown_as_a_sign_not_as_a_floor():
    # Û falls with C2: the target puts C2 at 0 with no compliance floor
    inputs = _inputs(Scenario("plain", lam=0.0), utilities={"g": pd.Series({"C1": 1.0, "C2": -0.5})})
    x_star = pd.Series({"C1": 0.9, "C2": 0.0})
    slopes = utility_slopes(inputs, x_star)
    assert slopes["C1"] > 0 > slopes["C2"]
    text = regime_text(x_star, {}, slopes)
    assert "C2=0.000 (floor)" not in text and "negative coefficient" in text and "no compliance floor" in text
    assert "C1=0.900 (interior)" in text
    # a compliance floor that binds a measure the utility values is still called a floor
    assert "floor 0.5 binds" in regime_text(pd.Series({"C1": 0.5, "C2": 0.3}), {"C1": 0.5},
                                            pd.Series({"C1": 1.0, "C2": 0.2}))


def test_explanation_says_whether_the_pick_is_extrapolated_and_names_the_nearest_outcome_models():
    inputs = _inputs(Scenario("plain", lam=0.0))
    ids = inputs.measures.index
    # outcome data from the five models lowest on C2: the leader (highest C2 weight) lies above their range
    trained = inputs.measures["C2"].sort_values().index[:5]
    inputs.outcomes = pd.DataFrame({"context_group": "math", "model_id": trained, "n": 5, "outcome": 0.5})
    text = explain(inputs)
    leader = dec.leaderboard_frame(inputs)["model_id"].iloc[0]
    assert f"{leader} is EXTRAPOLATED" in text and "C2 above" in text
    nearest = dec.nearest_outcome_models(inputs.measures, pd.Index(trained), leader).index
    assert "nearest outcome models: " + ", ".join(nearest[:1]) in text
    inputs.outcomes = pd.DataFrame({"context_group": "math", "model_id": ids, "n": 5, "outcome": 0.5})
    assert "is inside the outcome models' range" in explain(inputs)


def test_with_given_weights_no_outcome_model_is_claimed():
    """Issue 48: with the scenario's own weights the utility is not learned from outcomes, so nothing may say the
    pick is extrapolated from, or rests on, outcome models (red with the weights check removed)."""
    scenario = Scenario.from_dict({"name": "mine", "lam": 0, "utility": {"weights": {"C2": 1}}})
    inputs = _inputs(scenario)
    trained = inputs.measures["C2"].sort_values().index[:5]  # outcomes the learned utility would have used
    inputs.outcomes = pd.DataFrame({"context_group": "math", "model_id": trained, "n": 5, "outcome": 0.5})
    text = explain(dec.with_person_weights(inputs))
    assert "utility: scenario weights C2=1" in text
    assert "EXTRAPOLATED" not in text and "outcome models" not in text
