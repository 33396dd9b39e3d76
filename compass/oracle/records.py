"""Validate one dataset's query records and pack them into dense oracle arrays.

Seed paper 002 ("The Capability Frontier"), §3: prompts n ∈ [N], models l ∈ [L],
generations g ∈ [G], binary correctness φ_nlg and a cost per generation. Every
estimator in `compass.oracle` works on the dense arrays built here, never on the
long table, so the hot paths are plain numpy.

Generation rule: each model may have its own G_l, but every (prompt, model) cell
of that model must carry exactly G_l generations, numbered 0..G_l−1, and every
model must answer every prompt. Anything else raises ValueError.

Two builders: `build_arrays` packs the long table into dense per-generation tensors
(every estimator can run on them); `from_cells` takes per-cell aggregates (count,
successes, mean cost per (prompt, model), e.g. a DuckDB group-by) and builds only the
(N, L) arrays. Estimators that need only k_nl, G_l and the cell costs (the naive curve,
the bias-corrected oracle, ...) give the same numbers on both; the per-generation ones
(split-sample, the PGM's cost model) raise on `from_cells` arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

REQUIRED_COLUMNS = ("query_id", "model_id", "generation", "correct")


@dataclass(frozen=True)
class OracleArrays:
    """Dense per-cell view of one dataset.

    successes[n, l]  number of correct generations k_nl
    trials[n, l]     number of generations G_l (constant within a model)
    outcomes[n,l,g]  φ_nlg ∈ {0, 1}, NaN for g ≥ G_l (None when built from per-cell
                     aggregates, `from_cells`)
    gen_cost[n,l,g]  cost of generation g in USD (per-model cost when the records
                     carry none), NaN for g ≥ G_l (None when built by `from_cells`)
    topics[n]        topic label per prompt (None when the dataset has none)
    mean_cost[n, l]  mean cost per query of each cell when given directly
                     (`from_cells`); None: computed from gen_cost (`cell_cost`)
    """

    prompt_ids: np.ndarray
    model_ids: np.ndarray
    successes: np.ndarray
    trials: np.ndarray
    outcomes: np.ndarray | None
    gen_cost: np.ndarray | None
    topics: np.ndarray | None = None
    mean_cost: np.ndarray | None = None

    def __post_init__(self) -> None:
        """Share memory where the values repeat (issue 45: at 10^8 records each (N, L) float array is 0.8 GB):
        `trials`, constant within a model, becomes a read-only broadcast of its first row; at one generation per
        cell `successes` (k_nl = φ_nl0) becomes a view of `outcomes`. Only when the values are equal, so every
        estimator reads the same numbers (the same bits). Views are read-only: a write would change the array they
        share memory with."""
        trials = self.trials
        if trials.ndim == 2 and len(trials) > 1 and trials.strides[0] != 0 and (trials == trials[0]).all():
            object.__setattr__(self, "trials", np.broadcast_to(trials[0].copy(), trials.shape))
        out = self.outcomes
        if (out is not None and out.ndim == 3 and out.shape[2] == 1 and out.dtype == self.successes.dtype
                and not np.shares_memory(out, self.successes) and np.array_equal(out[:, :, 0], self.successes)):
            view = out[:, :, 0]
            view.flags.writeable = False
            object.__setattr__(self, "successes", view)

    @property
    def n_prompts(self) -> int:
        return int(self.successes.shape[0])

    @property
    def n_models(self) -> int:
        return int(self.successes.shape[1])

    @property
    def generations(self) -> np.ndarray:
        """G_l per model, shape (L,)."""
        return self.trials[0].astype(int)

    @property
    def min_generations(self) -> int:
        return int(self.trials.min())

    @property
    def p_hat(self) -> np.ndarray:
        """Cell sample means φ̄_nl = k_nl / G_l (§3, eq. 5)."""
        return self.successes / self.trials

    @cached_property
    def cell_cost(self) -> np.ndarray:
        """Mean cost per query of each cell, shape (N, L); computed once per instance (arrays are read-only by convention)."""
        if self.mean_cost is not None:
            return self.mean_cost
        if self.gen_cost.shape[2] == 1:  # the mean of one generation is its cost (NaN where none): a view, no copy
            view = self.gen_cost[:, :, 0]
            view.flags.writeable = False  # a write would change gen_cost
            return view
        return np.nanmean(self.gen_cost, axis=2)

    def per_generation(self, what: str) -> tuple[np.ndarray, np.ndarray]:
        """(outcomes, gen_cost) for an estimator that needs single generations; ValueError naming `what` when the
        arrays were built from per-cell aggregates (`from_cells`)."""
        if self.outcomes is None or self.gen_cost is None:
            raise ValueError(f"{what} needs per-generation outcomes and costs; these arrays hold per-cell aggregates "
                             "only (from_cells): build them with build_arrays")
        return self.outcomes, self.gen_cost

    def take(self, idx: np.ndarray) -> OracleArrays:
        """Subset (or bootstrap-resample) prompts by integer index."""
        return OracleArrays(
            prompt_ids=self.prompt_ids[idx],
            model_ids=self.model_ids,
            successes=self.successes[idx],
            trials=_subset_trials(self.trials, idx, slice(None), len(self.prompt_ids[idx])),
            outcomes=None if self.outcomes is None else self.outcomes[idx],
            gen_cost=None if self.gen_cost is None else self.gen_cost[idx],
            topics=None if self.topics is None else self.topics[idx],
            mean_cost=None if self.mean_cost is None else self.mean_cost[idx],
        )

    def select_models(self, keep: np.ndarray) -> OracleArrays:
        """Keep the models where the boolean mask `keep` (L,) is true (at least 2)."""
        keep = np.asarray(keep, dtype=bool)
        if keep.sum() < 2:
            raise ValueError(f"oracle routing needs at least 2 models, {int(keep.sum())} would remain")
        if keep.all():  # the same arrays, not a copy (at 10^8 records a copy is gigabytes)
            return self
        return OracleArrays(
            prompt_ids=self.prompt_ids,
            model_ids=self.model_ids[keep],
            successes=self.successes[:, keep],
            trials=_subset_trials(self.trials, slice(None), keep, self.n_prompts),
            outcomes=None if self.outcomes is None else self.outcomes[:, keep],
            gen_cost=None if self.gen_cost is None else self.gen_cost[:, keep],
            topics=self.topics,
            mean_cost=None if self.mean_cost is None else self.mean_cost[:, keep],
        )


def _subset_trials(trials: np.ndarray, rows: np.ndarray | slice, columns: np.ndarray | slice,
                   n_rows: int) -> np.ndarray:
    """trials[rows, columns] (`n_rows` rows), still a broadcast of one row when trials is one (no (N, L) copy)."""
    if trials.strides[0] != 0:
        return trials[rows, columns]
    row = trials[0, columns]
    return np.broadcast_to(row, (n_rows, row.size))


def drop_short_models(arrays: OracleArrays) -> OracleArrays:
    """Keep only the models with the largest G, so every estimator sees min G = max G.

    Mixed-G datasets (e.g. two single-sample models among 10-sample ones) otherwise
    pull every subset-based estimator down to G′ = 1.
    """
    return arrays.select_models(arrays.generations == arrays.generations.max())


def from_arrays(
    outcomes: np.ndarray,
    cost: np.ndarray,
    model_ids: list[str] | None = None,
    topics: np.ndarray | None = None,
) -> OracleArrays:
    """Build OracleArrays from a complete (N, L, G) 0/1 tensor and a cost.

    `cost` is per model (L,), per cell (N, L) or per generation (N, L, G).
    """
    outcomes = np.asarray(outcomes, dtype=float)
    if outcomes.ndim != 3:
        raise ValueError(f"outcomes must be (n_prompts, n_models, generations), got shape {outcomes.shape}")
    n, l, g = outcomes.shape
    if l < 2:
        raise ValueError(f"oracle routing needs at least 2 models, got {l}")
    if not np.isin(outcomes, (0.0, 1.0)).all():
        raise ValueError("outcomes must be 0/1 correctness values")
    cost = np.asarray(cost, dtype=float)
    shapes = {1: (1, l, 1), 2: (n, l, 1), 3: (n, l, g)}
    if cost.ndim not in shapes or cost.size != np.prod(shapes[cost.ndim]):
        raise ValueError(f"cost must have shape (L,), (N, L) or (N, L, G); got {cost.shape}")
    gen_cost = np.broadcast_to(cost.reshape(shapes[cost.ndim]), (n, l, g))
    if np.any(gen_cost < 0):
        raise ValueError("cost must be non-negative")
    return OracleArrays(
        prompt_ids=np.arange(n),
        model_ids=np.asarray(model_ids if model_ids is not None else [f"m{i}" for i in range(l)]),
        successes=outcomes.sum(axis=2),
        trials=np.full((n, l), float(g)),
        outcomes=outcomes,
        gen_cost=np.array(gen_cost, dtype=float),
        topics=None if topics is None else np.asarray(topics),
    )


def build_arrays(
    records: pd.DataFrame,
    model_cost: pd.Series | dict[str, float] | None = None,
    dataset: str = "dataset",
) -> OracleArrays:
    """Validate canonical query records and return dense OracleArrays.

    `records` has columns query_id, model_id, generation (0..G_l−1), correct
    (0/1), and optionally cost_usd and category. When cost_usd is absent or all
    null, `model_cost` (USD per query, indexed by model_id) supplies a constant
    cost per model. Raises ValueError naming the dataset and the problem.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(f"{dataset}: records lack required columns {missing}")
    if records.empty:
        raise ValueError(f"{dataset}: no records")
    df = records
    q_codes, prompt_ids = _factorize(df["query_id"])
    m_codes, model_ids = _factorize(df["model_id"])
    nulls = [c for c, bad in (("query_id", (q_codes < 0).any()), ("model_id", (m_codes < 0).any()),
                              ("generation", df["generation"].isna().any()), ("correct", df["correct"].isna().any()))
             if bad]
    if nulls:
        raise null_values(dataset, nulls)
    correct = df["correct"].to_numpy(dtype=float)
    not_binary = (correct != 0.0) & (correct != 1.0)
    if not_binary.any():
        raise not_binary_correct(dataset, correct[not_binary])
    gen = df["generation"].to_numpy()
    if gen.dtype.kind not in "iu":
        if np.any(gen != np.floor(gen)):
            raise not_integer_generations(dataset)
        gen = gen.astype(np.int64)
    if np.any(gen < 0):
        raise not_integer_generations(dataset)

    n, l = len(prompt_ids), len(model_ids)
    if l < 2:
        raise too_few_models(dataset, model_ids)
    g_max = int(gen.max()) + 1

    cell = q_codes.astype(np.int64) * l + m_codes
    flat = cell * g_max + gen
    filled = np.zeros(n * l * g_max, dtype=bool)
    filled[flat] = True
    if np.count_nonzero(filled) < flat.size:
        raise duplicate_records(dataset)
    present = filled.reshape(n, l, g_max)
    outcomes = np.full(n * l * g_max, np.nan)
    outcomes[flat] = correct
    outcomes = outcomes.reshape(n, l, g_max)
    np.add(outcomes, 0.0, out=outcomes)  # -0.0 correct as +0.0 (successes is a view of outcomes at G = 1)

    per_cell = present.sum(axis=2)
    g_model = per_cell.max(axis=0)
    generation_rule(per_cell, g_model, [present[:, j, g_model[j]:].any() for j in range(l)], model_ids, dataset)

    gen_cost = _generation_cost(df, flat, n, l, g_max, model_ids, present, model_cost, dataset)
    topics = None
    if "category" in df.columns and df["category"].notna().any():
        first = np.empty(n, dtype=int)
        first[q_codes[::-1]] = np.arange(q_codes.size)[::-1]  # last write wins: each prompt's first row
        topics = df["category"].to_numpy()[first]

    return OracleArrays(
        prompt_ids=np.asarray(prompt_ids),
        model_ids=np.asarray(model_ids),
        successes=np.bincount(cell, weights=correct, minlength=n * l).reshape(n, l),
        trials=per_cell.astype(float),
        outcomes=outcomes,
        gen_cost=gen_cost,
        topics=topics,
    )


