"""Bad input: a clear error naming the problem, and the cascade tables left as they were."""

import dagster as dg
import pytest

from resources.warehouse import Warehouse
from tests.assets.cascade.conftest import materialize_cascade, write_config
from tests.pipelines.helpers import assert_same_tables, snapshot

HEADER = "dataset,split,query_id,model_id,generation,correct,confidence,cost_usd,latency_ms,tokens_out\n"
A, B = "llama-3.2-1b-instruct", "llama-3.1-8b-instruct"


def rows(dataset: str, model: str, split: str, n: int, conf=lambda i: -0.1 * (i + 1)) -> str:
    return "".join(f"{dataset},{split},q{i},{model},0,{i % 2},{conf(i)},0.001,100,5\n" for i in range(n))


SOLO = HEADER + rows("solo", A, "train", 12)
NO_TRAIN = HEADER + rows("notrain", A, "train", 12) + rows("notrain", B, "test", 12)
CONSTANT = HEADER + rows("constant", A, "train", 12) + rows("constant", B, "train", 12, conf=lambda i: -0.5)
NAN = HEADER + rows("nanconf", A, "train", 12) + rows("nanconf", B, "train", 12, conf=lambda i: "" if i == 3 else -0.2 * (i + 1))
NO_SIGNAL = HEADER + rows("nosignal", A, "test", 12, conf=lambda i: "") + rows("nosignal", B, "test", 12, conf=lambda i: "")


def cascade_tables(db) -> dict:
    return {t: f for t, f in snapshot(db).items() if t.startswith("cascade.") or t.startswith("history.cascade_")}


@pytest.mark.parametrize("dataset,text,message", [
    ("solo", SOLO, "dataset 'solo': a cascade dataset needs at least 2 models, found 1: ['llama-3.2-1b-instruct']"),
    ("notrain", NO_TRAIN, "dataset 'notrain': model 'llama-3.1-8b-instruct' has no train rows"),
    ("constant", CONSTANT, "dataset 'constant': model 'llama-3.1-8b-instruct': all train confidences are identical"),
    ("nanconf", NAN, "dataset 'nanconf': NaN confidence values for model(s) ['llama-3.1-8b-instruct']"),
], ids=["one_model", "model_without_train_rows", "identical_confidences", "nan_confidences"])
def test_bad_dataset_fails_and_leaves_cascade_tables(cascade_env, tmp_path, monkeypatch, dataset, text, message):
    instance, db = cascade_env
    before = cascade_tables(db)
    assert len(before["cascade.calibration"]) == 3
    monkeypatch.setenv("COMPASS_CONFIG", str(write_config(tmp_path, [("query_records", text)])))
    with pytest.raises(ValueError) as info:
        materialize_cascade(instance, [dataset], raw_tables=["query_records"])
    assert message in str(info.value)
    assert_same_tables(before, cascade_tables(db))


def test_dataset_without_confidences_is_skipped(cascade_env, tmp_path, monkeypatch):
    """livecodebench / mmlu_pro style: no confidence at all -> every cascade asset succeeds, publishes nothing."""
    instance, db = cascade_env
    before = cascade_tables(db)
    monkeypatch.setenv("COMPASS_CONFIG", str(write_config(tmp_path, [("query_records", NO_SIGNAL)])))
    materialize_cascade(instance, ["nosignal"], raw_tables=["query_records"])
    event = instance.get_latest_materialization_event(dg.AssetKey(["cascade", "calibration"]))
    assert event.asset_materialization.partition == "nosignal"
    assert event.asset_materialization.metadata["skipped"].value == "no confidence signal"
    assert Warehouse(db).read("cascade.calibration", {"dataset": "nosignal"}).empty
    assert_same_tables(before, cascade_tables(db))
