"""A study page's verdict is computed from its table: change the numbers and the sentence changes."""

import pandas as pd

from pipelines.report.pages.router import charted_routers, router_verdict


def comparisons(rows: dict[tuple[str, str], tuple[float, float, float]], dataset: str = "gsm8k") -> pd.DataFrame:
    """router.comparisons rows: (router, baseline) -> (mean difference, lo, hi), 95 %, 10 rounds, n_gold 400."""
    return pd.DataFrame([{"dataset": dataset, "n_gold": 400, "router": r, "baseline": b, "mean_difference": m,
                          "se": (hi - lo) / 4, "lo": lo, "hi": hi, "level": 0.95, "mc_rounds": 10,
                          "distinguishable": lo > 0 or hi < 0} for (r, b), (m, lo, hi) in rows.items()])


SURE = {("oracle", "random"): (0.2, 0.18, 0.22), ("meta_dr", "random"): (0.05, 0.04, 0.06),
        ("gold_only", "random"): (0.01, -0.01, 0.03), ("meta_dr", "gold_only"): (0.04, 0.02, 0.06)}


def test_a_router_surely_above_random_is_named_with_its_interval_and_its_edge_over_gold_only():
    text = router_verdict(comparisons(SURE))
    assert "meta_dr gains 0.050 (0.040 to 0.060)" in text and "95 % paired intervals, 10 rounds" in text
    assert "against gold-only 0.040 (0.020 to 0.060), distinguishable" in text
    n_learned = (comparisons(SURE).query("baseline == 'random'")["router"] != "oracle").sum()
    assert f"best of {n_learned} learned routers" in text  # picked after seeing the data: the page says so


def test_the_same_gains_with_wide_intervals_say_no_router_beats_random():
    wide = {k: (m, m - 0.1, m + 0.1) for k, (m, _, _) in SURE.items()}
    text = router_verdict(comparisons(wide))
    assert "no learned router's gain over random routing is distinguishable from zero" in text
    assert "best: meta_dr" in text


def test_the_oracle_is_never_the_verdict_and_each_dataset_gets_a_sentence():
    frame = pd.concat([comparisons(SURE), comparisons({("oracle", "random"): (0.5, 0.4, 0.6),
                                                      ("pooled", "random"): (-0.02, -0.03, -0.01)}, "arena")])
    text = router_verdict(frame)
    assert text.count("On ") == 2 and "On arena, no learned router" in text and "best: pooled" in text
    assert "oracle" not in text


def test_the_chart_shows_at_most_four_routers_the_oracle_and_gold_only_first():
    names = ["oracle", "gold_only", "pooled", "preference_only", "mean_shift", "meta_r", "meta_dr"]
    table = comparisons({(r, "random"): (0.01 * i, 0, 0.02 * i) for i, r in enumerate(names)})
    part = pd.DataFrame({"router": names})
    assert charted_routers(part, table) == ["oracle", "gold_only", "meta_dr", "meta_r"]
