"""Leave-pattern-out validation of the imputation of x_raw (§4.3), and the calibration of its noise.

The board's rows are imputed along a pattern: a current model has the core benchmarks and lacks the others.
Random held-out cells (the rank CV of `impute_low_rank`) never test that: a random cell's row keeps most of
its other cells. Here, for each missingness pattern P of the board's rows (observed set O_P, missing set M_P)
and each donor (a model observed on some of O_P and some of M_P), the donor is cut down to the pattern, its
cells outside O_P hidden, and the hidden cells it has in M_P are imputed from the rest: the error of imputing
a board row, measured where the truth is known. Per benchmark (in SD units of its observed column):

- rmse_imputed: the project's imputation (`impute_low_rank` at the rank it uses on the full matrix);
- rmse_mean: the column mean of the observed cells (a baseline that does not learn);
- rmse_one_factor: a one-factor imputation (rank 1, one general capability per model, ECI-style);
- rmse_in_sample: the rank-r fit's residual on the observed cells; rmse_random: a random 10 % of observed
  cells held out (what the rank CV sees);
- coverage90: share of held-out cells inside the nominal-90 % predictive interval (`predictive_sd`);
- noise_scale: the factor on the predictive sd that turns its nominal-90 % interval into a 90 % prediction
  interval of the standardized errors z = error / sd: z ~ N(0, s^2) with s^2 estimated by the mean of z^2 over
  n cells, so a new z falls within t_{0.95, n} s sqrt(1 + 1/n) with probability 0.9 (Student's t prediction
  interval); the factor is that over 1.645, at least 1 (the bootstrap's noise is never shrunk below the
  model's). From the benchmark's own cells when it has `MIN_CELLS`, else pooled over benchmarks, 1 where
  nothing is held out. Not the 90th percentile of |z|: on the ~10 cells per benchmark a bridging block gives,
  a percentile is the largest cell or two;
- coverage90_calibrated (in-sample) and coverage90_calibrated_cv (each donor's cells with the scales fitted
  without that donor: out of sample);
- noise_correlation: the correlation of one donor's calibrated errors across its held-out cells (an intraclass
  correlation, `error_correlation`). A row imputed from the wrong block is wrong on all its missing cells in the
  same direction, and the measures are weighted sums of a row's cells: the rank bootstrap draws that share of the
  noise once per model (`rank_uncertainty.imputation_draw`), or it would average the error away.

Every statistic weights a cell by how many board rows have its pattern, over the pattern's held-out cells:
the numbers are those of imputing the board's rows, not of whichever pattern has the most donors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from compass.mlcompass.imputation import holdout_cells, impute_hiding, impute_low_rank, predictive_sd_array

Z90 = 1.6448536269514722  # standard normal 95th percentile: a two-sided 90 % interval is +- Z90 sd
MIN_CELLS = 5  # a benchmark's own noise scale needs this many held-out cells; fewer take the pooled one
MAX_PATTERNS = 5  # the board's most frequent missingness patterns that are replicated

VALIDATION_COLUMNS = ["benchmark", "n_cells", "n_donors", "n_patterns", "rank", "rmse_imputed", "rmse_mean",
                      "rmse_one_factor", "rmse_in_sample", "rmse_random", "coverage90", "noise_scale",
                      "coverage90_calibrated", "coverage90_calibrated_cv", "no_better_than_mean", "noise_correlation"]


SUMMARY_COLUMNS = ["n_cells", "n_donors", "n_patterns", "rmse_imputed", "rmse_mean", "rmse_one_factor", "coverage90",
                   "coverage90_calibrated", "coverage90_calibrated_cv"]


@dataclass(frozen=True)
class HeldOut:
    """Held-out cells, one row each: benchmark, donor, pattern, and the errors / predictive sd in SD units."""

    cells: pd.DataFrame
    rank: int


def board_patterns(x_raw: pd.DataFrame, board: pd.Index, max_patterns: int = MAX_PATTERNS) -> list[tuple[tuple[str, ...], int]]:
    """The board rows' missingness patterns as (observed benchmarks, number of board rows), most frequent
    first; complete rows have none."""
    rows = x_raw.reindex(board.intersection(x_raw.index)).notna()
    rows = rows[~rows.all(axis=1)]
    counts = rows.apply(lambda r: tuple(rows.columns[r.to_numpy()]), axis=1).value_counts()
    return [(p, int(n)) for p, n in counts.items() if p][:max_patterns]


def pattern_cuts(x_raw: pd.DataFrame, board: pd.Index) -> list[tuple[int, int, str, list[str]]]:
    """Every (pattern, donor) of the board's patterns as (pattern number, its board rows, donor, the donor's cells
    that the cut hides: the benchmarks it has outside the pattern)."""
    observed = x_raw.notna()
    cuts = []
    for p, (kept, n_rows) in enumerate(board_patterns(x_raw, board)):
        lacking = [b for b in x_raw.columns if b not in kept]
        donors = observed.index[observed[list(kept)].any(axis=1) & observed[lacking].any(axis=1)]
        left = observed[lacking].sum()
        for donor in donors:
            if (left - observed.loc[donor, lacking]).min() < 3:
                continue  # a benchmark would have too few models left to impute from
            cuts.append((p, n_rows, donor, [b for b in lacking if observed.at[donor, b]]))
    return cuts


def pattern_holdout(x_raw: pd.DataFrame, board: pd.Index, seed: int = 0) -> HeldOut:
    """Leave-pattern-out errors (module docstring) of every cut (`pattern_cuts`). Each donor's cut-down matrix is
    refitted on its own; the refits run together (`impute_hiding`), once per distinct cut."""
    rank = impute_low_rank(x_raw, seed=seed).rank
    std = x_raw.std(axis=0, ddof=0)
    cuts = pattern_cuts(x_raw, board)
    if not cuts:
        return HeldOut(pd.DataFrame(columns=["benchmark", "donor", "pattern", "error", "error_mean",
                                             "error_one_factor", "sd", "weight"], dtype=float), rank)
    fits = {(donor, tuple(hidden)): i for i, (donor, hidden) in  # a cut shared by two patterns: one fit
            enumerate(dict.fromkeys((donor, tuple(hidden)) for *_, donor, hidden in cuts))}
    where = [(x_raw.index.get_loc(donor), x_raw.columns.get_indexer(list(hidden))) for donor, hidden in fits]
    imputed = impute_hiding(x_raw, where, rank)
    one = imputed if rank == 1 else impute_hiding(x_raw, where, 1)  # the same fits at rank 1
    values, scale = x_raw.to_numpy(float), std.to_numpy(float)
    errors = np.empty((len(fits), 4, x_raw.shape[1]))  # per fit, the donor's row of each error in SD units
    for i, ((r, cols), completed) in enumerate(zip(where, imputed)):
        completed_one = completed if rank == 1 else next(one)
        masked = values.copy()
        masked[r, cols] = np.nan
        truth = values[r]
        mean = np.nanmean(masked, axis=0)  # the column means without the hidden cells
        sd = predictive_sd_array(masked, completed, rank)[r]
        errors[i] = np.vstack([completed[r] - truth, mean - truth, completed_one[r] - truth, sd]) / scale
    fit = np.concatenate([np.full(len(hidden), fits[donor, tuple(hidden)]) for _, _, donor, hidden in cuts])
    column = np.concatenate([x_raw.columns.get_indexer(hidden) for *_, hidden in cuts])
    error, error_mean, error_one, sd = errors[fit, :, column].T
    sizes = [len(hidden) for *_, hidden in cuts]
    cells = pd.DataFrame({"benchmark": x_raw.columns[column], "donor": np.repeat([c[2] for c in cuts], sizes),
                          "pattern": np.repeat([c[0] for c in cuts], sizes),
                          "board_rows": np.repeat([c[1] for c in cuts], sizes),
                          "error": error, "error_mean": error_mean, "error_one_factor": error_one, "sd": sd})
    weight = cells["board_rows"] / cells.groupby("pattern")["pattern"].transform("size")
    return HeldOut(cells.drop(columns="board_rows").assign(weight=weight), rank)


def _scale(z2: np.ndarray, weight: np.ndarray) -> float:
    """max(1, the t prediction factor): s sqrt(1 + 1/n) t_{0.95, n} / Z90 with s^2 the weighted mean of z^2 and
    n its effective number of cells (Kish: (sum w)^2 / sum w^2)."""
    n = weight.sum() ** 2 / (weight ** 2).sum()
    s2 = np.average(z2, weights=weight)
    return max(1.0, float(np.sqrt(s2 * (1.0 + 1.0 / n)) * student_t.ppf(0.95, n) / Z90))


def noise_scales(cells: pd.DataFrame, benchmarks: pd.Index) -> pd.Series:
    """Per benchmark, the factor on the predictive sd that makes the nominal-90 % interval a 90 % prediction
    interval of the held-out z = error / sd (module docstring, `_scale`): own cells from MIN_CELLS on, else
    pooled over benchmarks; 1 where nothing is held out."""
    z2 = ((cells["error"] / cells["sd"]) ** 2).replace(np.inf, np.nan)
    usable = cells.assign(z2=z2).dropna(subset=["z2"])
    if usable.empty:
        return pd.Series(1.0, index=benchmarks, name="noise_scale")
    pooled = _scale(usable["z2"].to_numpy(float), usable["weight"].to_numpy(float))
    own = {b: _scale(c["z2"].to_numpy(float), c["weight"].to_numpy(float))
           for b, c in usable.groupby("benchmark") if len(c) >= MIN_CELLS}
    return pd.Series(own, dtype=float).reindex(benchmarks).fillna(pooled).rename("noise_scale")


def error_correlation(cells: pd.DataFrame, scale: pd.Series) -> float:
    """Intraclass correlation of the calibrated standardized errors z = error / (sd * scale) within a donor's
    pattern: sum over pairs (i != j) of one group of z_i z_j over the number of such pairs, divided by the mean z^2
    (errors of mean 0), clipped to [0, 1]; 0 when no group holds two cells."""
    z = (cells["error"] / (cells["sd"] * cells["benchmark"].map(scale))).replace([np.inf, -np.inf], np.nan)
    usable = cells.assign(z=z).dropna(subset=["z"])
    groups = usable.groupby(["donor", "pattern"])["z"]
    total, squares, size = groups.sum(), groups.apply(lambda v: float((v ** 2).sum())), groups.size()
    pairs = float((size * (size - 1)).sum())
    if pairs == 0 or not (usable["z"] ** 2).mean() > 0:
        return 0.0
    cross = float((total ** 2 - squares).sum()) / pairs
    return float(np.clip(cross / (usable["z"] ** 2).mean(), 0.0, 1.0))


def _covered(cells: pd.DataFrame, scale: pd.Series | float = 1.0) -> pd.Series:
    factor = cells["benchmark"].map(scale) if isinstance(scale, pd.Series) else scale
    return cells["error"].abs() <= Z90 * cells["sd"] * factor


def _cv_covered(cells: pd.DataFrame, benchmarks: pd.Index) -> pd.Series:
    """Coverage of each cell with the scales fitted on the other donors' cells (leave-one-donor-out)."""
    out = pd.Series(False, index=cells.index)
    for donor, own in cells.groupby("donor"):
        out[own.index] = _covered(own, noise_scales(cells[cells["donor"] != donor], benchmarks))
    return out


