"""Measures that keep their meaning across refreshes: target rotation, anchor signs, names, identities (synthetic data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.factor_alignment import MIN_CONGRUENCE
from compass.mlcompass.measure_names import (
    MeasureRefused, derive_name, first_registry, identify_measures, registry_problems, resolve_references,
)
from compass.mlcompass.measures import extract_measures

from .conftest import low_rank_catalog


def _long(wide: pd.DataFrame) -> pd.DataFrame:
    return wide.rename_axis(index="benchmark", columns="factor").stack().rename("loading").reset_index()


@pytest.fixture
def catalog2():
    return low_rank_catalog(n_models=80, n_bench=12, rank=2, noise=0.3, seed=4)


def test_refresh_keeps_a_previous_solution_that_promax_would_not_pick(catalog2):
    """The published C2 mixes both simple-structure factors (an oblique rotation promax would not choose). A
    refresh (one model more, one benchmark rescored) must rotate toward it and keep phi >= 0.95 on every measure;
    refitting with promax and only matching (the alignment skipped) reaches phi 0.86 on C2 here."""
    frame, _ = catalog2
    first = extract_measures(frame.iloc[:-1], n_factors=2, pa_iterations=20).loading_matrix()
    mixed = first.assign(C2=0.6 * first["C1"] + first["C2"])
    refreshed = frame.copy()
    refreshed.iloc[:, 3] += np.random.default_rng(0).normal(0, 1.0, len(frame))
    second = extract_measures(refreshed, n_factors=2, previous_loadings=_long(mixed), pa_iterations=20)
    assert (second.congruence >= MIN_CONGRUENCE).all(), second.congruence
    assert list(second.measures.columns) == ["C1", "C2"]


def test_anchors_fix_the_signs(catalog2):
    """Without anchors a factor's loadings sum to a positive number; an anchor declared "-" turns the factor it
    loads on most so that it loads negatively there, and the other factor keeps its sign."""
    frame, _ = catalog2
    plain = extract_measures(frame, n_factors=2, pa_iterations=20).loading_matrix()
    assert (plain.sum() > 0).all()
    top = plain["C1"].abs().idxmax()
    anchored = extract_measures(frame, n_factors=2, pa_iterations=20, anchors={top: -1}).loading_matrix()
    pd.testing.assert_series_equal(anchored["C1"], -plain["C1"])
    pd.testing.assert_series_equal(anchored["C2"], plain["C2"])
    # a refresh against the flipped solution is not fooled by the classical sign rule
    again = extract_measures(frame, n_factors=2, pa_iterations=20, previous_loadings=_long(anchored),
                             anchors={top: -1})
    assert (again.congruence > MIN_CONGRUENCE).all()


@pytest.mark.parametrize("spec, message", [({"gpqa": "up"}, "anchors.gpqa"), (["gpqa"], "anchors")])
def test_bad_anchors_name_the_key(spec, message):
    doc = {"case_id": "x", "benchmarks": {"include": ["a*"]}, "cost": {"table": "models", "column": "p"},
           "utility": {"source": "weights", "weights": {"C1": 1.0}}, "anchors": spec}
    with pytest.raises(IngestError, match=message):
        CaseStudy.from_dict(doc, "cases/x.yaml")


BENCH = pd.Index(["livebench_coding", "livebench_data_analysis", "lmarena_full", "lmarena_math", "gpqa_diamond"])


@pytest.mark.parametrize("values, name", [
    ([0.3, 0.9, 0.35, 0.32, 0.31], "livebench_data_analysis"),  # one dominant benchmark
    ([0.8, 0.7, 0.75, 0.7, 0.7], "general"),  # everything, several families
    ([0.0, 0.0, 0.9, 0.8, 0.0], "lmarena"),  # one family
    ([0.8, 0.7, 0.0, 0.0, 0.0], "livebench"),
])
def test_names_follow_the_loadings(values, name):
    assert derive_name(pd.Series(values, index=BENCH), BENCH) == name


def test_two_general_factors_are_named_by_what_sets_them_apart():
    """The frontier case's two measures both load on nearly every benchmark: each is named by the benchmark it
    loads on beyond the other (not general / general_v2, which says nothing about either)."""
    wide = pd.DataFrame({"C1": [0.6, 0.85, 0.59, 0.0, 0.55], "C2": [0.5, 0.0, 0.6, 0.84, 0.6]},
                        index=["frontiermath_v2", "livebench_data_analysis", "lmarena_english", "livebench_if",
                               "gpqa_diamond"])
    names = first_registry(wide)["name"].tolist()
    assert names == ["general_livebench_data_analysis", "general_livebench_if"]


def test_single_family_cases_name_by_the_two_top_benchmarks():
    bench = pd.Index(["hf_bbh", "hf_gpqa", "hf_musr", "hf_ifeval"])
    assert derive_name(pd.Series([0.74, 0.84, 0.75, 0.0], index=bench), bench) == "gpqa_musr"


def _registry_after(phi: dict[str, float]):
    prev = pd.DataFrame({"C1": [0.8, 0.7, 0.75, 0.7, 0.7], "C2": [0.3, 0.9, 0.35, 0.32, 0.31]}, index=BENCH)
    new = prev.assign(C2=[0.9, -0.2, 0.0, 0.0, 0.5])
    first = identify_measures(prev, None, None, None)[1]
    return identify_measures(new, pd.Series(phi), first, prev)


def test_a_matching_refresh_keeps_ids_and_names():
    rename, registry = _registry_after({"C1": 0.99, "C2": 0.97})
    assert rename == {"C1": "C1", "C2": "C2"}
    assert registry[["factor", "name", "status"]].values.tolist() == [
        ["C1", "general_livebench_coding", "kept"], ["C2", "livebench_data_analysis", "kept"]]


def test_a_changed_measure_gets_a_new_identity_and_old_references_are_refused():
    rename, registry = _registry_after({"C1": 0.99, "C2": 0.41})
    assert rename == {"C1": "C1", "C2": "C3"}
    rows = registry.set_index("factor")
    assert rows.loc["C2", "status"] == "retired" and rows.loc["C2", "replaced_by"] == "C3"
    assert rows.loc["C2", "congruence"] == rows.loc["C3", "congruence"] == 0.41  # the phi that retired it
    assert rows.loc["C3", "status"] == "renewed" and rows.loc["C3", "name"] == "livebench_coding"
    assert "phi 0.41" in rows.loc["C3", "changed"] and "livebench_data_analysis +0.90" in rows.loc["C3", "changed"]
    # references by name and by id resolve; the retired measure, by either, is refused with what changed
    assert resolve_references({"general_livebench_coding": 0.5, "C3": 0.2}, registry, "s.yaml: floors") == {"C1": 0.5, "C3": 0.2}
    assert resolve_references({"all": 0.33}, registry, "s.yaml: floors") == {"all": 0.33}
    for ref in ("C2", "livebench_data_analysis"):
        with pytest.raises(MeasureRefused, match=rf"s.yaml: floors.{ref}: refers to a retired measure: C2 .*phi 0.41"):
            resolve_references({ref: 0.5}, registry, "s.yaml: floors")
    # a refresh after that keeps the new identity and still knows the retired one
    now = pd.DataFrame({"C1": [0.8] * 5, "C3": [0.9, -0.2, 0.0, 0.0, 0.5]}, index=BENCH)
    _, later = identify_measures(now, pd.Series({"C1": 0.99, "C3": 0.99}), registry, now)
    assert later.set_index("factor")["status"].to_dict() == {"C1": "kept", "C2": "retired", "C3": "kept"}


def test_the_blocking_check_counts_a_kept_measure_that_changed_meaning():
    _, registry = _registry_after({"C1": 0.99, "C2": 0.41})
    assert not any(registry_problems(registry, {"C1", "C3"}).values())
    silently_changed = registry.assign(congruence=registry["congruence"].where(registry["factor"] != "C1", 0.80))
    assert registry_problems(silently_changed, {"C1", "C3"})["kept_below_min_congruence"] == 1
    # it counts the out-of-sample phi: a rotation that matches the old loadings only in sample is no match
    in_sample_only = registry.assign(congruence=np.where(registry["factor"] == "C1", 0.93, registry["congruence"]),
                                     congruence_in_sample=np.where(registry["factor"] == "C1", 0.98,
                                                                   registry["congruence_in_sample"]))
    assert registry_problems(in_sample_only, {"C1", "C3"})["kept_below_min_congruence"] == 1
    assert registry_problems(registry, {"C1", "C2"})["measures_without_one_name"] == 2
    assert registry_problems(registry.iloc[:0], set()) == {"no_measure_names": 1}
