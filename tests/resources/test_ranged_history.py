"""History as row version ranges (issue 45): each published version of raw.query_records can be read back, an
unchanged row is stored once however many versions keep it, and versions beyond the retention go."""

import pandas as pd

from resources import warehouse as warehouse_module
from resources.warehouse import Warehouse

TABLE = "raw.query_records"


def _rows(n: int, changed: dict[int, float] | None = None) -> pd.DataFrame:
    correct = [float(i % 2) for i in range(n)]
    for i, value in (changed or {}).items():
        correct[i] = value
    return pd.DataFrame({"dataset": "d", "query_id": [f"q{i}" for i in range(n)], "model_id": "m",
                         "correct": correct, "data_version": "", "run_id": "r", "refreshed_at": pd.Timestamp("2026-01-01")})


def _publish(wh: Warehouse, frame: pd.DataFrame, version: str) -> None:
    wh.replace(TABLE, frame.assign(data_version=version), None, history_version=version)


def _same(read: pd.DataFrame, published: pd.DataFrame) -> bool:
    own = published.drop(columns=["data_version", "run_id", "refreshed_at"])
    key = ["query_id"]
    return read[own.columns].sort_values(key).reset_index(drop=True).equals(own.sort_values(key).reset_index(drop=True))


def test_every_version_reads_back_and_unchanged_rows_are_stored_once(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    published = {"v1": _rows(100), "v2": _rows(101), "v3": _rows(101, {4: 1.0}), "v4": _rows(100)}
    for version, frame in published.items():  # v2 appends one row, v3 changes one, v4 is v1's content again
        _publish(wh, frame, version)
    _publish(wh, published["v4"], "v4")  # republishing the live version adds nothing
    for version, frame in published.items():
        assert _same(wh.read_version(TABLE, version), frame), version
    stored = wh.query("select count(*) as n from history.raw_query_records_rows")["n"].iloc[0]
    assert stored == 100 + 1 + 1 + 1  # v1's rows, the appended row, the changed row, row 4 back as in v1
    assert wh.query("select count(*) as n from history.raw_query_records_versions")["n"].iloc[0] == 4


def test_versions_beyond_the_retention_are_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(warehouse_module, "HISTORY_VERSIONS_KEPT", 2)
    wh = Warehouse(tmp_path / "w.duckdb")
    frames = [_rows(10, {0: float(k)}) for k in range(4)]  # row 0 changes every version
    for k, frame in enumerate(frames):
        _publish(wh, frame, f"v{k}")
    assert wh.read_version(TABLE, "v0").empty and wh.read_version(TABLE, "v1").empty
    assert _same(wh.read_version(TABLE, "v2"), frames[2]) and _same(wh.read_version(TABLE, "v3"), frames[3])
    assert wh.query("select count(*) as n from history.raw_query_records_rows")["n"].iloc[0] == 10 + 1
