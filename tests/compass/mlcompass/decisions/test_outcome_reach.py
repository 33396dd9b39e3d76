"""Utilities that reach the models they rank (issue 42, items 6 and 8): how far a row lies beyond the outcome
models' range, and the coverage of the true top 5 by the rank intervals in the worlds of `rank_coverage.WORLDS`."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import logit

from compass.mlcompass import decisions as dec
from compass.mlcompass.case_utilities import beyond_outcome_range, outcome_reach
from compass.mlcompass.rank_coverage import (MEASURED_TOP5, REFERENCE, TARGET_TOP5, WORLDS, coverage, interval_label,
                                             simulated_catalog, synthetic_case)
from compass.mlcompass.rank_uncertainty import REACH, bootstrap_replicates
from compass.mlcompass.scenarios import Scenario
from resources.settings import heavy
from tests.compass.mlcompass.decisions.test_person_weights import _inputs


def test_beyond_outcome_range_is_the_distance_outside_the_outcome_models_box():
    measures = pd.DataFrame({"C1": [0.0, 1.0, 0.5, 1.3, 1.3, -0.3], "C2": [0.0, 1.0, 0.9, 0.5, 1.4, -0.4]},
                            index=["a", "b", "mid", "right", "corner", "below"])
    got = beyond_outcome_range(measures, pd.Index(["a", "b", "unknown"]))
    np.testing.assert_allclose(got.to_numpy(), [0, 0, 0, 0.3, 0.5, 0.5], atol=1e-12)
    assert beyond_outcome_range(measures, pd.Index([])).isna().all()
    reach = outcome_reach(measures, pd.Index(["a", "b"]), pd.Index(["mid", "right", "corner"]))
    assert reach["outcome_models"] == 2 and reach["share_inside"] == pytest.approx(1 / 3)
    assert reach["median_beyond"] == pytest.approx(0.3) and reach["max_beyond"] == pytest.approx(0.5)


def test_the_leaderboard_says_how_far_each_row_extrapolates_and_whether_its_interval_is_conditional():
    """Every row of a learned utility carries the lowest measured top-5 coverage over the worlds, and the flag says
    whether that misses the target (the project's world, 0.845 < 0.85: conditional); a given utility neither."""
    inputs = _inputs(Scenario("plain", lam=0.1))
    ids = inputs.measures.index
    inputs.outcomes = pd.DataFrame({"context_group": "math", "model_id": ids[:10], "n": 5, "outcome": 0.5})
    board = dec.leaderboard_frame(inputs).set_index("model_id")
    beyond = beyond_outcome_range(inputs.measures, pd.Index(ids[:10])).loc[board.index]
    pd.testing.assert_series_equal(board["beyond_outcome_range"], beyond, check_names=False)
    assert (beyond > 0).any() and (beyond == 0).any()
    worst = min(MEASURED_TOP5.values())
    np.testing.assert_allclose(board["interval_coverage_top5"], worst)
    assert worst < TARGET_TOP5 and board["interval_conditional"].all()
    structural = interval_label(pd.Series(np.nan, index=["x"]))
    assert structural.isna().all().all()


def test_rank_intervals_cover_the_true_top_5_in_every_world():
    """Light version of the study (docs/results/mlcompass.md, `scripts/mlcompass_rank_coverage.py --worlds`):
    6 catalogs per world, B = 40, pooled over the four worlds (120 true-top-5 models): 0.92 (per world 0.83,
    0.97, 0.90, 0.97); the pooled mean over 24 catalogs has se ~0.03, so the target 0.85 sits ~2 se below.
    Without the model effects (issue 11's bootstrap) it is 0.78; without the widening beyond the outcome
    range 0.89 (too close to tell apart here: `test_model_effects_widen_beyond_the_outcome_range`)."""
    per_world = {name: coverage(range(6), 40, w.model_sd, ceiling_share=w.ceiling_share,
                                outcome_pool=w.outcome_pool) for name, w in WORLDS.items()}
    pooled = pd.concat(per_world.values())
    assert pooled["coverage_top5"].mean() >= TARGET_TOP5, {k: v["coverage_top5"].mean() for k, v in per_world.items()}
    assert pooled["width"].mean() < 0.85 * 40  # not bought with intervals that span the whole catalog


def test_model_effects_widen_beyond_the_outcome_range():
    """Step (iv) with REACH: on a bottom-of-range catalog the replicate utilities of the models beyond the
    outcome models' range spread more than without the widening (same draws otherwise), inside it not at all."""
    world = simulated_catalog(3, model_sd=0.5, outcome_pool="bottom")
    wide, plain = (bootstrap_replicates(world.x_raw, world.rows, synthetic_case(), 30, seed=3,
                                        reference_loadings=REFERENCE, reach=r) for r in (REACH, 0.0))
    trained = world.rows["model_id"].unique()
    point = pd.DataFrame(plain.measures.mean(axis=0), index=plain.model_ids, columns=list(plain.factors))
    beyond = beyond_outcome_range(point, pd.Index(trained)).to_numpy() > 0.05
    spread = {k: logit(np.clip(r.utilities.mean(axis=2), 1e-9, 1 - 1e-9)).std(axis=0) for k, r in
              (("wide", wide), ("plain", plain))}
    ratio = spread["wide"] / spread["plain"]
    assert beyond.sum() >= 5 and (ratio[beyond] > 1).all() and ratio[beyond].mean() > 1.05, ratio[beyond]
    inside = beyond_outcome_range(point, pd.Index(trained)).to_numpy() == 0
    np.testing.assert_allclose(spread["wide"][inside], spread["plain"][inside], rtol=0.05)


@pytest.mark.skipif(not heavy(), reason="the full coverage study runs with COMPASS_HEAVY=1")
@pytest.mark.parametrize("world", list(WORLDS))
def test_each_world_keeps_the_top_5_coverage_it_claims(world):
    """Heavy: the published number per world (40 catalogs, B = 60) is reproduced within 2 se, and a world whose
    number is not labelled conditional covers the true top 5 at >= TARGET_TOP5."""
    w = WORLDS[world]
    got = coverage(range(40), 60, w.model_sd, ceiling_share=w.ceiling_share, outcome_pool=w.outcome_pool)
    mean, se = got["coverage_top5"].mean(), got["coverage_top5"].std(ddof=1) / len(got) ** 0.5
    assert mean >= MEASURED_TOP5[world] - 2 * se, (mean, se)
    if MEASURED_TOP5[world] >= TARGET_TOP5:
        assert mean >= TARGET_TOP5, (mean, se)


def test_the_leaderboard_page_prints_a_conditional_interval_with_its_measured_coverage():
    from pipelines.report.site import conditional_note, rank_interval

    board = pd.DataFrame({"rank_lo": [1, 2, None], "rank_hi": [5, 9, None], "interval_supported": True,
                          "n_outcome_models": 23, "interval_conditional": [True, False, pd.NA],
                          "interval_coverage_top5": [0.845, 0.845, np.nan]})
    assert rank_interval(board).tolist() == ["1–5*", "2–9", ""]
    assert "covered the true rank of the true top 5 only 84.5 % of the time" in conditional_note(board)
    assert conditional_note(board.assign(interval_conditional=False)) == ""
