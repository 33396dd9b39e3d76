"""Study selection (light / heavy) and the SYNTHETIC Fail Fast asset."""

import dagster as dg
import pandas as pd
import pytest

from assets.cascade import CascadeStudyConfig
from compass.cascades.protocols import AUTHORS
from compass.cascades.study import CHAINS, HEAVY, LIGHT, chains_for, study_cascades
from pipelines.definitions import defs
from pipelines.refresh import run_selection
from resources.warehouse import Warehouse


def test_light_and_heavy_cascade_sets(monkeypatch):
    chains = {name: list(chain) for name, chain in CHAINS.items()}
    light = study_cascades(chains, LIGHT)
    assert [len(c) for _, c in light] == [2, 3, 4, 5, 4]  # Llama prefixes k = 2..5 + the full mixed chain
    heavy = [c for name, c in study_cascades(chains, HEAVY) if name == "llama"]
    assert len(heavy) == 26 and len(set(heavy)) == 26  # Table 2.7: every size-ordered subset, k >= 2
    monkeypatch.setenv("COMPASS_HEAVY", "1")
    assert CascadeStudyConfig().settings() is HEAVY
    assert CascadeStudyConfig(study="light").settings() is LIGHT  # run config beats the environment
    monkeypatch.delenv("COMPASS_HEAVY")
    assert CascadeStudyConfig().settings() is LIGHT
    with pytest.raises(ValueError, match="study must be one of"):
        CascadeStudyConfig(study="huge").settings()


def test_unknown_models_form_a_cost_ordered_chain():
    rec = pd.DataFrame({"model_id": ["b", "a", "c", "llama-3.2-1b-instruct"], "split": "train",
                        "cost_usd": [2.0, 1.0, 3.0, 0.1]})
    assert chains_for(rec) == {"by_cost": ["llama-3.2-1b-instruct", "a", "b", "c"]}  # a lone chain model joins them


def test_synthetic_failfast_asset(cascade_env):
    instance, db = cascade_env
    run_selection(defs, instance, [dg.AssetKey(["cascade", "failfast_synthetic"])], None, False)
    table = Warehouse(db).read("cascade.failfast_synthetic")
    assert set(table["data"]) == {"synthetic"} and len(table) == 9  # 3 reasoning models x 3 utilisations
    qwen = table[table["reasoning_model"] == "qwen3-235b-a22b"].set_index("utilization")
    # generator docstring (n = 20,000): base AUARC 0.983 (thesis Table 4.2: 0.99); 4,000 draws here
    assert qwen["base_auarc"].iloc[0] == pytest.approx(0.983, abs=0.01)
    assert (qwen["auarc"] < qwen["base_auarc"]).all() and (qwen["latency_pct_change"] < 0).all()
    event = instance.get_latest_materialization_event(dg.AssetKey(["cascade", "failfast_synthetic"]))
    assert event.asset_materialization.metadata["data"].value == "synthetic"


def test_protocol_asset_runs_the_authors_protocol_by_default_and_every_variant_in_heavy(cascade_env, monkeypatch):
    """Issue 28 item 3: the default (light) run materializes Tables 2.7 and 2.8 under the authors' protocol.
    Mutation: LIGHT.protocols back to () (the asset skips, no table: red)."""
    instance, db = cascade_env
    key = dg.AssetKey(["cascade", "protocols"])
    wh = Warehouse(db)
    light = wh.read("cascade.protocol_summary", {"dataset": "mmlu"})
    assert set(light["protocol"]) == {AUTHORS.label} and set(light["setting"]) == {"full", "low"}
    n_train = wh.read("cascade.protocol_auc", {"dataset": "mmlu"}).groupby("setting")["n_train"].max()
    assert n_train["low"] <= 30 < n_train["full"]  # Table 2.8's subsample, Table 2.7's full training set
    monkeypatch.setenv("COMPASS_HEAVY", "1")
    run_selection(defs, instance, [key], "mmlu", False)
    auc, summary = wh.read("cascade.protocol_auc", {"dataset": "mmlu"}), wh.read("cascade.protocol_summary", {"dataset": "mmlu"})
    full = auc[auc["setting"] == "full"]
    assert full["protocol"].nunique() == 8 and len(full) == 8 * 4  # 3 Llama models: 4 size-ordered subsets
    assert set(auc["method"]) == {"grid"} and set(auc["chain"]) == {"llama"}
    k3 = summary[(summary["k_group"] == "k>=3") & (summary["setting"] == "full")]
    assert len(k3) == 8 and (k3["n_cascades"] == 1).all()
    labels = summary[["grid", "costs", "optimizer"]].drop_duplicates()
    assert len(labels) == 8 and set(labels["grid"]) == {"thesis_text", "authors_code"}
    curves = wh.read("cascade.protocol_curves", {"dataset": "mmlu"})
    assert set(curves["method"]) == {"rt", "grid"} and curves["error"].between(0, 1).all()
