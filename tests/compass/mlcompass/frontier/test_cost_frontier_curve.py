"""The cost frontier as charts draw it (compass.mlcompass.frontier.cost_frontier_curve): within the models' costs,
ending where it reaches the most capable point, solid only between the tier costs it was fitted on."""

import numpy as np

from compass.mlcompass.frontier import cost_frontier_curve

# small_open's fit (c0 4.85, d 0.88): c0·c^d passes capability 1 at c ≈ 0.17 of a cost range reaching 1.
C0, D, TIER_COSTS = 4.85, 0.88, np.array([0.048, 0.057, 0.249])


def test_the_curve_ends_where_it_reaches_the_ceiling_inside_the_models_cost_range():
    cost, level, fitted = cost_frontier_curve(C0, D, TIER_COSTS, (5e-4, 1.0), 1.0)
    assert cost.min() == 5e-4 and level.max() <= 1.0
    assert np.isclose(cost.max(), (1.0 / C0) ** (1 / D)) and np.isclose(level[-1], 1.0)
    assert np.allclose(level, C0 * cost**D)
    assert fitted.any() and np.all(cost[fitted] >= TIER_COSTS.min()) and not fitted[cost < TIER_COSTS.min()].any()


def test_a_curve_entirely_above_the_ceiling_draws_nothing_and_a_low_one_spans_every_cost():
    assert cost_frontier_curve(C0, D, TIER_COSTS, (0.5, 1.0), 1.0)[0].size == 0
    cost, level, fitted = cost_frontier_curve(0.5, D, TIER_COSTS, (5e-4, 1.0), 1.0)
    assert cost.min() == 5e-4 and cost.max() == 1.0 and fitted[np.isin(cost, TIER_COSTS)].all()
    assert not fitted[cost > TIER_COSTS.max()].any()
