"""Benchmarks chosen by coverage of the current models (compass.mlcompass.benchmark_choice; synthetic scores)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compass.ingest.errors import IngestError
from compass.mlcompass.benchmark_choice import benchmark_choice
from compass.mlcompass.case_inputs import build_x_raw
from compass.mlcompass.case_study import BenchmarkSpec, CaseStudy
from resources import configs

NEW, OLD = "2026-06-25", "2025-12-17"


def _scores(blocks: dict[str, tuple[list[str], str, str]]) -> pd.DataFrame:
    """Long scores: {benchmark: (models, source, as_of)}, random values."""
    rng = np.random.default_rng(0)
    rows = [(m, b, rng.normal(50, 10), src, day) for b, (models, src, day) in blocks.items() for m in models]
    return pd.DataFrame(rows, columns=["model_id", "benchmark", "score", "source", "as_of"])


CURRENT = [f"new{i}" for i in range(20)]  # scored by the newest source only
BRIDGES = [f"both{i}" for i in range(6)]  # scored by both sources
OLDIES = [f"old{i}" for i in range(40)]


def _catalog(**extra) -> pd.DataFrame:
    blocks = {f"lb_{k}": (CURRENT + BRIDGES, "lb", NEW) for k in range(4)}
    blocks |= {"ep_wide": (BRIDGES + OLDIES, "ep", OLD),  # 6 shared with the core, 46 models
               "ep_narrow": (BRIDGES[:5] + OLDIES[:25], "ep", OLD),  # 5 shared: just enough
               "ep_thin": (BRIDGES[:3] + OLDIES, "ep", OLD),  # 3 shared: too few to bridge, though most-measured
               "ep_island": (OLDIES, "ep", OLD)}  # shares nobody with the core
    return _scores(blocks | extra)


SPEC = BenchmarkSpec(choose_by="coverage", min_models_per_benchmark=10, min_benchmarks_per_model=2,
                     min_bridging=5, max_imputed_share=0.4)


def test_the_core_is_what_the_current_models_were_measured_on_and_bridges_share_enough_models():
    choice = benchmark_choice(_catalog(), SPEC)
    table = choice.table.set_index("benchmark")
    assert set(choice.current) == set(CURRENT + BRIDGES)
    assert set(table.index[table["core"]]) == {f"lb_{k}" for k in range(4)}
    assert choice.benchmarks == ["ep_narrow", "ep_wide", "lb_0", "lb_1", "lb_2", "lb_3"]
    assert "fewer than min_bridging 5" in table.at["ep_thin", "reason"]
    assert "shares 0 models" in table.at["ep_island", "reason"]
    # bridging: the models observed on both blocks (core vs bridges), measured per chosen benchmark
    assert table.at["lb_0", "n_bridging"] == 6 and table.at["ep_narrow", "n_bridging"] == 5
    assert table.loc[choice.benchmarks, "n_bridging"].min() >= SPEC.min_bridging
    # the current models' rows stay at most 40 % imputed (here 2 of 6 cells: 0.33)
    x = build_x_raw(_catalog(), SPEC)
    assert x.loc[CURRENT].isna().mean(axis=1).median() <= SPEC.max_imputed_share
    assert list(x.columns) == choice.benchmarks and set(x.index) == set(choice.models)


def test_max_imputed_share_stops_adding_bridges():
    spec = BenchmarkSpec(**{**SPEC.__dict__, "max_imputed_share": 0.2, "min_benchmarks_per_model": 1})
    choice = benchmark_choice(_catalog(), spec)
    table = choice.table.set_index("benchmark")
    assert choice.benchmarks == ["ep_wide", "lb_0", "lb_1", "lb_2", "lb_3"]  # 1 of 5 imputed; a 2nd bridge: 0.33
    assert "median imputed share 0.33 > max_imputed_share" in table.at["ep_narrow", "reason"]


def test_a_new_benchmark_that_covers_the_current_models_changes_the_choice():
    before = benchmark_choice(_catalog(), SPEC)
    newer = _catalog(gpqa_2026=(CURRENT + BRIDGES + OLDIES[:10], "ep2", "2026-09-01"))
    after = benchmark_choice(newer, SPEC)
    # the newest scores now come from the new export: its models are the current ones, its benchmark the core
    assert "gpqa_2026" not in before.benchmarks and "gpqa_2026" in after.benchmarks
    assert set(after.current) == set(CURRENT + BRIDGES + OLDIES[:10])
    assert after.table.set_index("benchmark").at["gpqa_2026", "core"]


def test_fixed_rule_keeps_every_candidate_with_enough_models():
    fixed = BenchmarkSpec(include=("lb_*", "ep_*"), min_models_per_benchmark=10, min_benchmarks_per_model=1)
    x = build_x_raw(_catalog(), fixed)
    assert list(x.columns) == ["ep_island", "ep_narrow", "ep_thin", "ep_wide", "lb_0", "lb_1", "lb_2", "lb_3"]
    assert (benchmark_choice(_catalog(), fixed).table["reason"] == "fixed list").all()


@pytest.mark.parametrize(("rule", "key"), [
    ("include: [nothing_*]", "benchmarks.include"),
    ("min_current_coverage: 1.0\n  include: [ep_thin, ep_island, ep_narrow]", "benchmarks.min_current_coverage"),
    ("min_models_per_benchmark: 100", "benchmarks.min_models_per_benchmark"),
])
def test_a_rule_that_leaves_no_benchmark_is_rejected_naming_the_file_and_key(tmp_path, monkeypatch, rule, key):
    case = tmp_path / "cases" / "bad.yaml"
    case.parent.mkdir()
    case.write_text(f"case_id: bad\nbenchmarks:\n  choose_by: coverage\n  {rule}\n")
    monkeypatch.setenv("COMPASS_CASES", str(case.parent))
    with pytest.raises(IngestError) as err:
        configs.check_benchmark_rules(_catalog())
    assert err.value.file == str(case) and err.value.column == key
    assert "leaves no benchmark" in str(err.value)


def test_the_rule_keys_are_validated_when_the_case_is_read():
    with pytest.raises(IngestError, match="benchmarks.max_imputed_share must be a number in"):
        CaseStudy.from_dict({"case_id": "c", "benchmarks": {"max_imputed_share": 1.5}}, "c.yaml")
    with pytest.raises(IngestError, match="choose_by must be one of"):
        CaseStudy.from_dict({"case_id": "c", "benchmarks": {"choose_by": "vibes"}}, "c.yaml")
