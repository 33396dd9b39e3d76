import numpy as np
import pandas as pd
import pytest

from compass.oracle.validation import entropy_uplift_study, recommend, validation_study


def test_small_study_bias_corrected_beats_naive():
    study = validation_study(generations=(5,), n_models=(5,), n_prompts=150, n_reps=1,
                             estimators=("naive", "bias_corrected"))
    assert list(study.columns) == ["scenario", "n_prompts", "n_models", "generations", "estimator",
                                   "true_oracle", "estimate", "bias", "rmse"]
    b = study.set_index("estimator")["bias"]
    assert b["naive"] > 0.05
    assert abs(b["bias_corrected"]) < b["naive"] / 3


def test_recommend_rule():
    rows = []
    for g in (2, 5):
        rows += [("s", g, "naive", 0.3, 0.3), ("s", g, "good", 0.05, 0.06), ("s", g, "meh", 0.2, 0.2)]
    study = pd.DataFrame(rows, columns=["scenario", "generations", "estimator", "bias", "rmse"])
    study["scenario"] = study["scenario"] + study["generations"].astype(str)
    assert recommend(study) == "good"
    bad = study[study.estimator != "good"]
    with pytest.raises(ValueError, match="no estimator meets"):
        recommend(bad)


def test_entropy_uplift_grows_with_entropy():
    df = entropy_uplift_study(n_steps=3, n_prompts=400, n_reps=2)
    assert df["uplift"].iloc[-1] == pytest.approx(0.0, abs=1e-12)  # single topic: best model wins everywhere
    assert df["entropy"].iloc[0] == pytest.approx(np.log(30))
    assert df["uplift"].iloc[0] > df["uplift"].iloc[1] > df["uplift"].iloc[2]
