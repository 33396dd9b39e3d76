"""Keep the dynamic partitions (assets.partitions) in step with the datasets, case studies, scenarios, archetypes, routing datasets and users."""

from __future__ import annotations

import dagster as dg

from assets.partitions import (
    archetype_partitions,
    case_partitions,
    dataset_partitions,
    route_dataset_partitions,
    scenario_partitions,
    user_partitions,
)
from resources import readers
from resources.clusters_configs import archetype_files
from resources.configs import cases, scenario_files
from resources.matching import user_files
from resources.warehouse import Warehouse


def sync_dynamic_partitions(instance: dg.DagsterInstance, db_path: str | None = None) -> None:
    """Register partitions for new datasets, cases and scenarios, and drop vanished ones."""
    wanted_by_definition = (
        (dataset_partitions, readers.datasets(Warehouse(db_path))),
        (scenario_partitions, sorted(scenario_files())),
        (case_partitions, sorted(cases())),
        (archetype_partitions, sorted(archetype_files())),
        (route_dataset_partitions, readers.route_datasets(Warehouse(db_path))),
        (user_partitions, sorted(user_files())),
    )
    for definition, wanted in wanted_by_definition:
        have = set(instance.get_dynamic_partitions(definition.name))
        new = [k for k in wanted if k not in have]
        if new:
            instance.add_dynamic_partitions(definition.name, new)
        for gone in have - set(wanted):
            instance.delete_dynamic_partition(definition.name, gone)