def null_values(dataset: str, columns: list[str]) -> ValueError:
    """Records of the dataset hold nulls in `columns`."""
    return ValueError(f"{dataset}: null values in {columns}")


def not_binary_correct(dataset: str, values: np.ndarray) -> ValueError:
    """Correctness values other than 0/1 (the five smallest named)."""
    return ValueError(f"{dataset}: column 'correct' must be 0/1, found values {np.unique(values)[:5]}")


def not_integer_generations(dataset: str) -> ValueError:
    return ValueError(f"{dataset}: column 'generation' must hold integers >= 0")


def too_few_models(dataset: str, model_ids) -> ValueError:
    return ValueError(f"{dataset}: oracle routing needs at least 2 models, found only {list(model_ids)}")


def duplicate_records(dataset: str) -> ValueError:
    return ValueError(f"{dataset}: duplicate (query_id, model_id, generation) rows")


def generation_rule(per_cell: np.ndarray, g_model: np.ndarray, beyond: list[bool], model_ids, dataset: str) -> None:
    """ValueError naming the first model (in `model_ids` order) whose cells do not all carry its G_l (`per_cell`
    (N, L) records per cell, `g_model` the largest) or whose generations reach past G_l − 1 (`beyond`)."""
    generation_counts_rule(g_model, (per_cell != g_model).sum(axis=0), beyond, model_ids, dataset)


