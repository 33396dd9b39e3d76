"""Ch. 3's two-model cascades on the real mmlu fixture rows (issue 12, item 9): the tables the
cascade/two_model_cascades asset publishes, checked at their closed-form ends."""

import numpy as np
import pytest

from compass.cascades import study as cs
from tests.assets.cascade.conftest import LLAMA, records


def test_two_model_cascade_tables_on_consecutive_llama_pairs():
    rec = cs.prepare_records(records(), "mmlu")
    tables = cs.two_model_cascade_tables(rec, "mmlu")
    cer, rewards = tables["cascade.cer_curve"], tables["cascade.tuned_rewards"]
    pairs = list(zip(LLAMA[:-1], LLAMA[1:]))
    assert list(cer[["small", "big"]].drop_duplicates().itertuples(index=False, name=None)) == pairs
    test = rec[rec["split"] == "test"].pivot(index="query_id", columns="model_id", values="correct")
    for small, big in pairs:
        g = cer[(cer["small"] == small) & (cer["big"] == big)]
        never, always = g[g["threshold"] == -np.inf].iloc[0], g[g["threshold"] == np.inf].iloc[0]
        # never defer: the small model's own test error; always defer: the big model's
        assert never["defer_rate"] == 0 and never["error_rate"] == pytest.approx(1 - test[small].mean())
        assert always["defer_rate"] == 1 and always["error_rate"] == pytest.approx(1 - test[big].mean())
        assert g.sort_values("threshold")["defer_rate"].is_monotonic_increasing
        r = rewards[(rewards["small"] == small) & (rewards["lambda_latency"] == 0)].sort_values("lambda_error")
        # a near-free error (1e-4 $) keeps almost every query on the cheap model; an expensive one defers most
        assert r["defer_rate"].iloc[0] < 0.05 and r["defer_rate"].iloc[-1] > 0.2
        assert r["defer_rate"].is_monotonic_increasing


def test_tuned_rewards_cover_the_latency_grid_and_compare_with_the_big_model_alone():
    """Fig. 3.5: every (price of error, price of latency) of the grid, and M_big alone's test reward recomputed
    here from the raw rows; at a near-free error the cascade with a cheaper first model beats the big model alone."""
    rec = cs.prepare_records(records(), "mmlu")
    rewards = cs.two_model_cascade_tables(rec, "mmlu")["cascade.tuned_rewards"]
    assert set(rewards["lambda_latency"]) == set(cs.LAMBDA_LATENCIES)
    assert len(rewards) == len(cs.LAMBDA_ERRORS) * len(cs.LAMBDA_LATENCIES) * (len(LLAMA) - 1)
    test = rec[rec["split"] == "test"]
    for row in rewards.sample(10, random_state=0).itertuples():
        big = test[test["model_id"] == row.big]
        want = -(big["cost_usd"].mean() + row.lambda_latency * big["latency_ms"].mean() / 1000
                 + row.lambda_error * (1 - big["correct"].mean()))
        assert row.big_alone_reward == pytest.approx(want, rel=1e-9)
        assert row.cascade_beats_big == (row.reward > row.big_alone_reward)
    cheap = rewards[rewards["lambda_error"] == rewards["lambda_error"].min()]
    # 3B -> 8B: the small model costs half as much, so a near-free error favours the cascade; 1B and 3B cost the same
    assert cheap.loc[cheap["big"] == LLAMA[2], "cascade_beats_big"].all()
