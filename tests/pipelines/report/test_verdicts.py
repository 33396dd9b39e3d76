"""A study page's verdict is computed from its table: change the numbers and the sentence changes."""

import numpy as np
import pandas as pd

from pipelines.report.pages.router import best_points, charted_routers, router_verdict

GRID = np.round(np.linspace(0, 1, 11), 2)


def evaluation(gains: dict[str, float], se: float, dataset: str = "gsm8k") -> pd.DataFrame:
    """A router.evaluation table whose routers gain `gain * 4 p (1 - p)` at share p (0 at p = 0 and 1)."""
    return pd.concat([pd.DataFrame({"dataset": dataset, "n_gold": 400, "router": r, "pmur": GRID,
                                    "expected_gain": g * 4 * GRID * (1 - GRID), "se": se, "mc_rounds": 10})
                      for r, g in gains.items()], ignore_index=True)


def test_a_router_surely_above_random_is_named_with_its_share_and_interval():
    text = router_verdict(evaluation({"oracle": 0.2, "gold_only": 0.01, "meta_dr": 0.05}, se=0.005))
    assert "deploy meta_dr" in text and "50 %" in text and "0.050 ± 0.008" in text


def test_the_same_gains_with_wide_intervals_say_no_router_beats_random():
    text = router_verdict(evaluation({"oracle": 0.2, "gold_only": 0.01, "meta_dr": 0.05}, se=0.05))
    assert "no learned router beats random routing" in text and "best: meta_dr" in text


def test_the_oracle_is_never_the_verdict_and_each_dataset_gets_a_sentence():
    frame = pd.concat([evaluation({"oracle": 0.5, "gold_only": 0.03}, se=0.001),
                       evaluation({"oracle": 0.5, "pooled": -0.02}, se=0.001, dataset="arena")])
    text = router_verdict(frame)
    assert "oracle" not in text.split("deploy")[1] and text.count("On ") == 2
    assert "On arena, no learned router" in text and "On gsm8k, deploy gold_only" in text


def test_the_chart_shows_at_most_four_routers_the_oracle_and_gold_only_first():
    frame = evaluation({r: 0.01 * (i + 1) for i, r in enumerate(
        ["oracle", "gold_only", "pooled", "preference_only", "mean_shift", "meta_r", "meta_dr"])}, se=0.001)
    shown = charted_routers(frame, best_points(frame))
    assert shown == ["oracle", "gold_only", "meta_dr", "meta_r"]
