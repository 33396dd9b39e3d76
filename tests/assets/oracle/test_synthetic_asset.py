"""oracle/synthetic_validation on a tiny grid: closed forms for bias decay, the single-topic limit of uplift."""

import dagster as dg
import numpy as np
import pytest

from assets.oracle import oracle_synthetic_validation
from resources.warehouse import Warehouse, WarehouseResource


def test_synthetic_validation_tables(oracle_env, monkeypatch):
    instance, db = oracle_env
    monkeypatch.delenv("COMPASS_SMOKE", raising=False)  # the light grid, at 30 prompts
    config = {"ops": {"oracle__synthetic_validation": {"config": {"n_prompts": 30, "n_reps": 1, "entropy_prompts": 200}}}}
    result = dg.materialize([oracle_synthetic_validation], instance=instance, run_config=config,
                            resources={"warehouse": WarehouseResource()})
    assert result.success
    wh = Warehouse(db)
    study = wh.read("oracle.synthetic_validation")
    assert len(study) == 2 * 4 * 4 * 10  # regimes x G x L grid x (9 estimators + headline)
    assert study.groupby("scenario")["true_oracle"].nunique().max() == 1
    eb = study["estimator"].isin(["shrinkage_plugin", "bias_corrected", "bias_corrected_posterior"])
    assert (study.loc[eb & (study["generations"] == 1), "identified_share"] == 0).all()  # refused, not a start value
    assert (study.loc[eb & (study["generations"] >= 2), "identified_share"] == 1).all()
    g1_naive = study[(study["estimator"] == "naive") & (study["generations"] == 1) & (study["n_models"] >= 5)]
    assert (g1_naive["bias"] > 0.05).all()  # eq. 5 at G = 1 selects on pure noise
    meta = result.asset_materializations_for_node("oracle__synthetic_validation")[0].metadata
    chosen = meta["selected_estimator"].value
    assert set(study.loc[study["recommended"], "estimator"]) == ({chosen} if chosen != "none" else set())

    decay = wh.read("oracle.bias_decay").set_index(["n_models", "p"])
    # Eq. 10 at G = 1, L = 2: E max of two Bernoulli(p) minus p = p (1 - p).
    for p in (0.1, 0.3, 0.5):
        assert decay.loc[(2, p), "bias_g1"] == pytest.approx(p * (1 - p), abs=1e-12)
    assert (decay["lam"] - 0.5).abs().max() < 0.05  # paper §4.2.1: O(G^-0.5) for large G

    uplift = wh.read("oracle.entropy_uplift").sort_values("step")
    assert uplift["entropy"].iloc[0] == pytest.approx(np.log(30))  # uniform over 30 topics, eq. 27
    assert uplift["entropy"].iloc[-1] == 0.0 and abs(uplift["uplift"].iloc[-1]) < 1e-9  # one topic: no uplift
    assert uplift["uplift"].iloc[0] > uplift["uplift"].iloc[-1] + 0.02
