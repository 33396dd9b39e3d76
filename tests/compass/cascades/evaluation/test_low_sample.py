"""Table 2.8 (thesis Sec. 2.4, low-sample limit) on the real mmlu fixture rows: the calibrators are refitted on the
n <= 30 subsample too (issue 12, item 5: they used to see all ~300 training rows), and each benchmark draws one
subsample per seed that all its cascades share."""

import dataclasses

import numpy as np
import pandas as pd

from compass.cascades import study as cs
from tests.assets.cascade.conftest import records

SETTINGS = dataclasses.replace(cs.LIGHT, low_sample_seeds=(0, 1), resolution=1 / 10, bo_max_iter=2)


def test_low_sample_refits_calibrators_on_the_subsample_only(monkeypatch):
    rec = cs.prepare_records(records(), "mmlu")
    fitted_on = []
    calibrated = cs.calibrated_records

    def spy(frame: pd.DataFrame, dataset: str):
        fitted_on.append(set(frame.loc[frame["split"] == "train", "query_id"]))
        return calibrated(frame, dataset)

    monkeypatch.setattr(cs, "calibrated_records", spy)
    chains = cs.chains_for(rec)
    cascades = cs.study_cascades(chains, SETTINGS)
    cal, _ = cs.calibrated_records(rec, "mmlu")
    curves, extra = cs.cascade_curves(rec, cal, "mmlu", chains, cascades, SETTINGS)
    n_full = rec.loc[rec["split"] == "train", "query_id"].nunique()
    assert len(fitted_on) == 3 and len(fitted_on[0]) == n_full > 100 and all(len(ids) <= 30 for ids in fitted_on[1:])  # full + one per seed
    assert fitted_on[1] != fitted_on[2]  # two seeds, two subsamples
    low = curves[curves["sample"] != "full"]
    # one subsample per benchmark: every cascade of a seed trains on the same rows
    assert low.groupby("sample")["n_train"].nunique().max() == 1
    assert set(low.groupby("sample")["n_train"].first()) == {len(fitted_on[1]), len(fitted_on[2])}
    assert extra["low_sample_skipped"] == {}


def test_low_sample_ids_are_shared_and_balanced():
    rec = cs.prepare_records(records(), "mmlu")
    cal, _ = cs.calibrated_records(rec, "mmlu")
    llama = cs.chains_for(rec)["llama"]
    ids = cs.low_sample_ids(cal, llama, seed=0)
    assert 20 <= len(ids) <= 30 and ids.is_unique  # 3 rounds x 5 models x (right, wrong), minus collisions
    y = cs.pivot(cal, "correct", split="train", models=llama).loc[ids]
    assert ((y == 1).any() & (y == 0).any()).all()  # every model sees a right and a wrong answer


def test_low_sample_curves_ignore_the_confidences_of_training_rows_outside_the_subsample():
    """Invariance: the n <= 30 curves learn only from their subsample, so scrambling the confidences of every
    other training row leaves them unchanged (they change if the calibrators, marginals or copulas see the full
    training split, or if the subsample's calibrator output is not the one used). The full-sample curves move."""
    rec = cs.prepare_records(records(), "mmlu")
    settings = dataclasses.replace(SETTINGS, low_sample_seeds=(0,))
    chains = cs.chains_for(rec)
    cascades = [c for c in cs.study_cascades(chains, settings) if len(c[1]) <= 3]
    cal, _ = cs.calibrated_records(rec, "mmlu")
    ids = set(cs.low_sample_ids(cal, max(chains.values(), key=len), seed=0))
    outside = (rec["split"] == "train") & ~rec["query_id"].isin(ids)
    scrambled = rec.copy()
    rng = np.random.default_rng(0)
    scrambled.loc[outside, "confidence"] = rng.permutation(scrambled.loc[outside, "confidence"].to_numpy())

    def curves_of(frame: pd.DataFrame) -> pd.DataFrame:
        c, _ = cs.calibrated_records(frame, "mmlu")
        return cs.cascade_curves(frame, c, "mmlu", chains, cascades, settings)[0]

    before, after = curves_of(rec), curves_of(scrambled)
    low = before["sample"] != "full"
    assert low.sum() > 0
    pd.testing.assert_frame_equal(before[low].reset_index(drop=True),
                                  after[after["sample"] != "full"].reset_index(drop=True))
    full_before, full_after = (f.loc[f["sample"] == "full", "thresholds"].reset_index(drop=True) for f in (before, after))
    assert not full_before.equals(full_after)  # the scrambling reached the full-sample fit
