"""The rank bootstrap's replicates round-trip through the warehouse as the same arrays."""

import numpy as np
import pandas as pd

from compass.mlcompass.rank_uncertainty import Replicates
from resources.readers import rank_replicates
from resources.warehouse import Warehouse


def test_replicates_round_trip_through_the_warehouse(tmp_path):
    rng = np.random.default_rng(0)
    reps = Replicates(pd.Index(["b", "a", "c"], name="model_id"), ("C1", "C2"), ("math", "law", "x"),
                      rng.random((4, 3, 2)), rng.random((4, 3, 3)))
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace("compass.bootstrap_measures", reps.measure_rows().assign(case_id="k"))
    wh.replace("compass.bootstrap_utilities", reps.utility_rows().assign(case_id="k"))
    back = rank_replicates(wh, "k")
    order, groups = [1, 0, 2], [1, 0, 2]  # models and groups come back sorted
    assert list(back.model_ids) == ["a", "b", "c"] and back.groups == ("law", "math", "x")
    np.testing.assert_array_equal(back.measures, reps.measures[:, order, :])
    np.testing.assert_array_equal(back.utilities, reps.utilities[:, order][:, :, groups])
