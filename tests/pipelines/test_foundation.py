"""Foundation guarantees: idempotent refresh, bad input leaves the warehouse alone, no lock errors."""

import pytest

from compass.ingest.errors import IngestError
from tests.pipelines.helpers import (
    SOURCE_KEYS,
    assert_same_tables,
    run_refresh,
    snapshot,
)


def test_second_refresh_recomputes_nothing_downstream(tiny_refreshed):
    instance, db, first = tiny_refreshed
    before = snapshot(db)
    second = run_refresh(instance)
    # No input changed: no source is read again (pipelines.refresh.sources_to_read), no run at all.
    assert second.materialized == [] and second.runs == []
    assert_same_tables(before, snapshot(db))
    versions = [
        instance.get_latest_data_version_record(k).asset_materialization.tags["dagster/data_version"]  # type: ignore[union-attr]
        for k in SOURCE_KEYS
    ]
    assert len(first.runs) >= 1 and all(versions)


@pytest.mark.parametrize(
    "table,text,row,column",
    [
        ("benchmark_scores", "model_id,benchmark,score,score_scale\ngpt-4o,mmlu,1.7,fraction\n", 1, "score"),
        ("model_costs", "model_id,provider,input_usd_per_mtok,output_usd_per_mtok\nnobody,x,1,1\n", 1, "model_id"),
    ],
)
def test_rejected_input_leaves_warehouse_unchanged(tiny_refreshed, tmp_path, monkeypatch, table, text, row, column):
    instance, db, _ = tiny_refreshed
    before = snapshot(db)
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    config = tmp_path / "bad_config.yaml"
    tiny = __import__("tests.pipelines.conftest", fromlist=["TINY_CONFIG"]).TINY_CONFIG
    config.write_text(
        tiny.read_text().replace("path: ", f"path: {tiny.parent}/") + f"  - {{table: {table}, path: {bad}}}\n"
    )
    monkeypatch.setenv("COMPASS_CONFIG", str(config))
    with pytest.raises(IngestError) as info:
        run_refresh(instance)
    message = str(info.value)
    assert "bad.csv" in message and f"row {row}" in message and f"column {column}" in message
    assert_same_tables(before, snapshot(db))


def test_status_lists_tables_with_row_counts(tiny_refreshed, capsys):
    from pipelines.cli import main

    assert main(["status"]) == 0
    out = capsys.readouterr().out
    table_part, _, tail = out.partition("\n\n")
    lines = {line.split()[0]: line.split() for line in table_part.splitlines()[1:]}
    assert "refresh: idle" in tail and "warehouse.read.duckdb (as of 20" in tail
    assert lines["raw.models"][1] == "3" and lines["raw.benchmark_scores"][1] == "9"
    assert lines["raw.models"][-1] != "-"  # a data version is shown


def test_rejected_config_applies_nothing_not_half(tiny_refreshed, tmp_path, monkeypatch, capsys):
    """Issue 17's reproduction: config A adds a model and its score; config B (without A's model file) carries a
    non-numeric score. B must be refused before any raw table is written, so raw.models keeps pa-model-x."""
    from pipelines.cli import main
    from tests.pipelines.conftest import TINY_CONFIG
    from tests.pipelines.helpers import config_with_extra

    instance, db, _ = tiny_refreshed
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    config_a = config_with_extra(TINY_CONFIG, a_dir, [
        ("models", "model_id,display_name,organization\npa-model-x,PA Model X,PA\n"),
        ("benchmark_scores", "model_id,benchmark,score,score_scale\npa-model-x,gpqa_diamond,0.5,fraction\n")])
    monkeypatch.setenv("COMPASS_CONFIG", str(config_a))
    run_refresh(instance)
    after_a = snapshot(db)
    assert "pa-model-x" in set(after_a["raw.models"]["model_id"])
    config_b = config_with_extra(TINY_CONFIG, b_dir, [
        ("benchmark_scores", "model_id,benchmark,score,score_scale\ngpt-4o,mmlu,high,fraction\n")])
    capsys.readouterr()
    assert main(["run", "--config", str(config_b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: rejected input, warehouse unchanged: ") and "row 1, column score" in err
    assert len(err.strip().splitlines()) == 1  # the one clear line; traces (if any) go to the log file
    assert_same_tables(after_a, snapshot(db))
