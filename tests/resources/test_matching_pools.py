"""A pool from our own catalog (case:<case_id>): measures, lowest list prices, model attributes."""

import numpy as np
import pandas as pd
import pytest

from resources.matching import case_pool, load_user
from resources.warehouse import Warehouse


@pytest.fixture
def wh(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("compass.measures", pd.DataFrame({"case_id": "c", "model_id": ["a", "a", "b", "b", "x", "x"],
                                                 "factor": ["C1", "C2"] * 3, "value": [0.9, 0.2, 0.5, 0.8, 1.0, 1.0]}))
    wh.replace("raw.model_costs", pd.DataFrame({"model_id": ["a", "a", "b"], "provider": ["p", "q", "p"],
                                                "input_usd_per_mtok": [1.0, 0.5, 2.0],
                                                "output_usd_per_mtok": [4.0, 3.0, 8.0], "latency_s": np.nan}))
    wh.replace("raw.models", pd.DataFrame({"model_id": ["a", "b", "x"], "open_weights": [True, False, True],
                                           "context_window": [8192, None, 4096], "reasoning": [None, True, False],
                                           "params_b": [7.0, None, 70.0]}))
    return wh


def test_case_pool_joins_measures_cheapest_prices_and_attributes(wh):
    pool = case_pool(wh, "c")
    assert pool.models == ("a", "b") and pool.name == "case:c"  # x has no price
    np.testing.assert_allclose(pool.price_in, [0.5, 2.0])
    np.testing.assert_allclose(pool.price_out, [3.0, 8.0])
    meta = pool.metadata
    assert list(meta["C1"]) == [0.9, 0.5] and list(meta["open_weights"]) == [1.0, 0.0]
    assert np.isnan(meta["context_window"][1]) and list(pool.reasoning) == [False, True]


def test_a_user_on_a_case_pool(wh, tmp_path):
    path = tmp_path / "me.yaml"
    path.write_text("pool: case:c\nconstraints: {C2: {min: 0.5}, open_weights: false}\nprefer: {C1: 1}\n")
    user, pool = load_user(path, wh)
    assert user.name == "me" and list(user.feasible(pool)) == [False, True]
