"""Cluster archetypes: the YAML files under the archetype folders (resources.settings.archetype_dirs),
read with yaml.safe_load and validated by compass.clusters.Archetype, and English descriptions (`*.txt`)
translated by the configured language model (compass.clusters.natural_language; cached next to the
file). One dynamic partition each."""

from __future__ import annotations

from pathlib import Path

from compass.clusters.archetype import Archetype
from compass.clusters.natural_language import archetype_from_description
from resources import settings


def archetype_files() -> dict[str, Path]:
    """Archetype name (file stem) -> YAML or description (.txt) path; later folders override earlier ones,
    and a YAML file its description."""
    return {p.stem: p for d in settings.archetype_dirs() if d.exists()
            for pattern in ("*.txt", "*.yaml") for p in sorted(d.glob(pattern))}


def archetype(name: str) -> Archetype:
    """One archetype by partition key; a bad file raises ArchetypeError naming file, key and value.

    The partition key (the file stem) is the archetype's name, whatever `name:` the file gives."""
    files = archetype_files()
    if name not in files:
        raise KeyError(f"no archetype file {name}.yaml in {[str(d) for d in settings.archetype_dirs()]}")
    if files[name].suffix == ".txt":
        base_url, model, key = settings.llm_endpoint()
        return archetype_from_description(files[name], base_url, model, key)
    spec = Archetype.from_yaml(files[name])
    return Archetype.from_dict({**spec.to_dict(), "name": name}, str(files[name]))
