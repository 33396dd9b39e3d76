"""Case studies and scenarios: the YAML configuration the ML Compass assets read (folders from resources.settings)."""

from __future__ import annotations

from pathlib import Path

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
