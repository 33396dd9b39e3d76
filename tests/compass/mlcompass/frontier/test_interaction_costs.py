"""Cost per interaction (§4.2): c(m) = p_tok(m) · E[tokens | workload], per provider, aggregated over providers."""

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.case_inputs import interaction_costs, model_costs
from compass.mlcompass.case_study import CostSpec

PRICES = pd.DataFrame({
    "model_id": ["a", "a", "b", "c"],
    "input_usd_per_mtok": [3.0, 2.0, 0.5, np.nan],
    "output_usd_per_mtok": [15.0, 20.0, 1.5, 4.0],
    "blended_usd_per_mtok": [6.0, 6.5, 0.75, np.nan],
})
SPEC = CostSpec(column="usd_per_interaction", workload={"input_tokens": 1000, "output_tokens": 500})


def test_hand_computed_cost_per_interaction():
    usd = interaction_costs(PRICES, SPEC)
    # a: min(3*1000 + 15*500, 2*1000 + 20*500) / 1e6 = min(0.0105, 0.012); b: (500 + 750) / 1e6
    assert usd["a"] == pytest.approx(0.0105) and usd["b"] == pytest.approx(0.00125)
    assert np.isnan(usd["c"])  # no input price: unknown, not free
    costs = model_costs(PRICES, pd.DataFrame(), SPEC, pd.Index(["a", "b", "c"]))
    assert costs.to_dict() == pytest.approx({"a": 0.0105, "b": 0.00125})


def test_the_cost_ranking_can_differ_from_the_blended_price():
    """An output-heavy workload makes a model with cheap input and dear output the dearer one."""
    heavy_out = CostSpec(column="usd_per_interaction", workload={"input_tokens": 100, "output_tokens": 2000})
    prices = PRICES.iloc[:2].assign(model_id=["x", "y"])
    assert prices.set_index("model_id")["blended_usd_per_mtok"].idxmin() == "x"
    assert interaction_costs(prices, heavy_out).idxmin() == "x"
    heavy_in = CostSpec(column="usd_per_interaction", workload={"input_tokens": 5000, "output_tokens": 10})
    assert interaction_costs(prices, heavy_in).idxmin() == "y"


@pytest.mark.parametrize("kwargs", [
    {"column": "usd_per_interaction"},
    {"column": "usd_per_interaction", "table": "models", "workload": {"input_tokens": 1, "output_tokens": 1}},
    {"workload": {"input_tokens": 1}},
    {"workload": {"input_tokens": -1, "output_tokens": 1}},
])
def test_invalid_workloads_are_refused(kwargs):
    with pytest.raises(ValueError, match="cost"):
        CostSpec(**kwargs)


def test_case_catalog_holds_the_cases_models_and_ignores_prices_of_others():
    """A case's catalog: its models' attributes, raw cost (model_costs) and cost per interaction; a price of a
    model outside the case does not change it (issue 17: so nothing of the case re-runs)."""
    from compass.mlcompass.case_inputs import case_catalog_rows

    attributes = pd.DataFrame({"model_id": ["a", "b", "c", "z"], "open_weights": [True, False, None, True],
                               "latency_s": [0.5, np.nan, 1.0, 2.0]})
    ids = pd.Index(["a", "b", "c", "new"], name="model_id")
    catalog = case_catalog_rows(PRICES, attributes, SPEC, ids)
    assert list(catalog["model_id"]) == ["a", "b", "c", "new"]  # x_raw's order, unknown models kept
    assert catalog["raw_cost"].tolist()[:2] == pytest.approx([0.0105, 0.00125])
    assert catalog["raw_cost"].iloc[2:].isna().all()  # c has no input price, "new" no row at all
    assert catalog["usd_per_interaction"].tolist()[:2] == pytest.approx([0.0105, 0.00125])
    assert catalog["open_weights"].tolist()[:2] == [True, False] and catalog["latency_s"].iloc[0] == 0.5
    repriced = pd.concat([PRICES, pd.DataFrame({"model_id": ["z"], "input_usd_per_mtok": [9.0],
                                                "output_usd_per_mtok": [9.0], "blended_usd_per_mtok": [9.0]})])
    pd.testing.assert_frame_equal(case_catalog_rows(repriced, attributes, SPEC, ids), catalog)
    by_params = case_catalog_rows(PRICES, attributes.assign(params_b=[7.0, 70.0, 0.0, 1.0]),
                                  CostSpec(table="models", column="params_b"), ids)
    assert by_params["raw_cost"].tolist()[:2] == [7.0, 70.0] and by_params["raw_cost"].iloc[2:].isna().all()
    assert "usd_per_interaction" not in by_params  # no workload