def _mean(values: pd.Series, weight: pd.Series) -> float:
    return float(np.average(values, weights=weight)) if len(values) else np.nan


def _rmse(values: pd.Series, weight: pd.Series) -> float:
    return float(np.sqrt(_mean(values ** 2, weight))) if len(values) else np.nan


def in_sample_errors(x_raw: pd.DataFrame, rank: int, seed: int = 0, holdout: float = 0.1) -> pd.DataFrame:
    """Per benchmark, in SD units: the rank-r reconstruction's RMSE on the observed cells (in sample) and the
    imputation's RMSE on a random `holdout` share of the observed cells (what random-cell checks see)."""
    std = x_raw.std(axis=0, ddof=0).to_numpy(float)
    values = x_raw.to_numpy(float)
    observed = ~np.isnan(values)
    completed = impute_low_rank(x_raw, rank=rank, seed=seed).completed.to_numpy(float)
    centred = completed - completed.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    fit = completed.mean(axis=0) + (u[:, :rank] * s[:rank]) @ vt[:rank]
    in_sample = np.sqrt(np.nanmean(np.where(observed, (fit - values) / std, np.nan) ** 2, axis=0))
    hr, hc = holdout_cells(observed, holdout, np.random.default_rng(seed))
    masked = x_raw.copy()
    masked.values[hr, hc] = np.nan
    guess = impute_low_rank(masked, rank=rank, seed=seed).completed.to_numpy(float)
    random = pd.Series((guess[hr, hc] - values[hr, hc]) / std[hc]).pow(2).groupby(x_raw.columns[hc]).mean() ** 0.5
    return pd.DataFrame({"rmse_in_sample": in_sample, "rmse_random": random.reindex(x_raw.columns).to_numpy()},
                        index=x_raw.columns)


