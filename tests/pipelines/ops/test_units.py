"""Fast checks of the inbox rules and the leaderboard diff, no Dagster run (hand-built known-truth inputs)."""

from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from compass.mlcompass.changes import (
    Snapshot,
    diff_leaderboards,
    previous_version,
    version_live_at,
)
from pipelines.inbox import inbox_table, process_inbox
from resources.sources import accepted_files
from resources.warehouse import Warehouse
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "ops"


@pytest.mark.parametrize(
    "name,columns,table",
    [
        ("model_costs_2026.csv", ["model_id"], "model_costs"),  # longest prefix, not "models"
        ("models.parquet", ["model_id"], "models"),
        ("prices.csv", ["model_id", "provider", "input_usd_per_mtok", "output_usd_per_mtok"], "model_costs"),
        ("scores.csv", ["model_id", "benchmark", "score", "score_scale"], "benchmark_scores"),
    ],
)
def test_inbox_table_by_prefix_then_columns(name, columns, table):
    assert inbox_table(Path(name), columns) == table


def test_inbox_table_ambiguous_columns_is_an_error_naming_the_candidates():
    # model_id alone fits models (all columns optional but model_id) and nothing else -> models;
    # alias + model_id fits model_aliases only; model_id + display_name fits models only.
    assert inbox_table(Path("x.csv"), ["alias", "model_id"]) == "model_aliases"
    with pytest.raises(IngestError, match=r"x\.csv.*fit no table"):
        inbox_table(Path("x.csv"), ["model_id", "colour"])


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


def test_batch_resolves_scores_against_a_model_accepted_earlier_in_the_batch(tmp_path):
    inbox, accepted = tmp_path / "inbox", tmp_path / "accepted"
    wh = Warehouse(tmp_path / "empty.duckdb")  # no raw tables at all
    # Names sort scores before models; table order must still validate models first.
    _write(inbox, "a_scores.csv", "model_id,benchmark,score,score_scale\nOpenAI/New-Model,mmlu,0.5,fraction\n")
    _write(inbox, "models_new.csv", "model_id,display_name\nnew-model,New Model\n")
    _write(inbox, "model_costs_bad.csv", "model_id,provider,input_usd_per_mtok,output_usd_per_mtok\nnew-model,x,1,-2\n")
    result = process_inbox(inbox, accepted, wh)
    assert [t for t, _ in result.accepted] == ["models", "benchmark_scores"]
    assert [p.name for p, _ in result.rejected] == ["model_costs_bad.csv"]
    assert "row 1, column output_usd_per_mtok" in result.rejected[0][1]
    report = (inbox / "rejected" / "model_costs_bad.csv.error.txt").read_text()
    assert report.startswith(str(inbox / "model_costs_bad.csv"))
    assert not wh.path.exists()  # validation only reads the warehouse
    assert [(s.table, s.path.name) for s in accepted_files(folder=accepted)] == [
        ("models", "models_new.csv"), ("benchmark_scores", "a_scores.csv")]
    # The same content delivered again is a repeat, not a second application.
    _write(inbox, "models_again.csv", "model_id,display_name\nnew-model,New Model\n")
    again = process_inbox(inbox, accepted, wh)
    assert again.accepted == [] and "already applied" in again.rejected[0][1]


def _snap(ranks: list[str], pick: str | None, raw: dict[str, float], c1: dict[str, float]) -> Snapshot:
    board = pd.DataFrame({"rank": range(1, len(ranks) + 1), "model_id": ranks})
    top = max(raw.values())
    return Snapshot(board, pick, pd.Series(raw), pd.Series(raw) / top,
                    pd.DataFrame({"C1": pd.Series(c1)}).rename_axis("model_id"))


