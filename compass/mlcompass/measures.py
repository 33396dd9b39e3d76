"""Measure extraction x_raw -> x (ML Compass §4.3 and EC §8.3).

Pipeline, following the paper:
  1. column-standardize the model x benchmark matrix (§4.3, X~_raw); missing cells are
     filled first by low-rank PCA-EM (compass.mlcompass.imputation; our addition, the
     paper's matrices were complete);
  2. choose the number of factors I from explained variance and parallel analysis (§4.3
     "standard criteria (explained variance and scree plots)"; Horn's parallel analysis
     is written here with numpy);
  3. fit the common factor model X~ = F L^T + E with factor_analyzer (minres) and promax
     rotation (EC §8.3, Hendrickson & White 1964);
  4. sparsify L: zero loadings below a threshold and keep at most a fixed number of
     factors per benchmark (EC §8.3);
  5. factor scores (Bartlett scores from the sparsified pattern; see `bartlett_scores`) min-max
     scaled to [0, 1] per factor across models (§4.3, footnote 5);
  6. keep factor identity C1..Ck stable across refreshes: rotate a refit toward the previous
     loadings (oblique Procrustes) and fix signs by the case's anchor benchmarks
     (compass.mlcompass.factor_alignment); what a measure means is named and checked in
     compass.mlcompass.measure_names.

The paper reports neither the sparsification threshold nor the per-variable cap; the
defaults below (0.30, the conventional salience cut-off, and 2) are ours.

Scale: above `EXACT_MAX_MODELS` models (1,000; both real cases are below) the fast
path is taken: the imputation's k x k passes and subset rank CV (see
compass.mlcompass.imputation) and Wishart draws in parallel analysis. Factor fits always
run on the k x k correlation matrix. On a 20,000 x 8 catalog with a third of the cells
missing, measure extraction takes ~1 s on one core instead of ~18 s.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from factor_analyzer import FactorAnalyzer
from factor_analyzer.utils import corr as fa_corr
from scipy.stats import wishart

from compass.mlcompass.factor_alignment import (
    MIN_CONGRUENCE, align_loadings, anchor_signs, congruence_with, factor_names, factor_number, held_out_rotation,
    target_rotation,
)
from compass.mlcompass.imputation import EXACT_MAX_MODELS, ImputationResult, impute_low_rank, validate_matrix

#: Cumulative common variance a classical (unrotated) fit must reach. EC Table 8: the
#: paper's choices I=2 (PRISM, 0.907) and I=3 (HealthBench, 0.805) are the smallest I
#: reaching 0.80 in the "Classical" column.
DEFAULT_VARIANCE_TARGET = 0.80


@dataclass(frozen=True)
class MeasureResult:
    """Output of `extract_measures`.

    loadings: long DataFrame [benchmark, factor, loading], nonzero sparsified loadings.
    measures: DataFrame indexed by model_id, columns C1..Ck, values in [0, 1].
    explained_variance: DataFrame [factor, proportion, cumulative] from sparsified loadings.
    parallel_analysis: DataFrame [component, eigenvalue, random_eigenvalue, above_random].
    congruence: signed Tucker phi of each factor with its namesake in `previous_loadings` over the
      shared benchmarks (Series indexed by factor, NaN for a new factor), None when no previous run was given;
      out of sample where the factors were rotated toward the previous ones (`held_out_rotation`: each
      benchmark's loadings from a rotation fitted without it), what decides whether a measure keeps its identity.
    congruence_in_sample: the same phi of the published (rotated) pattern itself, inflated by the rotation's fit.
    """

    loadings: pd.DataFrame
    measures: pd.DataFrame
    n_factors: int
    explained_variance: pd.DataFrame
    parallel_analysis: pd.DataFrame
    imputed_fraction: float
    imputation_rank: int
    congruence: pd.Series | None = None
    congruence_in_sample: pd.Series | None = None

    def loading_matrix(self) -> pd.DataFrame:
        """Wide loadings (index benchmark, columns factor), zeros where sparsified away."""
        wide = self.loadings.pivot(index="benchmark", columns="factor", values="loading")
        return wide.reindex(columns=list(self.measures.columns)).fillna(0.0)


def standardize(x: pd.DataFrame) -> pd.DataFrame:
    """Column z-scores (zero mean, unit population variance), §4.3 X~_raw."""
    return (x - x.mean(axis=0)) / x.std(axis=0, ddof=0)


def standardized_input(x_raw: pd.DataFrame, seed: int = 0, fast: bool = False) -> tuple[ImputationResult, np.ndarray]:
    """Step 1 of the pipeline: x_raw with missing cells imputed (low-rank PCA-EM), then column-standardized
    (§4.3, X~_raw). Returns the imputation and the n x p standardized matrix."""
    imputation = impute_low_rank(x_raw, seed=seed, fast=fast)
    return imputation, standardize(imputation.completed).to_numpy()


def parallel_analysis(
    z: np.ndarray, n_iter: int = 100, quantile: float = 0.95, seed: int = 0, method: str = "auto"
) -> pd.DataFrame:
    """Horn's (1965) parallel analysis, own numpy implementation.

    Compares eigenvalues of the sample correlation matrix with the `quantile` of
    eigenvalues from `n_iter` random correlation matrices of n x p Gaussian data (n, p =
    z.shape). `above_random` marks the leading run of components whose eigenvalue exceeds
    the random reference.

    `method` says how the random correlation matrices are drawn:
      - "data": simulate each n x p standard normal matrix and take its correlation
        matrix (Horn's construction; O(n p^2) per draw);
      - "wishart": draw the centred cross-product matrix S = Xc'Xc directly from its law,
        Wishart_p(n - 1, I) (scipy.stats.wishart, Bartlett decomposition), and scale it to
        a correlation matrix D^-1/2 S D^-1/2. Correlation matrices of Gaussian data with
        unknown mean are exactly these, so the reference has the same distribution as with
        "data" for every n, at O(p^3) per draw; only the Monte Carlo draws differ (the
        95% reference moves within its own simulation error: its seed-to-seed sd is
        ~0.001 with either method at 20,000 x 8, 100 draws);
      - "auto": "data" up to `EXACT_MAX_MODELS` models (so small catalogs keep their
        reference eigenvalues bit for bit), "wishart" above, where "data" would cost
        n_iter x n x p normal draws (0.4 s of 100 draws at 20,000 x 8 vs 3 ms).
    """
    n, p = z.shape
    if method == "auto":
        method = "data" if n <= EXACT_MAX_MODELS else "wishart"
    if method not in ("data", "wishart"):
        raise ValueError(f"parallel analysis method must be 'auto', 'data' or 'wishart', got {method!r}")
    observed = np.sort(np.linalg.eigvalsh(np.corrcoef(z, rowvar=False)))[::-1]
    rng = np.random.default_rng(seed)
    if method == "data":
        random = np.empty((n_iter, p))
        for i in range(n_iter):
            sim = rng.standard_normal((n, p))
            random[i] = np.sort(np.linalg.eigvalsh(np.corrcoef(sim, rowvar=False)))[::-1]
    else:
        cross = wishart(df=n - 1, scale=np.eye(p)).rvs(size=n_iter, random_state=rng).reshape(n_iter, p, p)
        sd = np.sqrt(np.diagonal(cross, axis1=1, axis2=2))
        random = np.sort(np.linalg.eigvalsh(cross / sd[:, :, None] / sd[:, None, :]), axis=1)[:, ::-1]
    reference = np.quantile(random, quantile, axis=0)
    above = np.cumprod(observed > reference).astype(bool)
    return pd.DataFrame(
        {
            "component": np.arange(1, p + 1),
            "eigenvalue": observed,
            "random_eigenvalue": reference,
            "above_random": above,
        }
    )


def correlation(z: pd.DataFrame | np.ndarray) -> np.ndarray:
    """The correlation matrix exactly as `FactorAnalyzer.fit` computes it from data (on a
    C-ordered copy), so fits on it are bit-identical to fits on the data: L-BFGS-B stops
    on a tolerance, and a rounding-level change of its input moves minres loadings ~1e-8."""
    return fa_corr(np.array(z, dtype=float, order="C"))


def fit_minres(corr: np.ndarray, k: int, rotation: str | None) -> FactorAnalyzer:
    """factor_analyzer minres fit on the p x p correlation matrix (`is_corr_matrix=True`).

    minres only ever reads the correlation matrix, so fitting on it gives the same
    loadings as fitting on the n x p data, without copying and re-correlating the data
    for every fit (choose_n_factors fits up to k_PA models).
    """
    fa = FactorAnalyzer(n_factors=k, rotation=rotation, method="minres", is_corr_matrix=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fa.fit(corr)
    return fa


def rotated_fit(corr: np.ndarray, k: int) -> FactorAnalyzer:
    """The minres fit with promax rotation used for the measures (EC §8.3); one factor has nothing to rotate."""
    return fit_minres(corr, k, "promax" if k > 1 else None)


def classical_cumulative_variance(z: pd.DataFrame | np.ndarray, k: int, corr: np.ndarray | None = None) -> float:
    """Cumulative common variance of an unrotated minres fit with k factors (EC Table 8)."""
    corr = correlation(z) if corr is None else corr
    return float(fit_minres(corr, k, None).get_factor_variance()[2][-1])


def factors_retained(pa: pd.DataFrame) -> int:
    """Number of factors parallel analysis supports: the leading run above the random reference, at least 1."""
    return max(1, int(pa["above_random"].sum()))


def parallel_analysis_warning(pa: pd.DataFrame, n_factors: int | None) -> str:
    """A warning when a case pins more factors than parallel analysis supports (§4.3: I is chosen by
    "standard criteria"; Horn's parallel analysis is one), empty otherwise.

    `pa` is the `parallel_analysis` frame of the case's standardized x_raw, `n_factors` the pinned I
    (None: I is chosen by `choose_n_factors`, which never exceeds what parallel analysis supports).
    """
    k_pa = factors_retained(pa)
    if n_factors is None or n_factors <= k_pa:
        return ""
    observed = ", ".join(f"{v:.2f}" for v in pa["eigenvalue"].iloc[:n_factors])
    reference = ", ".join(f"{v:.2f}" for v in pa["random_eigenvalue"].iloc[:n_factors])
    return (f"parallel analysis supports {k_pa} factor{'s' if k_pa > 1 else ''} but the case pins n_factors = "
            f"{n_factors}: the leading eigenvalues {observed} against random {reference}; factors beyond {k_pa} "
            "are not distinguishable from noise")


def choose_n_factors(
    z: pd.DataFrame | np.ndarray, pa: pd.DataFrame, variance_target: float = DEFAULT_VARIANCE_TARGET,
    corr: np.ndarray | None = None,
) -> int:
    """I = smallest k <= k_PA whose classical fit explains `variance_target`; else k_PA (>= 1).

    `corr`: the correlation matrix of `z` when already computed.
    """
    corr = correlation(z) if corr is None else corr
    k_pa = min(factors_retained(pa), z.shape[1] - 1)
    for k in range(1, k_pa + 1):
        if classical_cumulative_variance(z, k, corr) >= variance_target:
            return k
    return k_pa


def sparsify(loadings: np.ndarray, threshold: float, max_factors_per_variable: int) -> np.ndarray:
    """EC §8.3 sparsity post-processing: per variable keep the `max_factors_per_variable`
    largest |loadings| and zero any loading with |l| < threshold."""
    out = np.where(np.abs(loadings) >= threshold, loadings, 0.0)
    if max_factors_per_variable < out.shape[1]:
        rank = np.argsort(np.argsort(-np.abs(out), axis=1), axis=1)
        out = np.where(rank < max_factors_per_variable, out, 0.0)
    return out


def bartlett_scores(z: np.ndarray, pattern: np.ndarray, uniquenesses: np.ndarray, floor: float = 0.05) -> np.ndarray:
    """Bartlett factor scores F = Z Psi^-1 L (L' Psi^-1 L)^-1 from the sparsified pattern L.

    Chosen over Thurstone regression scores R^-1 (L Phi): with small uniquenesses R^-1 is
    ill-conditioned and amplifies the mismatch between R and a sparsified L (on a rank-3
    simulation, correlation with the true factors dropped from 0.97 to 0.83), while
    Bartlett weights use each benchmark only for the factors it still loads on.
    Uniquenesses are floored at `floor` to guard Heywood cases.
    """
    weights = pattern / np.maximum(uniquenesses, floor)[:, None]
    return z @ weights @ np.linalg.inv(pattern.T @ weights)


def _minmax(frame: pd.DataFrame) -> pd.DataFrame:
    span = frame.max() - frame.min()
    flat = span.index[~(span > 0)].tolist()
    if flat:
        raise ValueError(f"factors {flat} have constant scores across models; use fewer factors")
    return (frame - frame.min()) / span


def extract_measures(
    x_raw: pd.DataFrame,
    n_factors: int | None = None,
    loading_threshold: float = 0.30,
    max_factors_per_variable: int = 2,
    previous_loadings: pd.DataFrame | None = None,
    anchors: Mapping[str, int] | None = None,
    variance_target: float = DEFAULT_VARIANCE_TARGET,
    pa_iterations: int = 100,
    seed: int = 0,
    fast: bool | None = None,
    standardized: tuple[ImputationResult, np.ndarray] | None = None,
) -> MeasureResult:
    """Internal measures x(m) in [0,1]^I from raw capability data (§4.3, EC §8.3).

    `x_raw`: rows model_id, columns benchmarks, NaN = missing. `n_factors=None` chooses I
    by parallel analysis + `variance_target`. `previous_loadings` (the `loadings` frame of a
    previous run): the refit is rotated toward it and keeps its factor ids (`_oriented_pattern`); otherwise
    factors are ordered by explained variance. `anchors` (benchmark -> +1/-1) fix each factor's sign
    (`anchor_signs`); without them a factor's loadings sum to a positive number.
    `fast=None` takes the fast path (module docstring) above `EXACT_MAX_MODELS` models;
    True / False force it / the exact path (same method; see the tests for how close). `standardized`: the
    `standardized_input(x_raw, seed, fast)` of this same x_raw when already computed (several extractions of one
    x_raw, as in the sensitivity grid, impute it once).
    """
    validate_matrix(x_raw)
    if not 0.0 <= loading_threshold < 1.0:
        raise ValueError(f"loading_threshold must be in [0, 1), got {loading_threshold}")
    if max_factors_per_variable < 1:
        raise ValueError(f"max_factors_per_variable must be >= 1, got {max_factors_per_variable}")
    if x_raw.shape[0] < 4 or x_raw.shape[1] < 2:
        raise ValueError(f"need at least 4 models and 2 benchmarks, got shape {x_raw.shape}")
    if fast is None:
        fast = x_raw.shape[0] > EXACT_MAX_MODELS
    imputation, z = standardized or standardized_input(x_raw, seed=seed, fast=fast)
    pa = parallel_analysis(z, n_iter=pa_iterations, seed=seed, method="wishart" if fast else "data")
    corr = correlation(z)
    if n_factors is None:
        n_factors = choose_n_factors(z, pa, variance_target, corr)
    elif not 1 <= n_factors < x_raw.shape[1]:
        raise ValueError(f"n_factors must be in 1..{x_raw.shape[1] - 1} for {x_raw.shape[1]} benchmarks, got {n_factors}")

    prev = None if previous_loadings is None else wide_loadings(previous_loadings)
    load_wide, uniquenesses, held_out = _oriented_pattern(corr, x_raw.columns, n_factors, loading_threshold,
                                                          max_factors_per_variable, prev, anchors)
    pattern = load_wide.to_numpy()
    empty = [name for name in load_wide.columns if not load_wide[name].any()]
    if empty:
        raise ValueError(
            f"factors {empty} keep no loading >= {loading_threshold} after sparsification; "
            "lower the threshold or use fewer factors"
        )
    scores = bartlett_scores(z, pattern, uniquenesses)
    score_wide = pd.DataFrame(scores, index=x_raw.index, columns=load_wide.columns)
    in_sample = None if prev is None else congruence_with(load_wide, prev)

    measures = _minmax(score_wide)
    measures.index.name = "model_id"
    proportion = (load_wide ** 2).sum(axis=0) / x_raw.shape[1]
    explained = pd.DataFrame(
        {"factor": proportion.index, "proportion": proportion.to_numpy(), "cumulative": proportion.cumsum().to_numpy()}
    )
    long = load_wide.rename_axis(index="benchmark", columns="factor").stack().rename("loading").reset_index()
    long = long[long["loading"] != 0.0].reset_index(drop=True)
    return MeasureResult(
        loadings=long,
        measures=measures,
        n_factors=n_factors,
        explained_variance=explained,
        parallel_analysis=pa,
        imputed_fraction=imputation.imputed_fraction,
        imputation_rank=imputation.rank,
        congruence=in_sample if held_out is None else held_out,
        congruence_in_sample=in_sample,
    )


def _oriented_pattern(
    corr: np.ndarray, benchmarks: pd.Index, k: int, threshold: float, per_variable: int,
    previous: pd.DataFrame | None, anchors: Mapping[str, int] | None,
) -> tuple[pd.DataFrame, np.ndarray, pd.Series | None]:
    """Steps 3-4 and 6: the rotated, sparsified, named and oriented pattern (index benchmark, columns factor),
    the uniquenesses of the rotated fit (factor_analyzer's 1 - row sum of squared pattern loadings, for
    both rotations) and, for a rotation toward the previous solution, its out-of-sample congruence (else None).

    With a previous solution of the same size the unrotated minres loadings are rotated toward it
    (`rotate_toward`: `target_rotation`, oblique Procrustes) and keep its factor ids, as long as every factor
    still matches its namesake out of sample: Tucker phi >= MIN_CONGRUENCE between the previous pattern and each
    benchmark's loadings predicted by a rotation fitted without that benchmark (`held_out_rotation`, sparsified
    and signed like the pattern; in sample the phi is the one the rotation was fitted to make large). Otherwise
    the data changed the structure, and no rotation of the new fit reproduces the old measures (forcing one gives
    near-collinear factors with loadings far above 1): the refit is promax (EC §8.3), its factors matched to the
    previous ones (`align_loadings`) or, on a first fit, ordered by explained variance as C1..Ck, and the measures
    that no longer match get new identities (compass.mlcompass.measure_names); their congruence is then the promax
    pattern's phi with its match (no rotation was fitted toward the previous loadings, only the order and signs
    chosen), and the third element is None. Signs follow the case's `anchors` (`anchor_signs`).
    """
    if previous is not None and previous.shape[1] == k and len(benchmarks.intersection(previous.index)) >= k:
        unrotated = pd.DataFrame(fit_minres(corr, k, None).loadings_, index=benchmarks)
        toward = rotate_toward(unrotated, previous, threshold, per_variable, anchors)
        if (toward.out_of_sample >= MIN_CONGRUENCE).all():
            return toward.pattern, 1.0 - (toward.rotated ** 2).sum(axis=1), toward.out_of_sample
    return (*promax_pattern(corr, benchmarks, k, threshold, per_variable, previous, anchors), None)


def promax_pattern(
    corr: np.ndarray, benchmarks: pd.Index, k: int, threshold: float, per_variable: int,
    previous: pd.DataFrame | None, anchors: Mapping[str, int] | None,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Steps 3-4 and 6 without a rotation toward the previous loadings: the promax pattern (EC §8.3), sparsified,
    its factors matched to `previous` (`align_loadings`: order and signs only) or, without one, ordered by
    explained variance as C1..Ck, signed by the anchors; and the uniquenesses of the promax fit."""
    rotated = rotated_fit(corr, k).loadings_
    wide = pd.DataFrame(sparsify(rotated, threshold, per_variable), index=benchmarks, columns=[f"f{i}" for i in range(k)])
    if previous is not None:
        wide = align_loadings(wide, previous).apply(wide)
    else:
        wide = wide.iloc[:, np.argsort(-(wide.to_numpy() ** 2).sum(axis=0), kind="stable")]
        wide.columns = factor_names(k)
    return wide * anchor_signs(wide, anchors), 1.0 - (rotated ** 2).sum(axis=1)


@dataclass(frozen=True)
class RotationToward:
    """A refit rotated toward the previous pattern (`rotate_toward`).

    pattern: sparsified, anchor-signed rotated loadings (index benchmark, columns the previous factor ids);
    rotated: the rotated loadings A T before sparsification (p x k array);
    in_sample: signed Tucker phi of `pattern` with the previous pattern, over the benchmarks T was fitted to;
    out_of_sample: the same phi of the held-out rows A_j T_(-j) (`held_out_rotation`), sparsified and signed
      like `pattern`; the in-sample phi when fewer than k + 1 benchmarks are shared (nothing to hold out).
    """

    pattern: pd.DataFrame
    rotated: np.ndarray
    in_sample: pd.Series
    out_of_sample: pd.Series


def rotate_toward(
    unrotated: pd.DataFrame, previous: pd.DataFrame, threshold: float, per_variable: int,
    anchors: Mapping[str, int] | None = None,
) -> RotationToward:
    """Step 6 on unrotated minres loadings (index benchmark): the target rotation toward `previous` (wide, same
    k; `target_rotation`), sparsified (step 4, `sparsify`) and signed by the anchors (`anchor_signs`), with its
    congruence in and out of sample. The held-out rows get the same sparsification and the pattern's signs, so
    the two phi differ only in whether benchmark j's own loadings were in the fit that predicts them."""
    rotated = target_rotation(unrotated, previous).to_numpy()
    pattern = pd.DataFrame(sparsify(rotated, threshold, per_variable), index=unrotated.index, columns=previous.columns)
    signs = anchor_signs(pattern, anchors)
    pattern = pattern * signs
    in_sample = congruence_with(pattern, previous)
    held = held_out_rotation(unrotated, previous)
    out_of_sample = in_sample if held is None else congruence_with(
        pd.DataFrame(sparsify(held.to_numpy(), threshold, per_variable), index=held.index,
                     columns=previous.columns) * signs, previous)
    return RotationToward(pattern, rotated, in_sample, out_of_sample)


def wide_loadings(previous: pd.DataFrame) -> pd.DataFrame:
    """Long loadings [benchmark, factor, loading] (a `MeasureResult.loadings` or compass.loadings) as a wide
    benchmark x factor matrix, zeros where sparsified away, factors in id order."""
    missing = {"benchmark", "factor", "loading"} - set(previous.columns)
    if missing:
        raise ValueError(f"previous_loadings must be long [benchmark, factor, loading]; missing {sorted(missing)}")
    wide = previous.pivot(index="benchmark", columns="factor", values="loading").fillna(0.0)
    return wide[sorted(wide.columns, key=factor_number)]