def _summary(cells: pd.DataFrame, scale: pd.Series, cv: pd.Series) -> pd.Series:
    """One group of held-out cells: counts, RMSEs, coverage before / after `scale` and with `cv`'s coverage."""
    w = cells["weight"]
    return pd.Series({
        "n_cells": len(cells), "n_donors": cells["donor"].nunique(), "n_patterns": cells["pattern"].nunique(),
        "rmse_imputed": _rmse(cells["error"], w), "rmse_mean": _rmse(cells["error_mean"], w),
        "rmse_one_factor": _rmse(cells["error_one_factor"], w), "coverage90": _mean(_covered(cells), w),
        "coverage90_calibrated": _mean(_covered(cells, scale), w), "coverage90_calibrated_cv": _mean(cv[cells.index], w),
    })


def validation_table(x_raw: pd.DataFrame, board: pd.Index, seed: int = 0, held: HeldOut | None = None) -> pd.DataFrame:
    """compass.imputation_validation of one case: one row per benchmark of x_raw (`VALIDATION_COLUMNS`);
    `held`: its `pattern_holdout`, when already computed."""
    held = held or pattern_holdout(x_raw, board, seed)
    columns = pd.Index(x_raw.columns)
    scale = noise_scales(held.cells, columns)
    cv = _cv_covered(held.cells, columns)
    per = {b: _summary(c, scale, cv) for b, c in held.cells.groupby("benchmark")}
    table = pd.DataFrame(list(per.values()), index=list(per), columns=SUMMARY_COLUMNS, dtype=float).reindex(columns).join(
        in_sample_errors(x_raw, max(held.rank, 1), seed))
    for key in ("n_cells", "n_donors", "n_patterns"):
        table[key] = table[key].fillna(0).astype(int)
    table["rank"] = held.rank
    table["noise_scale"] = scale
    table["no_better_than_mean"] = table["rmse_imputed"] >= table["rmse_mean"]
    table["noise_correlation"] = error_correlation(held.cells, scale)
    return table.rename_axis("benchmark").reset_index()[VALIDATION_COLUMNS]


def pooled_summary(held: HeldOut, benchmarks: pd.Index, pattern: int | None = None) -> dict[str, float]:
    """`_summary` over every held-out cell (or one pattern's), with the scales fitted on all of them."""
    scale = noise_scales(held.cells, benchmarks)
    cv = _cv_covered(held.cells, benchmarks)
    cells = held.cells if pattern is None else held.cells[held.cells["pattern"] == pattern]
    return _summary(cells, scale, cv).to_dict()
