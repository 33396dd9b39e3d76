"""Configuration as an input: a changed case, scenario, matchmaking-user or cluster-archetype file re-runs the assets it
configures.

Case and scenario files are not warehouse tables, so their content hashes are
kept in a manifest next to the automation cursor. A refresh compares them and
materializes what reads a changed file: every case-partitioned asset of a changed case and that case's decision
partitions (a field such as `eps`, `n_tiers`, `cost.scaling` or `lambdas` changes tiers, the cost side or the
decisions without changing the measures above them, so data versions alone would not carry it); a scenario's
decision partitions; a user's matching/runs; an archetype's clusters/benchmark. Data versions carry the change on
from there. New files need nothing here: their partitions are simply missing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dagster as dg

from assets.partitions import case_partitions, scenario_partitions
from compass.mlcompass.case_study import CaseStudy
from resources.clusters_configs import archetype_files
from resources.configs import scenario_files
from resources.matching import user_files
from resources.settings import case_dirs

DECISIONS = [dg.AssetKey(["compass", n]) for n in ("targets", "recommendations", "leaderboards", "policy_values",
                                                   "lambda_path", "rank_uncertainty")]
USER_ROOTS = [dg.AssetKey(["matching", "runs"])]
ARCHETYPE_ROOTS = [dg.AssetKey(["clusters", "benchmark"])]


KINDS = ("case", "scenario", "user", "archetype")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def config_digests() -> dict[str, str]:
    """Content hash of every case, scenario and user file, keyed "case:<case_id>" / "scenario:<name>" / "user:<name>"."""
    out = {f"scenario:{name}": _digest(p) for name, p in scenario_files().items()}
    out |= {f"user:{name}": _digest(p) for name, p in user_files().items()}
    out |= {f"archetype:{name}": _digest(p) for name, p in archetype_files().items()}
    for folder in case_dirs():
        for p in sorted(folder.glob("*.yaml")) if folder.exists() else []:
            out[f"case:{CaseStudy.from_yaml(p).case_id}"] = _digest(p)
    return out


def _manifest(instance: dg.DagsterInstance) -> Path:
    return Path(instance.root_directory) / "compass_config_digests.json"


def changed_config(instance: dg.DagsterInstance) -> dict[str, list[str]]:
    """Changed names per kind of KINDS; new files do not count as changed."""
    path = _manifest(instance)
    before = json.loads(path.read_text()) if path.exists() else {}
    changed = [k for k, v in config_digests().items() if k in before and before[k] != v]
    return {kind: [k.split(":", 1)[1] for k in changed if k.startswith(f"{kind}:")] for kind in KINDS}


def save_digests(instance: dg.DagsterInstance, digests: dict[str, str]) -> None:
    _manifest(instance).write_text(json.dumps(digests, indent=1, sort_keys=True))


def case_assets(graph) -> list[dg.AssetKey]:
    """The case-partitioned assets of an asset graph, in topological order (one run materializes them in order)."""
    return [key for key in graph.toposorted_asset_keys
            if isinstance(graph.get(key).partitions_def, dg.DynamicPartitionsDefinition)
            and graph.get(key).partitions_def.name == case_partitions.name]


def config_requests(instance: dg.DagsterInstance, case_keys: list[dg.AssetKey]) -> list[tuple[str, list[dg.AssetKey]]]:
    """(partition key, asset keys) to materialize because their configuration file changed, in the order to run
    them; `case_keys` are the graph's case-partitioned assets (`case_assets`)."""
    changed = changed_config(instance)
    scenarios = instance.get_dynamic_partitions(scenario_partitions.name)
    requests = []
    for case in changed["case"]:
        requests += [(case, case_keys)] + [(f"{case}|{scenario}", DECISIONS) for scenario in scenarios]
    requests += [(user, USER_ROOTS) for user in changed["user"]]
    requests += [(name, ARCHETYPE_ROOTS) for name in changed["archetype"]]
    all_cases = instance.get_dynamic_partitions(case_partitions.name)
    for scenario in changed["scenario"]:
        requests += [(f"{case}|{scenario}", DECISIONS) for case in all_cases if case not in changed["case"]]
    return requests
