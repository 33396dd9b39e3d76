"""Dynamic partitions: one per dataset of raw.query_records, one per scenario YAML file."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from compass.case_study import CASE_DIR, CaseStudy, load_cases
from resources.warehouse import DEFAULT_DB, Warehouse

dataset_partitions = dg.DynamicPartitionsDefinition(name="dataset")
scenario_partitions = dg.DynamicPartitionsDefinition(name="scenario")
case_partitions = dg.DynamicPartitionsDefinition(name="case")
# Decisions (targets, recommendations, leaderboards, policy values): one partition per case x scenario.
decision_partitions = dg.MultiPartitionsDefinition({"case": case_partitions, "scenario": scenario_partitions})
SCENARIO_DIR = Path(__file__).resolve().parents[1] / "scenarios"


def scenario_dirs() -> list[Path]:
    """COMPASS_SCENARIOS (os.pathsep-separated folders) when set, else the shipped scenarios/ folder."""
    chosen = [Path(p) for p in os.environ.get("COMPASS_SCENARIOS", "").split(os.pathsep) if p]
    return chosen or [SCENARIO_DIR]


def scenario_files() -> dict[str, Path]:
    """Scenario name (file stem) -> YAML path; later folders override earlier ones."""
    return {p.stem: p for d in scenario_dirs() if d.exists() for p in sorted(d.glob("*.yaml"))}


def case_dirs() -> list[Path]:
    """COMPASS_CASES (os.pathsep-separated folders) when set, else the shipped cases/ folder."""
    chosen = [Path(p) for p in os.environ.get("COMPASS_CASES", "").split(os.pathsep) if p]
    return chosen or [CASE_DIR]


def cases() -> dict[str, CaseStudy]:
    return load_cases(case_dirs())


def current_datasets(wh: Warehouse) -> list[str]:
    if not wh.table_exists("raw.query_records"):
        return []
    return sorted(wh.query("select distinct dataset from raw.query_records")["dataset"])


def sync_dynamic_partitions(instance: dg.DagsterInstance, db_path: str | None = None) -> None:
    """Register partitions for new datasets and scenarios, and drop vanished ones."""
    wh = Warehouse(db_path or os.environ.get("COMPASS_DB", DEFAULT_DB))
    wanted_by_definition = (
        (dataset_partitions, current_datasets(wh)),
        (scenario_partitions, sorted(scenario_files())),
        (case_partitions, sorted(cases())),
    )
    for definition, wanted in wanted_by_definition:
        have = set(instance.get_dynamic_partitions(definition.name))
        new = [k for k in wanted if k not in have]
        if new:
            instance.add_dynamic_partitions(definition.name, new)
        for gone in have - set(wanted):
            instance.delete_dynamic_partition(definition.name, gone)
