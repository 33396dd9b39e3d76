"""The registry's `pgm` estimator (seed 002 eq. 18 + §4.4 LogNormal cost) on data drawn from its own model."""

import numpy as np
import pytest

from compass.oracle.estimators import get_estimator
from compass.oracle.naive import naive_oracle
from compass.oracle.pgm import lognormal_model_costs
from compass.oracle.records import build_arrays
from compass.oracle.synthetic import generate


def test_pgm_estimator_recovers_oracle_and_costs():
    data = generate(400, 5, 5, n_topics=4, seed=11)
    arr = build_arrays(data.records)
    q, c = get_estimator("pgm")(arr)
    assert abs(q - data.true_oracle) < 0.03 < naive_oracle(arr)[0] - data.true_oracle
    # 2,000 LogNormal(sigma = 0.5) calls per model: the mean's relative SE is about 1.2 %
    np.testing.assert_allclose(lognormal_model_costs(arr.gen_cost), data.true_cost, rtol=0.05)
    # the routed cost: the true mean cost of the model the true p would pick, per prompt
    assert c == pytest.approx(data.true_cost[data.true_p.argmax(axis=1)].mean(), rel=0.15)


def test_constant_list_price_is_kept_as_is():
    cost = np.broadcast_to(np.array([2.0, 5.0]), (10, 3, 2)).transpose(0, 2, 1).copy()
    assert lognormal_model_costs(cost) == pytest.approx([2.0, 5.0])