def test_diff_names_moves_entries_exits_and_the_recommendation_with_reasons():
    old = _snap(["a", "b", "c", "d", "f"], "a", {"a": 4.0, "b": 2.0, "c": 8.0, "d": 1.0, "f": 3.0},
                {"a": 0.9, "b": 0.5, "c": 0.7, "d": 0.3, "f": 0.1})
    # c's price falls 8 -> 1 (now first), d becomes infeasible, e is new, a, b and f keep their inputs.
    new = _snap(["c", "a", "e", "b", "f"], "c", {"a": 4.0, "b": 2.0, "c": 1.0, "d": 9.0, "e": 1.0, "f": 3.0},
                {"a": 0.9, "b": 0.5, "c": 0.7, "d": 0.3, "e": 0.6, "f": 0.1})
    screen = pd.DataFrame({"model_id": ["d"], "feasible": [False], "reason": ["budget"]})
    out = diff_leaderboards(old, new, screen).set_index(["change", "model_id"])
    assert set(out.index) == {("new_model", "e"), ("dropped_model", "d"), ("rank_move", "c"), ("rank_move", "a"),
                              ("rank_move", "b"), ("recommendation", "c")}
    assert (out.loc[("rank_move", "c"), "old_rank"], out.loc[("rank_move", "c"), "new_rank"]) == (3, 1)
    assert "cost changed 8 -> 1 (normalized 1.000 -> 0.111)" in out.loc[("rank_move", "c"), "detail"]
    assert "no own input changed; moved by c (cost changed" in out.loc[("rank_move", "a"), "detail"]
    dropped = out.loc[("dropped_model", "d"), "detail"]
    assert dropped.startswith("newly infeasible (binding: budget); cost changed 1 -> 9")
    assert out.loc[("new_model", "e"), "detail"] == "new model"
    assert out.loc[("recommendation", "c"), "detail"].startswith("mlc_mean a -> c; c: cost changed")
    assert (out.loc[("rank_move", "b"), "old_rank"], out.loc[("rank_move", "b"), "new_rank"]) == (2, 4)
    assert ("rank_move", "f") not in out.index  # kept rank 5


def test_diff_reports_measure_changes_and_nothing_for_identical_snapshots():
    old = _snap(["a", "b"], "a", {"a": 1.0, "b": 2.0}, {"a": 0.9, "b": 0.5})
    assert diff_leaderboards(old, old).empty
    new = _snap(["b", "a"], "b", {"a": 1.0, "b": 2.0}, {"a": 0.9, "b": 0.95})
    out = diff_leaderboards(old, new).set_index(["change", "model_id"])
    assert out.loc[("rank_move", "b"), "detail"] == "rank 2 -> 1; measures changed: C1 0.500 -> 0.950"


def test_version_selection_previous_and_live_at_a_time():
    t = pd.Timestamp("2026-11-22 01:00:00")
    history = pd.DataFrame({
        "data_version": ["v1", "v1", "v2", "v3"],
        "run_id": ["r1", "r1", "r2", "r3"],
        "refreshed_at": [t, t, t + pd.Timedelta("1min"), t + pd.Timedelta("2min")],
        "x": [1, 2, 3, 4],
    })
    assert previous_version(history, "v3") == "v2"
    assert previous_version(history, "v1") == "v3"  # a version that came back: the latest other one
    assert previous_version(history[history.data_version == "v1"], "v1") is None
    # v3's refresh began at +90s: v2 (+60s) was the last version before it; at +30s only v1 was.
    assert previous_version(history, "v3", before=t + pd.Timedelta("90s")) == "v2"
    assert previous_version(history, "v3", before=t + pd.Timedelta("30s")) == "v1"
    assert previous_version(history, "v3", before=t) is None
    assert list(version_live_at(history, "r2", t)["x"]) == [3]  # same run wins
    assert list(version_live_at(history, "zz", t + pd.Timedelta("90s"))["x"]) == [3]
    assert version_live_at(history, "zz", t - pd.Timedelta("1s")).empty


def test_schedule_and_automation_sensor_are_registered():
    from pipelines.definitions import defs

    schedule = defs.resolve_schedule_def("daily_raw_refresh")
    assert schedule.cron_schedule == "0 6 * * *" and schedule.execution_timezone == "UTC"
    assert schedule.job_name == "raw_sources"
    raw = sorted(k.to_user_string() for k in defs.resolve_job_def("raw_sources").asset_layer.selected_asset_keys)
    tables = ("models", "model_aliases", "benchmark_scores", "model_costs", "interactions", "query_records",
              "route_labels")
    assert raw == ["live/fetches"] + [f"raw/{t}" for t in sorted(tables)]  # the fetch runs before the reads
    automation = defs.resolve_sensor_def("compass_automation")
    graph = defs.resolve_asset_graph()
    assert automation.default_status == dg.DefaultSensorStatus.RUNNING
    assert automation.asset_selection.resolve(graph) == set(graph.get_all_asset_keys())
    assert defs.resolve_sensor_def("inbox_sensor").job_name == "raw_sources"


