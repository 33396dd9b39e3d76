"""The paper's ablations are read as the ablated router minus the same router of the main configuration, paired
over the rounds both ran (router.synthetic_ablations)."""

import numpy as np
import pandas as pd
import pytest

from compass.router.study import ablation_differences


def _rounds(gains: dict[str, np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame([{"preset": "B", "router": router, "n_gold": 100, "round": i, "mean_gain": g}
                         for router, values in gains.items() for i, g in enumerate(values)])


def test_a_shift_shared_by_every_round_is_found_exactly_and_unpaired_noise_is_not_in_it():
    """Round-to-round noise (the generated data) is large and shared by both configurations; the ablation moves
    meta_dr by -0.02 in every round and gold-only not at all. Paired, the difference is exact with a zero-width
    interval; compared unpaired (or with the wrong router) it would be lost in the noise or wrong."""
    noise = np.random.default_rng(0).normal(0, 0.05, 12)
    main = _rounds({"meta_dr": 0.10 + noise, "gold_only": 0.08 + noise[::-1]})
    ablated = _rounds({"meta_dr": 0.08 + noise, "gold_only": 0.08 + noise[::-1]})
    out = ablation_differences(main, ablated).set_index("router")
    assert out.loc["meta_dr", "mean_difference"] == pytest.approx(-0.02)
    assert out.loc["meta_dr", "hi"] - out.loc["meta_dr", "lo"] == pytest.approx(0, abs=1e-12)
    assert bool(out.loc["meta_dr", "distinguishable"])
    assert out.loc["gold_only", "mean_difference"] == pytest.approx(0) and out.loc["gold_only", "mc_rounds"] == 12


def test_only_rounds_both_configurations_ran_are_paired():
    main = _rounds({"meta_dr": np.arange(6) / 10})
    ablated = _rounds({"meta_dr": np.arange(4) / 10 + 0.01})
    (row,) = ablation_differences(main, ablated).itertuples(index=False)
    assert row.mc_rounds == 4 and row.mean_difference == pytest.approx(0.01)
