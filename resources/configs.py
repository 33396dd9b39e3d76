"""Case studies and scenarios: the YAML configuration the ML Compass assets read (folders from resources.settings)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from compass.ingest.errors import IngestError
from compass.mlcompass.benchmark_choice import benchmark_choice
from compass.mlcompass.case_study import CaseStudy, load_cases
from compass.mlcompass.decisions import numeric_lambda
from compass.mlcompass.scenarios import Scenario
from resources import settings


def cases() -> dict[str, CaseStudy]:
    """Every case study of the configured folders, keyed by case_id."""
    return load_cases(settings.case_dirs())


def scenario_files() -> dict[str, Path]:
    """Scenario name (file stem) -> YAML path; later folders override earlier ones."""
    return {p.stem: p for d in settings.scenario_dirs() if d.exists() for p in sorted(d.glob("*.yaml"))}


def scenario_for(name: str, case: CaseStudy) -> Scenario:
    """A shipped scenario by name, with its lam rule resolved with the case's own λ values."""
    return numeric_lambda(Scenario.from_yaml(scenario_files()[name]), case)


def check_benchmark_rules(scores: pd.DataFrame) -> None:
    """Raise IngestError naming the case file and key when a case's benchmark rule leaves no benchmark on
    `scores` (raw.benchmark_scores), or its `min_benchmarks_to_rank` would leave no model to rank: before any of its
    assets runs, so nothing it materialized changes."""
    for path in case_files():
        spec = CaseStudy.from_yaml(path).benchmarks
        choice = benchmark_choice(scores, spec)
        if choice.benchmarks:
            observed = choice.wide.loc[choice.models, choice.benchmarks].notna().sum(axis=1)
            if spec.min_benchmarks_to_rank and not (observed >= spec.min_benchmarks_to_rank).any():
                raise IngestError(str(path), None, "benchmarks.min_benchmarks_to_rank",
                                  f"{spec.min_benchmarks_to_rank} leaves no model to rank: the rule chooses "
                                  f"{len(choice.benchmarks)} benchmarks and the best-measured model has {observed.max()}")
            continue
        if choice.table.empty:
            key, why = "include", "matches no benchmark of raw.benchmark_scores"
        elif (choice.table["n_models"] < spec.min_models_per_benchmark).all():
            key, why = "min_models_per_benchmark", f"no candidate has {spec.min_models_per_benchmark} models"
        elif spec.choose_by == "coverage" and not choice.table["core"].any():
            key, why = "min_current_coverage", (f"no candidate benchmark is observed on {spec.min_current_coverage} "
                                                f"of the {len(choice.current)} current models")
        else:
            key, why = "min_benchmarks_per_model", "no model keeps enough chosen benchmarks"
        raise IngestError(str(path), None, f"benchmarks.{key}", f"the benchmark rule leaves no benchmark: {why}")


def case_files() -> list[Path]:
    """Every case YAML of the configured folders."""
    return [p for d in settings.case_dirs() if d.exists() for p in sorted(d.glob("*.yaml"))]
