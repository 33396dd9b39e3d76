"""A case's `min_benchmarks_to_rank`: a model observed on too few of the case's benchmarks is placed by the
imputation, so no board, pick or policy ranks it, and the board names it (issue 42: measured ground)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from compass.mlcompass import decisions as dec
from compass.mlcompass.case_study import BenchmarkSpec, CaseStudy, CostSpec, UtilitySpec
from compass.mlcompass.frontier import CESFrontier
from compass.mlcompass.scenarios import Scenario

IDS = ["imputed_star", "a", "b", "c", "d"]


def _inputs(min_to_rank: int) -> dec.DecisionInputs:
    """"imputed_star" was measured on one of three benchmarks but its (imputed) measure is the best."""
    x_raw = pd.DataFrame({"b0": [90.0, 60.0, 50.0, 40.0, 30.0], "b1": [np.nan, 70.0, 55.0, 45.0, 35.0],
                          "b2": [np.nan, 65.0, 52.0, 41.0, 20.0]}, index=IDS)
    measures = pd.DataFrame({"C1": [0.99, 0.8, 0.6, 0.4, 0.2]}, index=IDS)
    case = CaseStudy("c", "test", BenchmarkSpec(min_benchmarks_to_rank=min_to_rank), CostSpec(),
                     UtilitySpec(weights={"C1": 1.0}))
    return dec.DecisionInputs(case, Scenario("pure_capability", lam=0.0), measures, pd.Series(0.5, index=IDS),
                              CESFrontier(np.array([1.0]), 2.0, 1.0, 0.5, np.array([0.2, 0.5, 0.8])),
                              {"all": pd.Series({"C1": 1.0})}, x_raw,
                              pd.DataFrame(columns=["context_group", "model_id", "n", "outcome"]), observed=x_raw)


def test_a_model_measured_on_too_few_benchmarks_is_not_ranked_and_is_named():
    inputs = dec.with_measured(_inputs(2))
    board = dec.leaderboard_frame(inputs)
    assert "imputed_star" not in set(board["model_id"]) and board["model_id"].iloc[0] == "a"
    assert board["filter_note"].iloc[0] == "not ranked: 1 model(s) observed on fewer than 2 of the case's 3 benchmarks (imputed_star)"
    picks = dec.selections_frame(inputs).set_index("policy")["model_id"]
    assert picks["mlc_mean"] == "a"


def test_without_the_key_every_model_is_ranked():
    inputs = dec.with_measured(_inputs(0))
    assert dec.leaderboard_frame(inputs)["model_id"].iloc[0] == "imputed_star"
    assert dec.with_measured(_inputs(1)).filter_note == ""  # every model has one observed benchmark


def test_the_screen_and_a_governance_filter_both_say_what_they_left_out():
    inputs = dataclasses.replace(dec.with_measured(_inputs(2)), scenario=Scenario("s", lam=0.0, filters={"open_weights": True}))
    models = pd.DataFrame({"model_id": IDS, "open_weights": [True, True, False, True, None]})
    note = dec.with_filters(inputs, models).filter_note
    assert note.startswith("not ranked: 1 model(s)") and "filters keep 2 of 4 models" in note


def test_compass_diff_names_the_screen_as_what_binds():
    """A model the screen leaves unranked drops off the board: `compass diff` says why, not "binding: unknown"."""
    from compass.mlcompass.changes import screen

    reasons = screen(dec.with_measured(_inputs(2))).set_index("model_id")
    assert reasons.loc["imputed_star", "reason"] == "min_benchmarks_to_rank 2 (observed on 1)"
    assert not reasons.loc["imputed_star", "feasible"] and reasons.loc["a", "feasible"]
