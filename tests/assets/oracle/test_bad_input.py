"""Bad input: a clear error naming the problem, and the warehouse left as it was."""

import numpy as np
import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from compass.oracle.prepare import complete_cases, prepare, prompt_keys, record_costs
from tests.assets.oracle.conftest import materialize_oracle, write_config
from tests.pipelines.helpers import assert_same_tables, snapshot

HEADER = "dataset,split,query_id,model_id,generation,correct,cost_usd\n"
SOLO = HEADER + "".join(f"solo,test,q{i},gpt-4o,0,1,0.01\n" for i in range(3))
# llama has 2 generations on q0 but only 1 on q1.
HOLES = HEADER + "".join(f"holes,test,q{i},gpt-4o,{g},1,0.01\n" for i in range(2) for g in range(2)) + (
    "holes,test,q0,llama-3.1-8b-instruct,0,0,0.001\nholes,test,q0,llama-3.1-8b-instruct,1,1,0.001\n"
    "holes,test,q1,llama-3.1-8b-instruct,0,0,0.001\n"
)


def oracle_tables(db) -> dict[str, pd.DataFrame]:
    return {t: f for t, f in snapshot(db).items() if t.startswith("oracle.")}


@pytest.mark.parametrize("dataset,text,message", [
    ("solo", SOLO, "solo: oracle routing needs at least 2 models, found only ['gpt-4o']"),
    ("holes", HOLES, "holes: model 'llama-3.1-8b-instruct' has 2 generations on some prompts but not on 1 prompt(s)"),
], ids=["one_model", "missing_generations"])
def test_bad_dataset_fails_and_leaves_oracle_tables(oracle_env, tmp_path, monkeypatch, dataset, text, message):
    instance, db = oracle_env
    before = oracle_tables(db)
    assert len(before["oracle.summary"]) == 3  # gsm8k (all) + livecodebench (all, priced)
    monkeypatch.setenv("COMPASS_CONFIG", str(write_config(tmp_path, [("query_records", text)])))
    with pytest.raises(ValueError) as info:
        materialize_oracle(instance, [dataset], raw_tables=["query_records"])
    assert message in str(info.value)
    assert_same_tables(before, oracle_tables(db))


@pytest.mark.parametrize("table,text,column", [
    ("query_records", HEADER + "gsm8k,test,x1,gpt-4o,0,2,0.01\n", "correct"),
    ("query_records", HEADER + "gsm8k,test,x1,gpt-4o,0,1,-0.5\n", "cost_usd"),
    ("model_costs", "model_id,provider,input_usd_per_mtok,output_usd_per_mtok\ngpt-4o,x,-1,2\n", "input_usd_per_mtok"),
], ids=["correct_not_binary", "negative_cost_usd", "negative_price"])
def test_rejected_at_ingest_warehouse_unchanged(oracle_env, tmp_path, monkeypatch, table, text, column):
    instance, db = oracle_env
    before = snapshot(db)
    monkeypatch.setenv("COMPASS_CONFIG", str(write_config(tmp_path, [(table, text)])))
    with pytest.raises(IngestError) as info:
        materialize_oracle(instance, ["gsm8k"], raw_tables=[table])
    assert f"extra_{table}_0.csv" in str(info.value) and "row 1" in str(info.value) and f"column {column}" in str(info.value)
    assert_same_tables(before, snapshot(db))


def _records(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["split", "query_id", "model_id", "generation", "correct", "cost_usd"])


