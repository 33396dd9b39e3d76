"""Data set archetypes: the high-level geometric parameters of Table 5.1 (thesis ch. 5, §5.2) and the
validation rules of the reference implementation (spec "Chapter 5", §5.1).

An archetype is a plain dataclass; `Archetype.from_dict` validates a mapping (from a YAML file under
`archetypes/` or from the natural-language translator) and raises `ArchetypeError` naming the source,
the key and the offending value.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path

from compass.ingest.errors import IngestError
from compass.ingest.untrusted import load_yaml

#: The twelve radial distributions of §5.3 with their parameters (numpy Generator argument names): the
#: defaults of the reference implementation (`repliclust.base.SUPPORTED_DISTRIBUTIONS`), which the thesis
#: uses without listing them; numpy's own defaults where it gives none (uniform on [0, 1), gumbel(0, 1)).
DISTRIBUTIONS: dict[str, dict[str, float]] = {
    "normal": {},
    "standard_t": {"df": 5.0},
    "exponential": {},
    "beta": {"a": 2.5, "b": 8.5},
    "uniform": {},
    "chisquare": {"df": 5.0},
    "gumbel": {},
    "weibull": {"a": 1.5},
    "gamma": {"shape": 3.0},
    "pareto": {"a": 10.0},
    "f": {"dfnum": 7.0, "dfden": 10.0},
    "lognormal": {"sigma": 0.75},
}
OVERLAP_MODES = ("lda", "c2c")
# Upper bounds on what an archetype may ask for: each count, the centre fit's pairwise covariances
# (n_clusters (n_clusters - 1) / 2 pairs of dim x dim matrices) and the data set (n_samples x dim points); past
# them one data set needs more than about half a gigabyte per array, or days.
MAX_COUNTS = {"n_clusters": 10_000, "dim": 1_000, "n_samples": 10_000_000, "max_epoch": 100_000, "n_restarts": 100}
MAX_PAIR_ENTRIES = 60_000_000
MAX_POINT_ENTRIES = 100_000_000


class ArchetypeError(ValueError):
    """A bad archetype: `source` (file or "<dict>"), `key` and the offending `value` are named."""

    def __init__(self, source: str, key: str, value: object, message: str):
        self.source, self.key, self.value = source, key, value
        super().__init__(f"{source}: key {key!r} = {value!r}: {message}")


@dataclasses.dataclass(frozen=True)
class Archetype:
    """Table 5.1 (defaults of the reference `MaxMinArchetype`): an archetype samples mixture models.

    Overlaps are the pairwise overlaps α of eq. 5.4 (twice the minimax error of the best linear
    classifier); radii, aspect ratios and group sizes are controlled by max-min sampling (App. 4A);
    `packing` is ρ_2D of the centre initialization; `linear_penalty_weight` (λ), `learning_rate` (η),
    `max_epoch` and `tol` drive the SGD of eqs. 5.7-5.9.
    """

    name: str = "archetype"
    n_clusters: int = 6
    dim: int = 2
    n_samples: int = 500
    aspect_ref: float = 1.5
    aspect_maxmin: float = 2.0
    radius_maxmin: float = 3.0
    max_overlap: float = 0.05
    min_overlap: float = 1e-3
    imbalance_ratio: float = 2.0
    distributions: tuple[str, ...] = ("normal", "exponential")
    distribution_proportions: tuple[float, ...] | None = None  # None: equal
    scale: float = 1.0
    packing: float = 0.1
    linear_penalty_weight: float = 0.01
    learning_rate: float = 0.5
    max_epoch: int = 500
    tol: float = 1e-5
    n_restarts: int = 3  # fresh centre initialisations when the SGD does not converge (repliclust 1.0.0)
    calibrate_tails: bool = True  # scale non-normal clusters to meet max_overlap (compass.clusters.realised)
    overlap_mode: str | None = None  # None: 'lda' if n_clusters * dim <= 10000, else 'c2c'
    description: str = ""

    def __post_init__(self):
        validate(self, "<archetype>")

    @property
    def mode(self) -> str:
        """The overlap approximation used by the loss (§5.3: LDA, or C2C for very large k·p)."""
        return self.overlap_mode or ("lda" if self.n_clusters * self.dim <= 10000 else "c2c")

    @property
    def proportions(self) -> tuple[float, ...]:
        props = self.distribution_proportions or (1.0,) * len(self.distributions)
        total = float(sum(props))
        return tuple(p / total for p in props)

    @classmethod
    def from_dict(cls, spec: Mapping, source: str = "<dict>") -> Archetype:
        """Validate a mapping of Table 5.1 parameters (unknown keys and bad values are errors)."""
        if not isinstance(spec, Mapping):
            raise ArchetypeError(source, "<root>", type(spec).__name__, "expected a mapping of archetype parameters")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, object] = {}
        for key, value in spec.items():
            if key not in fields:
                raise ArchetypeError(source, str(key), value, f"unknown parameter; allowed: {sorted(fields)}")
            values[key] = _coerce(source, key, value, fields[key].default)
        try:
            archetype = cls.__new__(cls)
            for name, f in fields.items():
                object.__setattr__(archetype, name, values.get(name, f.default))
        except TypeError as err:  # pragma: no cover - defensive
            raise ArchetypeError(source, "<root>", spec, str(err)) from err
        validate(archetype, source)
        return archetype

    @classmethod
    def from_yaml(cls, path: str | Path) -> Archetype:
        """One archetype from a YAML mapping (yaml.safe_load); `name` defaults to the file stem."""
        path = Path(path)
        try:
            spec = load_yaml(path.read_bytes(), str(path))
        except IngestError as err:  # not UTF-8, malformed YAML
            raise ArchetypeError(str(path), "<root>", None, f"line {err.row or '-'}: {err.reason}") from None
        if isinstance(spec, Mapping) and "name" not in spec:
            spec = {"name": path.stem, **spec}
        return cls.from_dict(spec, str(path))

    def to_dict(self) -> dict[str, object]:
        out = dataclasses.asdict(self)
        out["distributions"] = list(self.distributions)
        if self.distribution_proportions is not None:
            out["distribution_proportions"] = list(self.distribution_proportions)
        return out


def _coerce(source: str, key: str, value: object, default: object) -> object:
    """Type-check one value against its default's type (ints stay ints, lists become tuples)."""
    if key in ("distribution_proportions", "overlap_mode") and value is None:
        return None
    if key in ("distributions", "distribution_proportions"):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not value:
            raise ArchetypeError(source, key, value, "expected a non-empty list")
        if key == "distributions":
            return tuple(str(v) for v in value)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise ArchetypeError(source, key, value, "expected a list of numbers")
        return tuple(float(v) for v in value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ArchetypeError(source, key, value, "expected true or false")
        return value
    if isinstance(default, str) or default is None:
        if not isinstance(value, str):
            raise ArchetypeError(source, key, value, "expected a string")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArchetypeError(source, key, value, "expected a number")
    if not math.isfinite(value):
        raise ArchetypeError(source, key, value, "expected a finite number")
    if isinstance(default, int):
        if float(value) != int(value):
            raise ArchetypeError(source, key, value, "expected a whole number")
        return int(value)
    return float(value)


def validate(a: Archetype, source: str) -> None:
    """The §5.1 rules: 0 ≤ min_overlap < max_overlap ≤ 1, max-min ratios ≥ 1, aspect_ref ≥ 1, counts
    positive, at least one point per cluster, known distributions with non-negative proportions."""
    def bad(key: str, message: str) -> ArchetypeError:
        return ArchetypeError(source, key, getattr(a, key), message)

    for key, most in MAX_COUNTS.items():
        if not 1 <= getattr(a, key) <= most:
            raise bad(key, f"must be a positive whole number, at most {most:,}")
    if a.n_samples < a.n_clusters:
        raise bad("n_samples", f"must be at least n_clusters = {a.n_clusters} (one point per cluster)")
    if a.n_clusters * (a.n_clusters - 1) // 2 * a.dim**2 > MAX_PAIR_ENTRIES:
        raise bad("n_clusters", f"with dim = {a.dim}: n_clusters (n_clusters - 1) / 2 x dim^2 (the pairwise covariances "
                                f"of the centre fit) must be at most {MAX_PAIR_ENTRIES:,}")
    if a.n_samples * a.dim > MAX_POINT_ENTRIES:
        raise bad("n_samples", f"with dim = {a.dim}: n_samples x dim must be at most {MAX_POINT_ENTRIES:,}")
    if not 0 < a.max_overlap <= 1:
        raise bad("max_overlap", "must lie in (0, 1]")
    if not 0 <= a.min_overlap < a.max_overlap:
        raise bad("min_overlap", f"must satisfy 0 <= min_overlap < max_overlap = {a.max_overlap}")
    for key in ("aspect_ref", "aspect_maxmin", "radius_maxmin", "imbalance_ratio"):
        value = getattr(a, key)
        if not math.isfinite(value) or value < 1:
            raise bad(key, "must be a finite number >= 1")
    for key in ("scale", "learning_rate", "packing"):
        if not 0 < getattr(a, key) < math.inf:
            raise bad(key, "must be a finite positive number")
    if not 0 < a.linear_penalty_weight <= 1:
        raise bad("linear_penalty_weight", "must lie in (0, 1] (a linear term drives the loss to zero, §5.3)")
    if not 0 <= a.tol < math.inf:
        raise bad("tol", "must be a finite non-negative number")
    unknown = [d for d in a.distributions if d not in DISTRIBUTIONS]
    if unknown:
        raise ArchetypeError(source, "distributions", unknown[0], f"unknown distribution; supported: {sorted(DISTRIBUTIONS)}")
    props = a.distribution_proportions
    if props is not None and (len(props) != len(a.distributions) or not all(0 <= p < math.inf for p in props)
                              or sum(props) <= 0):
        raise bad("distribution_proportions", "must give one finite non-negative weight per distribution, not all zero")
    if a.overlap_mode is not None and a.overlap_mode not in OVERLAP_MODES:
        raise bad("overlap_mode", f"must be one of {OVERLAP_MODES}")
