"""The sensitivity grid's capability side round-trips through the warehouse (compass/frontier_sensitivity reads it)."""

import dataclasses

import numpy as np
import pandas as pd

from compass.mlcompass import sensitivity as sens
from resources.readers import sensitivity_capability
from resources.warehouse import Warehouse
from tests.compass.mlcompass.sensitivity.conftest import known_frontier_catalog

GRID = sens.SensitivityGrid(n_factors=(2,), n_tiers=(2, 3), eps=(0.0, 0.05), aggregation=("median", "mean"),
                            cost_scaling="max", pa_iterations=5)


def _publish(wh: Warehouse, case_id: str, capability: sens.CapabilityCells) -> None:
    where = {"case_id": case_id}
    wh.replace_many([("compass.frontier_sensitivity_capability", capability.cells.assign(grid="light", **where), where,
                      None),
                     ("compass.frontier_sensitivity_tiers", capability.tiers.assign(**where), where, None)])


def test_a_case_whose_every_cell_fails_published_first_leaves_the_others_readable(tmp_path):
    """No cell of `failing` fits (3 factors of rank-2 data), so it has no tiers; publishing it first must not give the
    tiers table untyped columns, into which the next case's model ids would not fit."""
    x_raw, costs, _ = known_frontier_catalog()
    failing = sens.capability_cells(x_raw, dataclasses.replace(GRID, n_factors=(3,)))
    assert (failing.cells["error"] != "").all() and failing.tiers.empty
    wh = Warehouse(tmp_path / "w.duckdb")
    _publish(wh, "failing", failing)
    _publish(wh, "fitted", sens.capability_cells(x_raw, GRID))
    stored, grid_name = sensitivity_capability(wh, "fitted", x_raw.index)
    assert grid_name == "light"
    pd.testing.assert_frame_equal(sens.cost_cells(stored, costs, GRID.aggregation, GRID.cost_scaling),
                                  sens.frontier_sensitivity(x_raw, costs, GRID), rtol=0, atol=0)
    stored, _ = sensitivity_capability(wh, "failing", x_raw.index)
    table = sens.cost_cells(stored, costs, GRID.aggregation, GRID.cost_scaling)
    assert len(table) == 2 * 2 * 2 and table["error"].str.startswith("measures with 3 factors").all()
    assert (table[["n_efficient", "tiers_used"]] == 0).all().all() and np.isnan(table["d"]).all()