def generation_counts_rule(g_model: np.ndarray, uneven: np.ndarray, beyond, model_ids, dataset: str) -> None:
    """`generation_rule` on its counts per model: `uneven` the cells whose records are not `g_model`."""
    for j in range(len(model_ids)):
        if uneven[j]:
            raise ValueError(
                f"{dataset}: model {model_ids[j]!r} has {g_model[j]} generations on some prompts but not on "
                f"{int(uneven[j])} prompt(s); every (prompt, model) cell must carry that model's G"
            )
        if beyond[j]:
            raise ValueError(f"{dataset}: model {model_ids[j]!r} generations are not numbered 0..{g_model[j] - 1}")


def _factorize(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes (−1 for null) and the sorted distinct values, as `pd.factorize(sort=True)`.

    A categorical column (e.g. dictionary-encoded on read) is recoded from its
    categories alone, without hashing the 10^6–10^7 row values again.
    """
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return pd.factorize(column, sort=True)
    codes = column.cat.codes.to_numpy()
    categories = column.cat.categories
    used = np.bincount(codes + 1, minlength=len(categories) + 1)[1:] > 0  # shift: null code −1 → bin 0
    order = np.flatnonzero(used)[np.argsort(categories[used].to_numpy(), kind="stable")]
    rank = np.full(len(categories) + 1, -1, dtype=np.int64)  # last slot: code −1 stays −1
    rank[order] = np.arange(order.size)
    return rank[codes], pd.Index(categories[order].to_numpy())


def _generation_cost(
    df: pd.DataFrame,
    flat: np.ndarray,
    n: int,
    l: int,
    g_max: int,
    model_ids: pd.Index,
    present: np.ndarray,
    model_cost: pd.Series | dict[str, float] | None,
    dataset: str,
) -> np.ndarray:
    """Per-generation cost: record cost_usd where given, else the per-model series."""
    if "cost_usd" in df.columns and df["cost_usd"].notna().all():
        c = df["cost_usd"].to_numpy(dtype=float)
        if np.any(c < 0):
            raise ValueError(f"{dataset}: negative cost_usd in records")
        out = np.full(n * l * g_max, np.nan)
        out[flat] = c
        return out.reshape(n, l, g_max)
    if "cost_usd" in df.columns and df["cost_usd"].notna().any():
        raise ValueError(f"{dataset}: cost_usd is null on some records but not all; fill it or drop it")
    per_model = model_costs_array(model_ids, model_cost, dataset)
    out = np.broadcast_to(per_model[None, :, None], (n, l, g_max)).copy()
    out[~present] = np.nan
    return out


CELL_COLUMNS = ("query_id", "model_id", "rows", "generations", "gen_min", "gen_max", "fractional", "null_rows",
                "non_binary", "successes", "cost", "cost_rows", "cost_min")


def from_cells(
    cells: pd.DataFrame,
    model_cost: pd.Series | dict[str, float] | None = None,
    dataset: str = "dataset",
) -> OracleArrays:
    """OracleArrays from per-(prompt, model) aggregates of the query records, without per-generation tensors.

    `cells` has one row per (query_id, model_id) pair found in the records, with
    rows          the number of records of the cell
    generations   the number of distinct non-null generation values among them
    gen_min, gen_max  their smallest and largest generation
    fractional    records whose generation is not a whole number
    null_rows     records with a null generation or correct
    non_binary    records whose correct is neither 0 nor 1
    successes     the sum of correct (k_nl)
    cost          the mean cost_usd (NaN when the cell has none)
    cost_rows, cost_min  the records with a cost_usd and the smallest cost_usd
    (`resources.oracle_cells` computes them with one DuckDB group-by). The rules and
    messages are those of `build_arrays`, which returns the same successes, trials,
    ids and (to rounding of the mean) cell costs; outcomes and gen_cost are None, so
    only estimators that need no single generation run on the result (`per_generation`).
    Topics are not carried (None).
    """
    missing = [c for c in CELL_COLUMNS if c not in cells.columns]
    if missing:
        raise ValueError(f"{dataset}: cell aggregates lack columns {missing}")
    if cells.empty:
        raise ValueError(f"{dataset}: no records")
    q_codes, prompt_ids = _factorize(cells["query_id"])
    m_codes, model_ids = _factorize(cells["model_id"])
    nulls = [c for c, bad in (("query_id", (q_codes < 0).any()), ("model_id", (m_codes < 0).any())) if bad]
    null_rows = cells["null_rows"].to_numpy()
    if null_rows.any():
        nulls.append("generation or correct")
    if nulls:
        raise ValueError(f"{dataset}: null values in {nulls}")
    if cells["non_binary"].to_numpy().any():
        raise ValueError(f"{dataset}: column 'correct' must be 0/1")
    rows = cells["rows"].to_numpy(dtype=np.int64)
    if np.any(cells["gen_min"].to_numpy() < 0) or cells["fractional"].to_numpy().any():
        raise ValueError(f"{dataset}: column 'generation' must hold integers >= 0")
    if np.any(cells["generations"].to_numpy() < rows):
        raise ValueError(f"{dataset}: duplicate (query_id, model_id, generation) rows")
    n, l = len(prompt_ids), len(model_ids)
    if l < 2:
        raise ValueError(f"{dataset}: oracle routing needs at least 2 models, found only {list(model_ids)}")

    cell = q_codes.astype(np.int64) * l + m_codes
    per_cell = np.zeros(n * l, dtype=np.int64)
    per_cell[cell] = rows
    per_cell = per_cell.reshape(n, l)
    g_model = per_cell.max(axis=0)
    numbered = np.ones(n * l, dtype=bool)
    numbered[cell] = cells["gen_max"].to_numpy() == rows - 1
    numbered = numbered.reshape(n, l)
    for j in range(l):
        if np.any(per_cell[:, j] != g_model[j]):
            bad = int(np.sum(per_cell[:, j] != g_model[j]))
            raise ValueError(
                f"{dataset}: model {model_ids[j]!r} has {g_model[j]} generations on some prompts but not on "
                f"{bad} prompt(s); every (prompt, model) cell must carry that model's G"
            )
        if not numbered[:, j].all():
            raise ValueError(f"{dataset}: model {model_ids[j]!r} generations are not numbered 0..{g_model[j] - 1}")

    successes = np.zeros(n * l)
    successes[cell] = cells["successes"].to_numpy(dtype=float)
    cost_rows = cells["cost_rows"].to_numpy()
    if np.array_equal(cost_rows, rows):
        if np.any(cells["cost_min"].to_numpy(dtype=float) < 0):
            raise ValueError(f"{dataset}: negative cost_usd in records")
        mean_cost = np.empty(n * l)
        mean_cost[cell] = cells["cost"].to_numpy(dtype=float)
        mean_cost = mean_cost.reshape(n, l)
    elif cost_rows.any():
        raise ValueError(f"{dataset}: cost_usd is null on some records but not all; fill it or drop it")
    else:
        mean_cost = np.broadcast_to(model_costs_array(model_ids, model_cost, dataset)[None, :], (n, l)).copy()
    return OracleArrays(
        prompt_ids=np.asarray(prompt_ids),
        model_ids=np.asarray(model_ids),
        successes=successes.reshape(n, l),
        trials=per_cell.astype(float),
        outcomes=None,
        gen_cost=None,
        mean_cost=mean_cost,
    )


def model_costs_array(model_ids: pd.Index, model_cost: pd.Series | dict[str, float] | None, dataset: str) -> np.ndarray:
    """The per-model cost of every model (records without cost_usd); ValueError naming what is missing."""
    if model_cost is None:
        raise ValueError(f"{dataset}: records carry no cost_usd and no per-model cost was passed")
    mc = pd.Series(model_cost, dtype=float)
    absent = [m for m in model_ids if m not in mc.index or pd.isna(mc[m])]
    if absent:
        raise ValueError(f"{dataset}: no per-model cost for models {absent}")
    per_model = mc.reindex(model_ids).to_numpy(dtype=float)
    if np.any(per_model < 0):
        raise ValueError(f"{dataset}: negative per-model cost for {list(model_ids[per_model < 0])}")
    return per_model
