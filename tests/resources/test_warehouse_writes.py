"""Warehouse.replace_many: several tables in one transaction (publish_assets writes a step's tables with it)."""

import pandas as pd
import pytest

from resources.warehouse import Warehouse


def _rows(version: str, x: int) -> pd.DataFrame:
    return pd.DataFrame({"case_id": ["a"], "x": [x], "data_version": [version]})


def test_tables_land_together_and_a_republished_version_adds_no_history(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace_many([("s.t", _rows("v1", 1), {"case_id": "a"}, "v1")])
    wh.replace_many([("s.t", _rows("v1", 1), {"case_id": "a"}, "v1"), ("s.u", _rows("v1", 1), {"case_id": "a"}, "v1")])
    assert len(wh.read("history.s_t")) == 1 and len(wh.read("s.u")) == 1
    assert wh.holds_version("s.t", {"case_id": "a"}, "v1") and not wh.holds_version("s.t", {"case_id": "a"}, "v2")


def test_a_failing_table_leaves_every_table_as_it_was(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.replace_many([("s.t", _rows("v1", 1), {"case_id": "a"}, "v1")])
    bad = pd.DataFrame({"case_id": ["a"], "y": [2]})  # no data_version: its history lookup fails
    with pytest.raises(Exception, match="data_version"):
        wh.replace_many([("s.t", _rows("v2", 2), {"case_id": "a"}, "v2"), ("s.v", bad, {"case_id": "a"}, "v2")])
    assert wh.read("s.t")["x"].tolist() == [1] and not wh.table_exists("s.v")
    assert wh.read("history.s_t")["data_version"].tolist() == ["v1"]
