"""Simulated users as configuration (CUPID §4.1, App. D.3; spec-004 §4.1, §7 "User/session record").

A user is a set of hidden constraints on pool metadata columns, a money budget B, a round budget T and
the seeds of its runs. Constraints read `column: {max: v}` (value <= v), `column: {min: v}` (value >= v)
or `column: true|false` (a boolean capability required or forbidden). A model is feasible when it meets
every constraint; an unknown (missing) value never meets one (spec §6.10). An optional `prefer:
{column: weight}` gives the simulated person a latent utility Σ w · value that decides duels between
models meeting as many constraints (the latent objective a session should recover; spec §5.5).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from compass.ingest.errors import IngestError
from compass.matching.pool import Pool

USER_KEYS = ("name", "pool", "constraints", "budget_usd", "rounds", "seeds", "heavy_seeds", "initial_direction", "prefer",
             "judge_noise")
FIRST_SEED = 42  # `seeds: n` means seeds 42, 43, ..., 41 + n (the paper's runs use 42-46)
BOUNDS = ("min", "max")


@dataclass(frozen=True)
class Constraint:
    """One user constraint: `low <= value <= high` (None = unbounded), or `value == required` for booleans."""

    column: str
    low: float | None = None
    high: float | None = None
    required: bool | None = None

    def met(self, values: np.ndarray) -> np.ndarray:
        """Per model: does its value meet the constraint? NaN (unknown) never does."""
        values = np.asarray(values, float)
        ok = ~np.isnan(values)
        if self.required is not None:
            return ok & (values == float(self.required))
        if self.low is not None:
            ok &= values >= self.low
        if self.high is not None:
            ok &= values <= self.high
        return ok

    def describe(self) -> str:
        if self.required is not None:
            return f"{self.column} {'required' if self.required else 'absent'}"
        parts = ([f">= {self.low:g}"] if self.low is not None else []) + ([f"<= {self.high:g}"] if self.high is not None else [])
        return f"{self.column} {' and '.join(parts)}"


@dataclass(frozen=True)
class User:
    """A simulated user (App. D.3): hidden constraints, budgets B (USD) and T (rounds), run seeds."""

    name: str
    pool: str
    constraints: tuple[Constraint, ...]
    budget_usd: float = 0.05
    rounds: int = 10
    seeds: tuple[int, ...] = (42, 43, 44, 45, 46)
    initial_direction: str | None = None  # a constraint column; None: one drawn per run (spec §5.2)
    prefer: tuple[tuple[str, float], ...] = ()  # latent utility weights over metadata columns
    judge_noise: float = 0.0  # probability that the simulated judge flips a duel's outcome (spec §5.1 p_flip)
    heavy_seeds: tuple[int, ...] | None = None  # the seeds under COMPASS_HEAVY=1 (None: `seeds`)
    origin: str = field(default="<user>", compare=False)

    def satisfied(self, pool: Pool) -> np.ndarray:
        """(K, |O|) booleans: model m meets constraint o."""
        return np.column_stack([c.met(pool.metadata[c.column].to_numpy(float)) for c in self.constraints])

    def utility(self, pool: Pool) -> np.ndarray:
        """Σ_c w_c · value_c per model (0 without `prefer`; an unknown value counts as the column's minimum)."""
        out = np.zeros(pool.size)
        for column, weight in self.prefer:
            values = pool.metadata[column].to_numpy(float)
            out += weight * np.where(np.isnan(values), np.nanmin(values), values)
        return out

    def best_models(self, pool: Pool) -> np.ndarray:
        """The user's best models: the feasible ones of highest utility (`prefer`); every feasible model when the
        user states no preference. A run that ends on one of them found the best model."""
        feasible = self.feasible(pool)
        if not self.prefer or not feasible.any():
            return feasible
        utility = np.where(feasible, self.utility(pool), -np.inf)
        return utility >= utility.max() - 1e-12

    def feasible(self, pool: Pool) -> np.ndarray:
        """Model m meets every constraint (spec §5.1: sat(m) = |O|)."""
        return self.satisfied(pool).all(axis=1)

    @classmethod
    def from_dict(cls, spec: object, origin: str, columns: list[str] | None = None) -> User:
        """Validate a user mapping (keys `USER_KEYS`); `columns` are the pool's metadata columns.

        Errors are IngestErrors naming the file (`origin`), the key and the value."""
        if not isinstance(spec, Mapping):
            raise IngestError(origin, None, None, f"expected a mapping with keys {list(USER_KEYS)}, got {spec!r}")
        unknown = sorted(set(spec) - set(USER_KEYS))
        if unknown:
            raise IngestError(origin, None, unknown[0], f"unknown key {unknown[0]!r}; known: {list(USER_KEYS)}")
        for key in ("name", "pool", "constraints"):
            if key not in spec:
                raise IngestError(origin, None, key, "missing")
        raw = spec["constraints"]
        if not isinstance(raw, Mapping) or not raw:
            raise IngestError(origin, None, "constraints", f"expected a mapping column -> constraint, got {raw!r}")
        constraints = tuple(_constraint(col, value, origin, columns) for col, value in raw.items())
        budget, rounds = spec.get("budget_usd", 0.05), spec.get("rounds", 10)
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget > 0:
            raise IngestError(origin, None, "budget_usd", f"expected a number of USD > 0, got {budget!r}")
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise IngestError(origin, None, "rounds", f"expected a whole number >= 1, got {rounds!r}")
        seeds = _seeds(spec.get("seeds", 5), origin, "seeds")
        heavy = _seeds(spec["heavy_seeds"], origin, "heavy_seeds") if spec.get("heavy_seeds") is not None else None
        noise = spec.get("judge_noise", 0.0)
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise < 0.5:
            raise IngestError(origin, None, "judge_noise", f"expected a probability in [0, 0.5), got {noise!r}")
        direction = spec.get("initial_direction")
        if direction is not None and direction not in raw:
            raise IngestError(origin, None, "initial_direction", f"must name one of the constraints {list(raw)}, got {direction!r}")
        prefer = spec.get("prefer") or {}
        if not isinstance(prefer, Mapping):
            raise IngestError(origin, None, "prefer", f"expected a mapping column -> weight, got {prefer!r}")
        for column, weight in prefer.items():
            if columns is not None and column not in columns:
                raise unknown_column(origin, f"prefer.{column}", column, columns)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                raise IngestError(origin, None, f"prefer.{column}", f"expected a number, got {weight!r}")
        return cls(str(spec["name"]), str(spec["pool"]), constraints, float(budget), rounds, tuple(seeds), direction,
                   tuple((str(c), float(w)) for c, w in prefer.items()), float(noise), heavy, origin)


def _seeds(value: object, origin: str, key: str) -> tuple[int, ...]:
    """A list of whole numbers, or a count n for seeds 42 .. 41 + n."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return tuple(range(FIRST_SEED, FIRST_SEED + value))
    if isinstance(value, list) and value and all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
        return tuple(value)
    raise IngestError(origin, None, key, f"expected a count >= 1 or a non-empty list of whole numbers >= 0, got {value!r}")


def unknown_column(origin: str, key: str, column: object, columns: list[str]) -> IngestError:
    """A one-line error for a column the pool does not have, with the closest names as the fix."""
    close = difflib.get_close_matches(str(column), columns, n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}?" if close else f"the pool has {columns}"
    return IngestError(origin, None, key, f"unknown column {column!r}; {hint}")


def _constraint(column: object, value: object, origin: str, columns: list[str] | None) -> Constraint:
    key = f"constraints.{column}"
    if columns is not None and column not in columns:
        raise unknown_column(origin, key, column, columns)
    if isinstance(value, bool):
        return Constraint(str(column), required=value)
    if isinstance(value, Mapping) and value and set(value) <= set(BOUNDS):
        bad = {k: v for k, v in value.items() if isinstance(v, bool) or not isinstance(v, (int, float))}
        if not bad:
            return Constraint(str(column), low=value.get("min"), high=value.get("max"))
    raise IngestError(origin, None, key, f"expected true/false or {{min: number}} / {{max: number}}, got {value!r}")