def test_prepare_rules_without_dagster():
    # Query ids repeat across splits: they are distinct prompts.
    keyed = prompt_keys(_records([("train", "1", "a", 0, 1, 1.0), ("test", "1", "a", 0, 0, 1.0)]))
    assert list(keyed["query_id"]) == ["train/1", "test/1"]
    # Model c answers 1 of 20 prompts (< 95 %): dropped; prompt p19 lacks model b: dropped.
    rows = [("t", f"p{i}", m, 0, 1, 1.0) for i in range(20) for m in "ab" if not (m == "b" and i == 19)]
    kept, dropped, n_prompts = complete_cases(_records(rows + [("t", "p0", "c", 0, 1, 1.0)]), "ds")
    assert dropped == ["c"] and n_prompts == 1 and kept["query_id"].nunique() == 19
    with pytest.raises(ValueError, match=r"ds: negative cost_usd for models \['a'\]"):
        record_costs(_records([("t", "p", "a", 0, 1, -1.0), ("t", "p", "b", 0, 1, 1.0)]), pd.DataFrame(), "ds")
    # Mixed G that leaves a single model at the largest G cannot be routed.
    mixed = _records([("t", "p", "a", 0, 1, 1.0), ("t", "p", "a", 1, 0, 1.0), ("t", "p", "b", 0, 1, 1.0)])
    with pytest.raises(ValueError, match=r"ds: only \['a'\] have the largest G \(2\)"):
        prepare(mixed, pd.DataFrame(), "ds")
    # Partially null cost is ambiguous.
    with pytest.raises(ValueError, match="ds: cost_usd is null on some records"):
        record_costs(_records([("t", "p", "a", 0, 1, 1.0), ("t", "p", "b", 0, 1, np.nan)]), pd.DataFrame(), "ds")


def test_token_costs_use_the_cheapest_provider():
    records = _records([("t", "p", "a", 0, 1, np.nan), ("t", "p", "b", 0, 0, np.nan)]).assign(
        tokens_in=[1000.0, 2000.0], tokens_out=[100.0, 300.0])
    costs = pd.DataFrame({"model_id": ["a", "a", "b"], "provider": ["x", "y", "x"],
                          "input_usd_per_mtok": [4.0, 2.0, 1.0], "output_usd_per_mtok": [8.0, 10.0, 3.0]})
    costs["blended_usd_per_mtok"] = (3 * costs["input_usd_per_mtok"] + costs["output_usd_per_mtok"]) / 4
    out, per_model, basis, unpriced = record_costs(records, costs, "ds")
    assert basis == "tokens_x_price_usd" and per_model is None and unpriced == []
    # model a: provider x blends to (3*4 + 8)/4 = 5, y to (3*2 + 10)/4 = 4, so y's prices apply.
    np.testing.assert_allclose(out["cost_usd"], [(1000 * 2.0 + 100 * 10.0) / 1e6, (2000 * 1.0 + 300 * 3.0) / 1e6])
    prep = prepare(records.drop(columns="cost_usd").assign(cost_usd=np.nan), costs, "ds")
    assert prep.cost_basis == "tokens_x_price_usd" and [s.name for s in prep.sets] == ["all"]


def _uniform(dataset: str, correct: int) -> str:
    return HEADER + "".join(f"{dataset},test,q{i},{m},0,{correct},{c}\n" for i in range(30)
                            for m, c in (("gpt-4o", 0.01), ("llama-3.1-8b-instruct", 0.001)))


def test_all_right_and_all_wrong_datasets_publish_a_flagged_finite_interval(oracle_env, tmp_path, monkeypatch):
    """Issue 47: a dataset whose models all score 1.0 (or all 0.0) materializes without a crash, and its summary
    carries a finite 95 % interval of non-zero width (the normal bound published [1, 1] and [0, 0]) with the flag
    saying that nothing tells the models apart."""
    from resources.warehouse import Warehouse

    instance, db = oracle_env
    monkeypatch.setenv("COMPASS_CONFIG", str(write_config(tmp_path, [("query_records", _uniform("perfect", 1)),
                                                                      ("query_records", _uniform("hopeless", 0))])))
    materialize_oracle(instance, ["perfect", "hopeless"], raw_tables=["query_records"])
    for dataset, value, flag in (("perfect", 1.0, "all_correct"), ("hopeless", 0.0, "all_wrong")):
        row = Warehouse(db).read("oracle.summary", {"dataset": dataset}).iloc[0]
        lo, hi = float(row["headline_ci_lo"]), float(row["headline_ci_hi"])
        assert row["headline_ci_flag"] == flag and row["headline_flag"] == "range"
        assert np.isfinite([lo, hi]).all() and lo <= value <= hi and hi - lo > 0.05
