import numpy as np
import pandas as pd
import pytest

from compass.oracle.validation import REGIMES, STUDY_COLUMNS, entropy_uplift_study, recommend, validation_study


def test_small_study_covers_g1_and_both_regimes():
    study = validation_study(generations=(1, 5), n_models=(5,), n_prompts=150, n_reps=2,
                             estimators=("naive", "split_sample", "bias_corrected"))
    assert list(study.columns) == STUDY_COLUMNS
    s = study.set_index(["regime", "generations", "estimator"])
    for regime in REGIMES:
        # G = 1: the EB-based estimator and hence the headline point are not identified
        assert s.loc[(regime, 1, "bias_corrected"), "identified_share"] == 0.0
        assert np.isnan(s.loc[(regime, 1, "headline"), "estimate"])
        assert s.loc[(regime, 1, "naive"), "bias"] > 0.05  # eq. 5 selects on noise
        # G = 5: bias correction removes most of the naive bias; the headline is identified
        naive_bias = s.loc[(regime, 5, "naive"), "bias"]
        assert naive_bias > 0.03
        assert abs(s.loc[(regime, 5, "bias_corrected"), "bias"]) < naive_bias / 3
        assert s.loc[(regime, 5, "split_sample"), "bias"] < 0  # a lower bound
        assert s.loc[(regime, 5, "headline"), "identified_share"] == 1.0
    # the high-accuracy regime is what real benchmarks look like
    assert study.loc[study["regime"] == "high_accuracy", "true_oracle"].min() > 0.7
    assert study.loc[study["regime"] == "paper", "true_oracle"].max() < 0.5


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
