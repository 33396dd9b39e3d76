"""Per-model diagnostics on leaderboards and the chosen model's tier and measures on recommendations."""

import numpy as np
import pandas as pd

from compass.mlcompass import decisions as dec
from compass.mlcompass.scenarios import Scenario
from tests.compass.mlcompass.decisions.test_person_weights import _inputs


def test_extrapolated_is_outside_the_convex_hull_of_the_trained_models():
    measures = pd.DataFrame({"C1": [0, 1, 0, 1, 0.5, 0.9, 1.2], "C2": [0, 0, 1, 1, 0.5, 0.95, 0.5]},
                            index=["a", "b", "c", "d", "mid", "near", "out"])
    got = dec.extrapolated(measures, pd.Index(["a", "b", "c", "d"]))
    assert got.to_dict() == {"a": False, "b": False, "c": False, "d": False, "mid": False, "near": False, "out": True}
    triangle = dec.extrapolated(measures, pd.Index(["a", "b", "c"]))  # the hull, not the bounding box
    assert bool(triangle["d"]) and not bool(triangle["mid"])
    line = dec.extrapolated(measures[["C1"]], pd.Index(["a", "mid"]))
    assert line[["a", "mid"]].tolist() == [False, False] and line[["b", "out"]].tolist() == [True, True]
    assert dec.extrapolated(measures, pd.Index([])).isna().all()


def test_leaderboard_carries_diagnostics_and_recommendations_the_chosen_models_profile():
    inputs = _inputs(Scenario("plain", lam=0.1))
    ids = inputs.measures.index
    inputs.outcomes = pd.DataFrame({"context_group": "math", "model_id": ids[:10], "n": 5, "outcome": 0.5})
    inputs.model_info = pd.DataFrame({"tier": np.arange(len(ids)) % 3 + 1, "imputed_share": 0.25}, index=ids)
    board = dec.leaderboard_frame(inputs).set_index("model_id")
    assert board.loc[ids[:10], "has_outcomes"].all() and not board.loc[ids[10:], "has_outcomes"].any()
    assert (board["imputed_share"] == 0.25).all()
    assert board["tier"].to_dict() == inputs.model_info["tier"].loc[board.index].to_dict()
    hull = dec.extrapolated(inputs.measures, pd.Index(ids[:10]))
    assert board["extrapolated"].to_dict() == hull.loc[board.index].to_dict() and hull.any()
    recs = dec.recommendations_frame(inputs, dec.targets_frame(inputs)[0]).dropna(subset=["model_id"])
    first = recs.iloc[0]
    assert first["tier"] == inputs.model_info.at[first["model_id"], "tier"]
    c1, c2 = inputs.measures.loc[first["model_id"]]
    assert first["measures"] == f"C1={c1:.3f}, C2={c2:.3f}"


def test_structural_utilities_have_no_training_support_to_extrapolate_from():
    board = dec.leaderboard_frame(_inputs(Scenario("plain", lam=0.1)))
    assert board["extrapolated"].isna().all() and not board["has_outcomes"].any()
    assert board["tier"].isna().all()  # no tiers given: shown as missing, never invented


def test_outcome_range_per_measure_and_on_leaderboards_and_recommendations():
    measures = pd.DataFrame({"C1": [0.4, 0.7, 0.55, 0.95, 0.5], "C2": [0.2, 0.6, 0.1, 0.4, 0.7]},
                            index=["a", "b", "in_c1_below_c2", "above_c1", "above_c2"])
    got = dec.outcome_range(measures, pd.Index(["a", "b"]))
    assert got["outcome_range"].tolist() == ["C1 inside, C2 inside", "C1 inside, C2 inside", "C1 inside, C2 below",
                                             "C1 above, C2 inside", "C1 inside, C2 above"]
    assert got["measures_outside"].tolist() == [0, 0, 1, 1, 1]
    assert dec.outcome_range(measures, pd.Index([]))["outcome_range"].isna().all()
    assert dec.nearest_outcome_models(measures, pd.Index(["a", "b"]), "above_c1").index.tolist() == ["b", "a"]
    # every leaderboard row and recommendation carries it
    inputs = _inputs(Scenario("plain", lam=0.1))
    inputs.outcomes = pd.DataFrame({"context_group": "math", "model_id": inputs.measures.index[:5], "n": 5,
                                    "outcome": 0.5})
    expected = dec.outcome_range(inputs.measures, inputs.measures.index[:5])
    board = dec.leaderboard_frame(inputs).set_index("model_id")
    assert board["outcome_range"].to_dict() == expected["outcome_range"].loc[board.index].to_dict()
    assert board["measures_outside"].sum() > 0
    recs = dec.recommendations_frame(inputs, dec.targets_frame(inputs)[0]).dropna(subset=["model_id"])
    assert recs["outcome_range"].tolist() == expected["outcome_range"].loc[recs["model_id"]].tolist()
