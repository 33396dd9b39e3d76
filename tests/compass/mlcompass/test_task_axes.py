"""Task axes and measure labels (issue 48 item 2): an axis score is the mean of the min-max scaled scores a model was
observed on, nothing imputed; a measure's label names the skills that carry its loadings."""

import numpy as np
import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from compass.mlcompass.measure_names import label
from compass.mlcompass.task_axes import AxisUtility, axis_scores, axis_table, parse_axes

MODELS = [f"m{i}" for i in range(6)]


def raw() -> pd.DataFrame:
    """Two coding benchmarks on different scales (an Elo and a fraction), one maths benchmark on 3 models only."""
    return pd.DataFrame({
        "lmarena_coding": [1000.0, 1100.0, 1200.0, 1300.0, 1400.0, np.nan],
        "livebench_coding": [0.5, 0.55, 0.7, 0.6, 0.9, np.nan],
        "livebench_mathematics": [0.2, 0.4, 0.6, np.nan, np.nan, np.nan],
    }, index=MODELS)


def test_an_axis_score_is_the_mean_of_the_scaled_scores_observed_and_unobserved_stays_unknown():
    """m1: ((1100-1000)/400 + (0.55-0.5)/0.4) / 2 = 0.1875; m3: ((1300-1000)/400 + (0.6-0.5)/0.4) / 2 = 0.5; m5
    observed on no coding benchmark: NaN, not imputed. Maths has 3 observed models (< 5): no benchmark, no score.
    Mutation: min-max over all models' pooled scores instead of per benchmark: red."""
    scores = axis_scores(raw(), ["coding", "maths"])
    assert scores.loc["m1", "coding"] == pytest.approx(0.1875)
    assert scores.loc["m3", "coding"] == pytest.approx(0.5)
    assert scores.loc["m4", "coding"] == pytest.approx(1.0)
    assert np.isnan(scores.loc["m5", "coding"]) and scores["maths"].isna().all()


def test_the_axis_table_says_which_benchmarks_enter_and_on_how_many_models():
    measures = pd.DataFrame({"C1": np.linspace(0, 1, 6), "C2": [0.3, 0.1, 0.5, 0.2, 0.9, 0.4]}, index=MODELS)
    table = axis_table(raw(), measures).set_index(["axis", "benchmark"])
    assert table.loc[("coding", "lmarena_coding"), ["n_models_observed", "used", "n_models_axis"]].tolist() == [5, True, 5]
    assert table.loc[("maths", "livebench_mathematics"), ["n_models_observed", "used"]].tolist() == [3, False]
    assert table.loc[("coding", "swe_bench_verified"), "n_models_observed"] == 0


def test_the_axis_utility_is_the_axis_score_at_a_model_and_the_projection_elsewhere():
    measures = pd.DataFrame({"C1": np.linspace(0, 1, 6), "C2": [0.3, 0.1, 0.5, 0.2, 0.9, 0.4]}, index=MODELS)
    coding = axis_scores(raw(), ["coding"])["coding"]
    u = AxisUtility(measures, coding)
    at_models = u(measures.to_numpy())
    assert at_models[:5] == pytest.approx(coding.iloc[:5].to_numpy())
    assert np.all(u.beta >= 0) and u(np.array([[0.5, 0.5]]))[0] == pytest.approx(u.intercept + 0.5 * u.beta.sum())


@pytest.mark.parametrize("spec,floor,expected", [({"coding": 1, "Long context": 0.5}, False, {"coding": 1.0,
                                                                                              "long_context": 0.5}),
                                                 ({"math": 0.6}, True, {"maths": 0.6})])
def test_axes_are_named_as_a_person_writes_them(spec, floor, expected):
    assert parse_axes(spec, "s.yaml", "axes", floor) == expected


@pytest.mark.parametrize("spec,floor,key", [({"cooking": 1}, False, "axes.cooking"), ({"coding": "high"}, False,
                                            "axes.coding"), ({"coding": 1.2}, True, "axes.coding"),
                                            ({"coding": 0}, False, "axes")])
def test_a_bad_axis_names_its_key(spec, floor, key):
    with pytest.raises(IngestError, match=f"column {key}:"):
        parse_axes(spec, "s.yaml", "axes", floor)


def test_a_measure_is_labelled_by_the_skills_that_carry_its_loadings():
    """Loadings like frontier_api's (2026-11-28): C1 on 9 of 12 benchmarks from 4 families, maths 34 % and data
    analysis 23 % of its squared loadings; open_mmlu_pro C2: IFEval dominates. Mutation: every benchmark's skill
    the benchmark id (SKILLS ignored): red (the label names livebench_data_analysis)."""
    c1 = pd.Series({"frontiermath_tier_4_v2": 0.68, "frontiermath_v2": 0.66, "gpqa_diamond": 0.43,
                    "livebench_agentic_coding": 0.61, "livebench_coding": 0.58, "livebench_data_analysis": 0.90,
                    "livebench_if": 0.0, "livebench_language": 0.0, "livebench_mathematics": 0.53,
                    "livebench_reasoning": 0.59, "lmarena_english": 0.49, "simpleqa_verified": 0.0})
    assert label(c1) == "general, strongest in maths and data analysis"
    c2 = pd.Series({"hf_bbh": 0.32, "hf_gpqa": 0.0, "hf_ifeval": 0.80, "hf_math_lvl5": 0.68, "hf_musr": 0.0})
    assert label(c2) == "instruction following"
