"""The verdict tables of `scripts/router_headline.py` (issue 46 second review, items 4-5) on hand-made rounds with
known answers: the verdict rule on each side and on intervals straddling 0, claims read against main's ordering
only where main reproduces Fig. 1's premise, the member counts of `choice_table`, arms of different sizes
refused by `ablations-table`, and `served`'s comparison with the better single-source router and its refusal of mixed
configurations."""

import json

import numpy as np
import pandas as pd
import pytest

from scripts.router_headline import (
    LITERAL_CONTRADICTION, choice_table, claims_table, main, mismatched_sizes, mixed_configurations, served_table,
    verdict,
)

BASE = np.array([0.10, 0.12, 0.11, 0.13])
JITTER = np.array([0.01, -0.01, 0.02, -0.02])  # mean 0: an interval around a zero difference straddles 0


@pytest.mark.parametrize("lo, hi, side, expected", [
    (0.01, 0.03, "above", "reproduces"), (-0.01, 0.03, "above", "tie"), (-0.03, -0.01, "above", "contradicts"),
    (-0.03, -0.01, "below", "reproduces"), (-0.01, 0.03, "below", "tie"), (0.01, 0.03, "below", "contradicts"),
    (-0.03, -0.01, "not above", "reproduces"), (-0.01, 0.03, "not above", "tie (not significant)"),
    (0.01, 0.03, "not above", "contradicts"),
])
def test_verdict_on_each_side_and_on_straddling_intervals(lo, hi, side, expected):
    assert verdict(lo, hi, side) == expected


def _rounds(configuration, gains):
    return pd.DataFrame([{"configuration": configuration, "preset": "B", "n_gold": 100, "router": router,
                          "round": i, "mean_gain": g}
                         for router, values in gains.items() for i, g in enumerate(values)])


def test_claims_table_reads_iii_against_gold_only_only_where_main_puts_the_meta_router_above():
    """Main: meta (R) clearly above gold-only, meta (DR) tied with it. In (iii) meta (R) ties gold-only (the paper's
    "not significantly above": a tie, since the premise holds) and meta (DR) is far above it, which contradicts the
    claim literally although main never put it above (red without the premise check: "contradicts"; red with
    "not testable", the label before issue 46's fourth review); against main, (iii)'s meta (R)
    lies below (reproduces) and meta (DR) above (contradicts)."""
    rounds = pd.concat([
        _rounds("main", {"gold_only": BASE, "meta_r": BASE + 0.1 + 0.1 * JITTER, "meta_dr": BASE + JITTER}),
        _rounds("iii_none", {"gold_only": BASE, "meta_r": BASE + JITTER, "meta_dr": BASE + 0.1 + 0.1 * JITTER}),
    ], ignore_index=True)
    table = claims_table(rounds).set_index(["against", "router"])["verdict"]
    assert table.to_dict() == {("gold-only", "meta (DR)"): LITERAL_CONTRADICTION,
                               ("gold-only", "meta (R)"): "tie (not significant)",
                               ("main run", "meta (DR)"): "contradicts", ("main run", "meta (R)"): "reproduces"}


def test_choice_table_counts_each_rules_members():
    """Three rounds: the routing-gain rule (one SE) chose gold-only twice and preference-only once; the least squared
    error would have been mean-shift twice and gold-only once, the largest score meta (R) thrice (red if two rules'
    columns are swapped)."""
    chosen = ["gold_only", "gold_only", "preference_only"]
    least = ["mean_shift", "gold_only", "mean_shift"]
    rows = [{"preset": "A", "n_gold": 100, "router": "meta_cv", "round": i, "chosen": c,
             "cv_errors": json.dumps({m: (0.1 if m == e else 0.2) for m in ("preference_only", "gold_only",
                                                                              "mean_shift", "meta_dr", "meta_r")})}
            for i, (c, e) in enumerate(zip(chosen, least))]
    rows.append({"preset": "A", "n_gold": 100, "router": "gold_only", "round": 0, "chosen": None, "cv_errors": None})
    for i, row in enumerate(rows[:3]):
        row["cv_scores"] = json.dumps({m: (0.5 if m == "meta_r" else 0.1) for m in json.loads(row["cv_errors"])})
        # the unpaired rule: within the best member's own SE (0.5 in round 0 reaches every member, 0.01 none)
        row["cv_score_se"] = json.dumps({m: (0.5 if i == 0 else 0.01) for m in json.loads(row["cv_errors"])})
    table = choice_table(pd.DataFrame(rows)).set_index("rule")
    assert table.loc["one SE unpaired", ["pref-only", "meta (R)"]].tolist() == [1, 2]
    assert table.loc["routing gain (now)", ["gold-only", "pref-only", "mean-shift"]].tolist() == [2, 1, 0]
    assert table.loc["squared error", ["gold-only", "pref-only", "mean-shift"]].tolist() == [1, 0, 2]
    assert table.loc["largest routing gain", "meta (R)"] == 3 and (table["rounds"] == 3).all()
    older = choice_table(pd.DataFrame(rows).drop(columns="cv_score_se")).set_index("rule")  # CSVs before b65e6c6
    assert "one SE unpaired" not in older.index and older.loc["squared error", "mean-shift"] == 2  # red: KeyError


