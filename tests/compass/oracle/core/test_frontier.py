import numpy as np
import pandas as pd
import pytest

from compass.oracle.bias_correction import bias_corrected_oracle
from compass.oracle.frontier import (aiq, concave_hull, cost_at_quality, cost_saving, error_rate_reduction,
                                     headroom_fraction, pareto, route, sweep)
from compass.oracle.naive import naive_oracle
from compass.oracle.records import from_arrays
from compass.oracle.report import frontier_points
from compass.oracle.split_sample import split_sample_oracle
from tests.compass.oracle.core.conftest import beta_outcomes


def test_route_ties_go_to_cheaper():
    score = np.array([[0.5, 0.5, 0.1], [0.2, 0.9, 0.9]])
    cost = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 3.0]])
    np.testing.assert_array_equal(route(score, cost), [1, 1])


@pytest.fixture
def arrays():
    out, _ = beta_outcomes(120, 4, 6, seed=7)
    return from_arrays(out, np.array([0.1, 1.0, 3.0, 10.0]))


def test_alpha_one_is_oracle_and_frontier_is_pareto(arrays):
    for name, oracle in (("naive", naive_oracle), ("split_sample", split_sample_oracle)):
        pts = frontier_points(arrays, name)
        at_one = pts[pts["alpha"] == 1.0].iloc[0]
        q, c = oracle(arrays)
        assert at_one["quality"] == pytest.approx(q) and at_one["cost"] == pytest.approx(c)
        front = pareto(pts)
        assert front["quality"].max() == pytest.approx(pts["quality"].max())
        qs, cs = front["quality"].to_numpy(), front["cost"].to_numpy()
        for i in range(len(front)):  # no point dominates another
            assert not np.any((qs >= qs[i]) & (cs <= cs[i]) & ((qs > qs[i]) | (cs < cs[i])))
    # α = 0 picks the cheapest model everywhere
    pts = frontier_points(arrays, "naive")
    assert pts[pts["alpha"] == 0.0]["cost"].iloc[0] == pytest.approx(0.1)


def test_pareto_brute_force():
    rng = np.random.default_rng(0)
    pts = pd.DataFrame({"quality": rng.random(60).round(1), "cost": rng.random(60).round(1)})
    front = pareto(pts)
    q, c = pts["quality"].to_numpy(), pts["cost"].to_numpy()
    ref = {(qi, ci) for qi, ci in zip(q, c) if not np.any((q >= qi) & (c <= ci) & ((q > qi) | (c < ci)))}
    assert set(zip(front["quality"], front["cost"])) == ref


def test_headline_numbers_match_paper_tables():
    # Table 1, LiveBench-Coding: SOTA 82.2 -> oracle 86.8 (printed 26.2 from unrounded inputs)
    assert error_rate_reduction(0.868, 0.822) == pytest.approx(0.2584, abs=1e-3)
    assert error_rate_reduction(0.491, 0.358) == pytest.approx(0.206, abs=2e-3)  # BigCodeBench 20.6
    assert np.isnan(error_rate_reduction(1.0, 1.0))
    front = pd.DataFrame({"quality": [0.5, 0.8, 0.9], "cost": [0.1, 0.2, 0.6]})
    assert cost_at_quality(front, 0.85) == pytest.approx(0.4)
    assert cost_saving(front, 0.85, 1.0) == pytest.approx(0.6)
    assert np.isnan(cost_at_quality(front, 0.95))


def test_aiq_closed_forms():
    two = pd.DataFrame({"cost": [0.0, 1.0], "quality": [0.5, 1.0]})
    assert aiq(two) == pytest.approx(0.75)
    assert aiq(pd.DataFrame({"cost": [0.3], "quality": [0.7]})) == pytest.approx(0.7)
    # a dominated interior point is ignored by the concave hull
    three = pd.DataFrame({"cost": [0.0, 0.5, 1.0], "quality": [0.5, 0.6, 1.0]})
    assert len(concave_hull(three)) == 2 and aiq(three) == pytest.approx(0.75)
    # common range: nothing attainable below the cheapest point, flat after the best
    assert aiq(pd.DataFrame({"cost": [0.5], "quality": [0.8]}), (0.0, 1.0)) == pytest.approx(0.4)


def test_headroom_fraction_endpoints():
    base = pd.DataFrame({"cost": [0.0, 1.0], "quality": [0.4, 0.6]})
    oracle = pd.DataFrame({"cost": [0.0, 1.0], "quality": [0.6, 0.9]})
    mid = pd.DataFrame({"cost": [0.0, 1.0], "quality": [0.5, 0.75]})
    assert headroom_fraction(base, base, oracle) == pytest.approx(0.0)
    assert headroom_fraction(oracle, base, oracle) == pytest.approx(1.0)
    assert headroom_fraction(mid, base, oracle) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no headroom"):
        headroom_fraction(mid, oracle, base)


def test_sweep_rejects_bad_alpha(arrays):
    with pytest.raises(ValueError, match="alphas"):
        sweep([(arrays.p_hat, arrays.cell_cost, arrays.p_hat, arrays.cell_cost)], np.array([1.5]))


def test_bias_corrected_frontier_matches_exact_estimate_at_alpha_one(arrays):
    pts = frontier_points(arrays, "bias_corrected")
    q_mc = pts[pts["alpha"] == 1.0]["quality"].iloc[0]
    assert q_mc == pytest.approx(bias_corrected_oracle(arrays)[0], abs=0.01)
    assert q_mc < naive_oracle(arrays)[0]
