"""Configuration as an input: a changed case, scenario, matchmaking-user or cluster-archetype file re-runs the assets it
configures.

Case and scenario files are not warehouse tables, so their content hashes are
kept in a manifest next to the automation cursor. A refresh compares them and
materializes the roots that read a changed file (the case's catalog, measures,
utilities and studies; a scenario's decision partitions; a user's matching/runs; an archetype's
clusters/benchmark); data versions carry the change on from there. New files need nothing here: their partitions are simply missing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dagster as dg

from compass.mlcompass.case_study import CaseStudy
from resources.clusters_configs import archetype_files
from resources.configs import scenario_files
from resources.matching import user_files
from resources.settings import case_dirs

# The case-partitioned assets that read the case file without reading another asset that does.
CASE_ROOTS = [dg.AssetKey(["compass", n]) for n in ("case_catalog", "measures", "utilities", "frontier_sensitivity",
                                                    "variance_explained", "utility_robustness", "rank_bootstrap")]
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


def config_requests(instance: dg.DagsterInstance) -> list[tuple[str, list[dg.AssetKey]]]:
    """(partition key, asset keys) to materialize because their configuration file changed."""
    changed = changed_config(instance)
    cases = changed["case"]
    requests = [(case, CASE_ROOTS) for case in cases] + [(user, USER_ROOTS) for user in changed["user"]]
    requests += [(name, ARCHETYPE_ROOTS) for name in changed["archetype"]]
    all_cases = instance.get_dynamic_partitions("case")
    for scenario in changed["scenario"]:
        requests += [(f"{case}|{scenario}", DECISIONS) for case in all_cases if case not in cases]
    return requests
