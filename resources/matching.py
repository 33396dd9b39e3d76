"""Matchmaking configuration (CUPID, seed 004): simulated users from `users/*.yaml` (resources.settings.user_dirs,
one dynamic partition each), model pools from data/matching/<pool>.csv, the token model of a duel's cost.

A bad user file is an IngestError naming the file and the key; a user whose constraints no model of its
pool meets is admissible (its runs report non-convergence) but warned about.
"""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

import yaml

from compass.ingest.errors import IngestError, IngestWarning
from compass.matching.costs import TokenModel
from compass.matching.pool import Pool, read_pool
from compass.matching.users import User
from resources import settings


def user_files() -> dict[str, Path]:
    """User name (file stem) -> YAML path; later folders override earlier ones."""
    return {p.stem: p for d in settings.user_dirs() if d.exists() for p in sorted(d.glob("*.yaml"))}


def pool_names() -> list[str]:
    return sorted(p.stem for p in settings.MATCHING_DATA_DIR.glob("*.csv") if p.stem != "matharena_tokens")


@cache
def _pool(name: str) -> Pool:
    return read_pool(settings.MATCHING_DATA_DIR / f"{name}.csv")


def pool(name: str) -> Pool:
    """A shipped model pool (data/matching/<name>.csv)."""
    if name not in pool_names():
        raise KeyError(f"no model pool {name!r}; known: {pool_names()}")
    return _pool(name)


def token_model(absolute: bool = False) -> TokenModel:
    """Tokens per call from MathArena's AIME output-token counts (compass.matching.costs)."""
    return TokenModel.from_matharena(settings.MATCHING_DATA_DIR / "matharena_tokens.csv", absolute=absolute)


def load_user(path: Path) -> tuple[User, Pool]:
    """One user file, validated against its pool's columns; the partition key (file stem) is its name."""
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise IngestError(str(path), None, None, f"not valid YAML: {err}") from None
    pool_name = spec.get("pool") if isinstance(spec, dict) else None
    if pool_name not in pool_names():
        raise IngestError(str(path), None, "pool", f"unknown pool {pool_name!r}; known: {pool_names()}")
    the_pool = pool(pool_name)
    user = User.from_dict({**spec, "name": path.stem}, str(path), list(the_pool.metadata.columns))
    if not user.feasible(the_pool).any():
        warnings.warn(f"{path}: no model of pool {pool_name!r} meets every constraint; its runs cannot converge",
                      IngestWarning, stacklevel=2)
    return user, the_pool


def user(name: str) -> tuple[User, Pool]:
    """The user of a partition key and its pool."""
    files = user_files()
    if name not in files:
        raise KeyError(f"no user file {name}.yaml in {[str(d) for d in settings.user_dirs()]}")
    return load_user(files[name])