def test_dataset_extract_version_ignores_columns_other_datasets_added():
    """A column that only another dataset's file carries must not change this dataset's data version."""
    from compass.ingest.extracts import own_columns
    from resources.warehouse import frame_version

    rows = pd.DataFrame({"dataset": ["d", "d"], "split": [None, None], "query_id": ["1", "2"],
                         "model_id": ["m", "m"], "generation": [0, 0], "correct": [1.0, 0.0]})
    widened = rows.assign(latency_ms=float("nan"), category=None)
    assert frame_version(own_columns(widened)) == frame_version(own_columns(rows)) != frame_version(widened)
    assert "split" in own_columns(widened).columns  # key columns stay, even when empty
    assert "latency_ms" in own_columns(widened.assign(latency_ms=[1.0, None])).columns


def test_prices_reach_only_the_oracle_and_only_datasets_without_per_call_cost():
    """A price change must not re-run cascades (they never read prices) nor datasets with their own cost_usd."""
    from assets.datasets import DATASET_PRICES
    from compass.ingest.extracts import dataset_prices
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    costs = dg.AssetKey(["raw", "model_costs"])
    for key in graph.materializable_asset_keys:
        if key.path[0] == "cascade":
            assert not {costs, DATASET_PRICES} & set(graph.get_ancestor_asset_keys(key)), key
    prices = pd.DataFrame({"model_id": ["a", "a", "b"], "provider": ["x", "y", "x"],
                           "input_usd_per_mtok": [1.0, 0.5, 2.0], "output_usd_per_mtok": [1.0, 0.5, 2.0],
                           "blended_usd_per_mtok": [1.0, 0.5, 2.0]})
    records = pd.DataFrame({"model_id": ["a", "c"], "cost_usd": [0.1, None]})
    assert dataset_prices(records, prices)[["model_id", "provider"]].values.tolist() == [["a", "y"]]
    assert dataset_prices(records.assign(cost_usd=[0.1, 0.2]), prices).empty


def test_a_file_still_being_written_waits_until_it_settles(tmp_path):
    """Issue 17: a partial CSV (a copy in progress) is neither applied nor rejected; once complete and unmodified
    for the settle time, it is accepted."""
    import os

    inbox, accepted = tmp_path / "inbox", tmp_path / "accepted"
    wh = Warehouse(tmp_path / "empty.duckdb")
    path = _write(inbox, "models_new.csv", "model_id,display_name\nnew-mo")  # cut mid-row, as a copy would be
    first = process_inbox(inbox, accepted, wh, settle_s=60)
    assert first.accepted == [] and first.rejected == [] and path.exists()
    path.write_text("model_id,display_name\nnew-model,New Model\n")
    old = path.stat().st_mtime - 120
    os.utime(path, (old, old))  # unmodified for two minutes
    second = process_inbox(inbox, accepted, wh, settle_s=60)
    assert [t for t, _ in second.accepted] == ["models"] and second.rejected == []


def test_inbox_waits_while_a_refresh_is_in_flight(tmp_path, monkeypatch):
    """Issue 17, concurrency: a file delivered during a refresh (a `compass run` holding the refresh lock, or Dagster
    runs queued or started) stays in the inbox, so no raw asset of that refresh sees it; once idle, it is accepted."""
    from dagster._core.test_utils import create_run_for_test

    from pipelines.sensors import inbox_sensor
    from resources.warehouse import Warehouse, WarehouseResource

    inbox, accepted, home = tmp_path / "inbox", tmp_path / "accepted", tmp_path / "home"
    for folder in (inbox, accepted, home):
        folder.mkdir()
    for var, value in {"COMPASS_INBOX": inbox, "COMPASS_ACCEPTED": accepted, "COMPASS_DB": tmp_path / "w.duckdb"}.items():
        monkeypatch.setenv(var, str(value))
    (inbox / "models_new.csv").write_text("model_id,display_name\nnew-model,New\n")
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        def evaluate():
            return inbox_sensor(dg.build_sensor_context(instance=instance, resources={"warehouse": WarehouseResource()}))

        with Warehouse(tmp_path / "w.duckdb").refreshing():
            held = evaluate()
        assert not held.run_requests and "refresh in progress" in held.skip_reason.skip_message
        run = create_run_for_test(instance, job_name="refresh_case", status=dg.DagsterRunStatus.STARTED)
        queued = evaluate()
        assert not queued.run_requests and "1 run(s) in flight" in queued.skip_reason.skip_message
        assert (inbox / "models_new.csv").exists() and not any(accepted.rglob("*.csv"))
        instance.report_run_canceled(run)
        [request] = evaluate().run_requests
        assert request.asset_selection == [dg.AssetKey(["raw", "models"])]
        assert not (inbox / "models_new.csv").exists() and (accepted / "models" / "models_new.csv").exists()