def test_ablations_table_refuses_arms_of_different_sizes(tmp_path, capsys):
    """Trees, N and D must agree across configurations and boosting_rounds within (i): one-line error, exit != 0
    (red if the sizes are not checked: the table pairs a 25-tree main with a 50-tree ablation)."""
    sizes = {"trees": 25, "N": 5000, "D": 50, "boosting_rounds": 25}
    main_arm = _rounds("main", {"gold_only": BASE, "meta_r": BASE + 0.1}).assign(**sizes)
    lightgbm = _rounds("i_lightgbm", {"gold_only": BASE, "meta_r": BASE + 0.1}).assign(**sizes)
    assert mismatched_sizes(pd.concat([main_arm, lightgbm])) is None
    other = lightgbm.assign(trees=50)
    assert "trees" in mismatched_sizes(pd.concat([main_arm, other]))
    boosted = pd.concat([lightgbm, lightgbm.assign(round=lightgbm["round"] + 4, boosting_rounds=100)])
    assert "boosting_rounds" in mismatched_sizes(pd.concat([main_arm, boosted]))
    path = tmp_path / "ablations.csv"
    pd.concat([main_arm, other]).to_csv(path, index=False)
    with pytest.raises(SystemExit) as stop:
        main(["ablations-table", str(path)])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and "trees" in error and error.count("\n") == 1


def _served_rounds():
    """Preset B: meta_cv ties preference-only, the better single source, within a wide interval; preset C: gold-only
    is better and meta_cv is 0.05 below it, though 0.03 above preference-only; preset E: meta_cv serves
    preference-only, the better, in every round (equal gains: a zero-width interval at 0)."""
    rounds = pd.concat([
        _rounds("main", {"preference_only": BASE + 0.05, "gold_only": BASE, "meta_cv": BASE + 0.05 + JITTER}),
        _rounds("main", {"preference_only": BASE - 0.08, "gold_only": BASE, "meta_cv": BASE - 0.05 + 0.1 * JITTER})
        .assign(preset="C"),
        _rounds("main", {"preference_only": BASE + 0.05, "gold_only": BASE, "meta_cv": BASE + 0.05})
        .assign(preset="E"),
    ], ignore_index=True)
    rounds["chosen"] = np.where(rounds["router"] == "meta_cv", "preference_only", None)
    rounds.loc[(rounds["router"] == "meta_cv") & (rounds["round"] == 0) & (rounds["preset"] == "B"),
               "chosen"] = "mean_shift"
    return rounds


def test_served_table_compares_with_the_better_single_source_router_per_preset():
    """The better single source per preset (red if taken as the worse of the two, or always as one of them: C would
    read "met" or B "not met"), paired intervals (C: differences −0.05 + 0.1·JITTER, sd 0.00183, t(3) = 3.182, half
    width 0.0029; an unpaired interval would be about ten times wider), the target at its boundary (E: hi = 0 is met,
    red under `hi > 0`), the margin on both sides (E: lo = 0 > −0.01 met, red under `lo > 0.01`; B: lo = −0.029 not
    met, red if the margin is dropped), and meta_cv minus the other single source (B: 0.05 + JITTER over gold-only)."""
    table = served_table(_served_rounds()).set_index("preset")
    assert table["better single source"].to_dict() == {"B": "pref-only", "C": "gold-only", "E": "pref-only"}
    assert table["served − better"].to_dict() == {"B": "+0.000 (-0.029, +0.029)", "C": "-0.050 (-0.053, -0.047)*",
                                                  "E": "+0.000 (+0.000, +0.000)"}
    assert table["not worse beyond interval"].to_dict() == {"B": "met", "C": "not met", "E": "met"}
    assert table["lower bound > −0.01"].to_dict() == {"B": "not met", "C": "not met", "E": "met"}
    assert table["served − other"].to_dict() == {"B": "+0.050 (+0.021, +0.079)*", "C": "+0.030 (+0.027, +0.033)*",
                                                 "E": "+0.050 (+0.050, +0.050)*"}
    assert table.loc["B", "chosen"] == "pref-only 3, mean-shift 1"


def test_served_refuses_rounds_of_two_configurations(tmp_path, capsys):
    """Two runs of one preset and gold size at different N (or one CSV given twice) do not pair: one-line error
    naming the column, exit 2, no traceback (red without the check: pandas raises on the duplicate rounds)."""
    rounds = _served_rounds().assign(tag="fig1_B", N=5000)
    other = rounds.assign(tag="fig1m_B", N=3000)
    paths = [tmp_path / "fig1_B.csv", tmp_path / "fig1m_B.csv"]
    rounds.to_csv(paths[0], index=False)
    other.to_csv(paths[1], index=False)
    assert mixed_configurations(rounds) is None
    for csvs, named in (([paths[0], paths[1]], "column tag"), ([paths[0], paths[0]], "twice")):
        with pytest.raises(SystemExit) as stop:
            main(["served", *map(str, csvs)])
        error = capsys.readouterr().err
        assert stop.value.code == 2 and named in error and error.count("\n") == 1 and "Traceback" not in error
