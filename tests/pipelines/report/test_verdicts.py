"""A study page's verdict is computed from its table: change the numbers and the sentence changes."""

import re

import numpy as np
import pandas as pd
import pytest

from compass.router.evaluation import paired_comparisons
from pipelines.report.pages.router import charted_routers, gain_bands, router_verdict, smoke_note


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


def resplit_rounds(k: int, n_test: int = 30, n_gold_total: int = 100, seed: int = 0) -> pd.DataFrame:
    """router.evaluation_rounds of k re-splits of one data set (resampling correction 30/70 = 0.43, as on arena)."""
    gains = np.random.default_rng(seed).normal(0.0, 0.05, (k, 2))
    return pd.DataFrame([{"router": r, "n_gold": 100, "round": i, "mean_gain": gains[i, j], "n_test": n_test,
                          "n_gold_total": n_gold_total}
                         for i in range(k) for j, r in enumerate(("gold_only", "meta_dr"))])


def test_the_light_runs_two_rounds_are_called_a_smoke_run_by_the_width_of_its_actual_intervals():
    """Mutations applied, each red: interval_inflation with z in place of t_{k-1} (the stated width no longer matches
    the table's interval); the note shown whatever the width (the 10-round case gets one); never shown (threshold
    100x)."""
    table = paired_comparisons(resplit_rounds(2))
    note = smoke_note(table)
    assert "Smoke run" in note and "docs/results/router.md" in note and "COMPASS_HEAVY=1" in note
    stated = float(re.search(r"each interval is ([0-9.]+)× as wide", note).group(1))
    row = table[(table["router"] == "meta_dr") & (table["baseline"] == "gold_only")].iloc[0]
    diffs = resplit_rounds(2).pivot(index="round", columns="router", values="mean_gain")
    s = (diffs["meta_dr"] - diffs["gold_only"]).std(ddof=1)
    unlimited = 1.96 * s * np.sqrt(row["resample_correction"])  # the half-width unlimited rounds leave
    assert stated == round((row["hi"] - row["lo"]) / 2 / unlimited, 1)
    assert smoke_note(paired_comparisons(resplit_rounds(10))) == ""  # the results page's 10 rounds: informative


def test_the_chart_bands_of_re_splits_carry_the_resampling_correction():
    """10 re-splits with c = 30/70: the per-share band is √(1 + 10·0.43) = 2.30 times the plain ± 1.645·SE; on fresh
    data (c = 0) it is the plain one. Mutation: bands without the factor (the page before issue 32's review): red."""
    curves = pd.DataFrame({"expected_gain": [0.1, 0.2], "se": [0.01, 0.02], "mc_rounds": 10})
    plain = gain_bands(curves, 0.0)
    assert (plain["hi"] - plain["lo"]).tolist() == pytest.approx([2 * 1.645 * 0.01, 2 * 1.645 * 0.02])
    wide = gain_bands(curves, 30 / 70)
    assert ((wide["hi"] - wide["lo"]) / (plain["hi"] - plain["lo"])).tolist() == pytest.approx([2.30] * 2, abs=0.005)
