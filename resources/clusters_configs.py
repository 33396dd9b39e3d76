"""Cluster archetypes: the YAML files under the archetype folders (resources.settings.archetype_dirs),
one dynamic partition each, read with yaml.safe_load and validated by compass.clusters.Archetype."""

from __future__ import annotations

from pathlib import Path

from compass.clusters.archetype import Archetype
from resources import settings


def archetype_files() -> dict[str, Path]:
    """Archetype name (file stem) -> YAML path; later folders override earlier ones."""
    return {p.stem: p for d in settings.archetype_dirs() if d.exists() for p in sorted(d.glob("*.yaml"))}


def archetype(name: str) -> Archetype:
    """One archetype by partition key; a bad file raises ArchetypeError naming file, key and value.

    The partition key (the file stem) is the archetype's name, whatever `name:` the file gives."""
    files = archetype_files()
    if name not in files:
        raise KeyError(f"no archetype file {name}.yaml in {[str(d) for d in settings.archetype_dirs()]}")
    spec = Archetype.from_yaml(files[name])
    return Archetype.from_dict({**spec.to_dict(), "name": name}, str(files[name]))
