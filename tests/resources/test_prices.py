"""readers.prices: dollars next to the normalized cost, whichever unit a case prices in."""

import math

import pandas as pd

from resources import readers
from resources.warehouse import Warehouse


def _costs(column: str, **extra) -> pd.DataFrame:
    return pd.DataFrame({"model_id": ["a", "b"], "raw_cost": [2.5, 10.0], "cost": [0.0, 1.0], "cost_column": column,
                         "case_id": "c", **extra})


def test_a_token_price_is_usd_per_mtok_and_a_workload_gives_usd_per_query(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("compass.costs", _costs("blended_usd_per_mtok", usd_per_interaction=[0.001, 0.004]))
    got = readers.prices(wh, "c").set_index("model_id")
    assert got["usd_mtok"].tolist() == [2.5, 10.0] and got["usd_query"].tolist() == [0.001, 0.004]
    assert got["cost"].tolist() == [0.0, 1.0]


def test_parameter_counts_have_no_dollars_and_a_per_interaction_cost_is_per_query(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("compass.costs", _costs("params_b"))
    got = readers.prices(wh, "c")
    assert got["usd_mtok"].map(math.isnan).all() and got["usd_query"].map(math.isnan).all()
    wh.replace("compass.costs", _costs("usd_per_interaction"))
    got = readers.prices(wh, "c")
    assert got["usd_query"].tolist() == [2.5, 10.0] and got["usd_mtok"].map(math.isnan).all()
