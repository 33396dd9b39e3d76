"""readers.prices: dollars next to the normalized cost, whichever unit a case prices in."""

import math

import pandas as pd
import pytest

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


def test_the_per_query_price_extract_answers_like_the_whole_price_table():
    """datasets/model_costs keeps only the models the per-query data names, each at its cheapest provider: the
    dataset extracts read the same prices from it as from raw.model_costs (issue 17)."""
    from compass.ingest.extracts import dataset_prices, mentioned_prices

    costs = pd.DataFrame({"model_id": ["a", "a", "b", "c"], "provider": ["x", "y", "x", "x"],
                          "input_usd_per_mtok": [1.0, 0.5, 2.0, 3.0], "output_usd_per_mtok": [1.0, 0.5, 2.0, 3.0],
                          "blended_usd_per_mtok": [1.0, 0.5, 2.0, 3.0]})
    extract = mentioned_prices(costs, ["b", "a", "unpriced"])
    assert extract[["model_id", "provider"]].values.tolist() == [["a", "y"], ["b", "x"]]
    records = pd.DataFrame({"model_id": ["a", "b"], "cost_usd": [None, None]})
    pd.testing.assert_frame_equal(dataset_prices(records, extract), dataset_prices(records, costs))


def test_reads_in_one_session_share_one_connection_and_refuse_writes(tmp_path, monkeypatch):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("compass.costs", _costs("params_b"))
    opened = []
    monkeypatch.setattr(Warehouse, "_open", lambda self, read_only, real=Warehouse._open: opened.append(read_only)
                        or real(self, read_only))
    with wh.reading():
        assert len(wh.read("compass.costs")) == 2 and wh.table_exists("compass.costs") and wh.query("select 1").iloc[0, 0] == 1
        with pytest.raises(RuntimeError, match=r"inside Warehouse\.reading\(\)"):
            wh.replace("compass.costs", _costs("params_b"))
    assert opened == [True]
    wh.read("compass.costs")
    assert opened == [True, True]  # after the block, one connection per read again
