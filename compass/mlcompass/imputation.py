"""Missing cells of the model x benchmark matrix (ML Compass §4.3, input to the factor model).

Real catalogs are sparse: no benchmark is run on every model. The paper fits the factor
model X~ = F L^T + E (§4.3) on a complete matrix; we fill the missing cells with the same
low-rank structure that model assumes, by regularized iterative PCA (PCA-EM with the
singular values shrunk by (lambda_j - sigma^2)/lambda_j, Josse & Husson 2012, the method
of R's missMDA). This is our own small implementation, not the paper's (the paper's
matrices were complete). Without the shrinkage ("hard impute") a rank one above the truth
already overfits the observed cells and can do worse than column means on held-out cells
(seen in our rank-3 simulations); with it, over-estimating the rank costs little. We prefer it to
sklearn's IterativeImputer because the factor model *is* a low-rank model: the E-step
fills missing cells with their rank-k reconstruction and the M-step refits the rank-k
SVD, so imputation and measurement share one structural assumption, and there is no
per-column regression with nearly as many predictors as models.

The rank is chosen by cross-validation on held-out observed cells unless given.

Scale. Up to `EXACT_MAX_MODELS` models every PCA-EM pass is an SVD of the n x k matrix
and the rank is cross-validated on all models: the reference path, whose results the
published cases reproduce bit for bit. Above it (`fast=None`), or with `fast=True`:
  - each pass works on the k x k cross-product matrix (eigendecomposition) and touches only
    the missing cells (see `_pca_em_gram`): the same iterates up to rounding, ~5x faster
    per pass, cost linear in n with a small constant;
  - above `CV_MAX_MODELS` models the rank is cross-validated on a uniform random subset of
    that many models. The CV compares held-out RMSE across at most `max_rank` candidate
    ranks, a k-dimensional question that a few thousand held-out cells settle (on
    20,000 x 8 rank-2 and rank-3 catalogs, subsets of 1,000 and 2,000 models chose the
    same rank as the full CV on every seed we tried), while it costs `max_rank` full
    PCA-EM fits, most of the imputation time at catalog scale.
The completion itself always uses every model. The two paths differ by rounding in the
completed matrix (~1e-13) as long as they pick the same rank; downstream, minres (an
L-BFGS-B fit that stops on a tolerance) turns that into loading differences of ~1e-8.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

MIN_OBSERVED_PER_COLUMN = 3

#: Catalogs with at most this many models take the exact (reference) imputation path,
#: larger ones the fast path (module docstring). Both real cases (~250 and 400 models)
#: are below it. Its exact-path cost (~0.8 s on one core) stays below the fast path's at
#: 20,000 models.
EXACT_MAX_MODELS = 1000

#: Fast path: the rank CV runs on at most this many (random) models.
CV_MAX_MODELS = 2000


@dataclass(frozen=True)
class ImputationResult:
    """Completed matrix (same index/columns, original units), rank used, imputed mask."""

    completed: pd.DataFrame
    rank: int
    imputed_mask: pd.DataFrame

    @property
    def imputed_fraction(self) -> float:
        """Share of cells that were missing and filled in."""
        return float(self.imputed_mask.to_numpy().mean())


def validate_matrix(x_raw: pd.DataFrame) -> None:
    """Raise ValueError naming the model/benchmark when the matrix cannot be used."""
    if not isinstance(x_raw, pd.DataFrame) or x_raw.empty:
        raise ValueError("capability matrix must be a non-empty DataFrame (rows models, columns benchmarks)")
    non_numeric = [c for c in x_raw.columns if not pd.api.types.is_numeric_dtype(x_raw[c])]
    if non_numeric:
        raise ValueError(f"benchmark columns must be numeric; non-numeric: {non_numeric}")
    if x_raw.index.has_duplicates:
        dup = x_raw.index[x_raw.index.duplicated()].unique().tolist()
        raise ValueError(f"duplicate model_id rows in capability matrix: {dup}")
    values = x_raw.to_numpy(dtype=float)
    if np.isinf(values).any():
        raise ValueError("capability matrix contains infinite values")
    observed = ~np.isnan(values)
    sparse_cols = [c for c, k in zip(x_raw.columns, observed.sum(axis=0)) if k < MIN_OBSERVED_PER_COLUMN]
    if sparse_cols:
        raise ValueError(
            f"benchmarks with fewer than {MIN_OBSERVED_PER_COLUMN} observed models: {sparse_cols}"
        )
    empty_rows = x_raw.index[~observed.any(axis=1)].tolist()
    if empty_rows:
        raise ValueError(f"models with no observed benchmark: {empty_rows}")
    std = x_raw.std(axis=0, skipna=True)
    constant = std.index[~(std > 0)].tolist()
    if constant:
        raise ValueError(f"benchmarks with zero variance across models: {constant}")


def _svd_impute(z: np.ndarray, observed: np.ndarray, rank: int, max_iter: int, tol: float) -> np.ndarray:
    """Regularized iterative PCA: alternate a shrunk rank-`rank` SVD fit of the centred matrix
    (column means re-estimated each pass) and a refill of the missing cells with it.

    Shrinkage: eigenvalue lambda_j = s_j^2 / n, noise sigma^2 = mean of the discarded
    eigenvalues, singular value s_j -> s_j (lambda_j - sigma^2) / lambda_j (Josse & Husson 2012).
    Reference path: one LAPACK SVD of the n x k matrix per pass.
    """
    filled = np.where(observed, z, 0.0)  # start at the observed column means (0 after standardizing)
    for _ in range(max_iter):
        mu = filled.mean(axis=0)
        u, s, vt = np.linalg.svd(filled - mu, full_matrices=False)
        eig = s ** 2 / filled.shape[0]
        sigma2 = eig[rank:].mean() if eig.size > rank else 0.0
        shrink = np.clip(1.0 - sigma2 / np.maximum(eig[:rank], 1e-12), 0.0, None)
        low_rank = mu + (u[:, :rank] * (s[:rank] * shrink)) @ vt[:rank]
        updated = np.where(observed, z, low_rank)
        change = np.linalg.norm(updated - filled) / max(np.linalg.norm(filled), 1e-12)
        filled = updated
        if change < tol:
            break
    return filled


def _pca_em_gram(z: np.ndarray, observed: np.ndarray, rank: int, max_iter: int, tol: float) -> np.ndarray:
    """The iterates of `_svd_impute`, computed through k x k matrices (k benchmarks << n).

    With Xc = X - 1 mu' = U S V', the cross-product Xc'Xc = X'X - n mu mu' = V S^2 V' gives
    s_j^2 and V from a k x k eigendecomposition, and the shrunk reconstruction is
    U_r S_r D_r V_r' = Xc P with the k x k matrix P = V_r D_r V_r' (D_r the shrinkage), so a
    pass is two BLAS products over the data plus O(k^3). The matrix is held benchmark-major
    (k x n) so that those products and the column sums run along contiguous rows; only
    the missing cells are read out of the reconstruction and written back (flat indices),
    and the relative change ||X_new - X_old|| / ||X_old|| is computed from them alone
    (observed cells never change), ||X_old||^2 = ||observed||^2 + ||missing||^2. Same
    stopping rule and iterates as the SVD path up to rounding (max difference ~1e-13 on
    a 20,000 x 8 catalog after 315 passes).
    """
    n, k = z.shape
    filled = np.where(observed, z, 0.0).T.copy()  # k x n, C order; start at the column means (0)
    flat = filled.reshape(-1)  # a view: writing `flat` writes `filled`
    missing = np.flatnonzero(~observed.T)
    observed_sq = float(flat @ flat)
    current = np.zeros(missing.size)
    ones = np.ones(n)
    n_sv = min(n, k)  # number of singular values of the n x k matrix
    for _ in range(max_iter):
        mu = (filled @ ones) / n
        cross = filled @ filled.T - n * np.outer(mu, mu)
        lam, vec = np.linalg.eigh(cross)
        eig = np.maximum(lam[::-1][:n_sv], 0.0) / n  # s_j^2 / n, descending
        sigma2 = eig[rank:].mean() if eig.size > rank else 0.0
        shrink = np.clip(1.0 - sigma2 / np.maximum(eig[:rank], 1e-12), 0.0, None)
        v = vec[:, ::-1][:, :rank]
        proj = (v * shrink) @ v.T  # symmetric
        low_rank = proj @ filled
        low_rank += (mu - proj @ mu)[:, None]  # mu + P (x - mu), one benchmark per row
        update = low_rank.reshape(-1).take(missing)
        step = update - current
        change = np.sqrt(step @ step) / max(np.sqrt(observed_sq + current @ current), 1e-12)
        flat[missing] = update
        current = update
        if change < tol:
            break
    return filled.T


def _pca_em_gram_many(z: np.ndarray, observed: np.ndarray, rank: int, max_iter: int, tol: float) -> np.ndarray:
    """`_pca_em_gram` on B matrices at once (z, observed: B x n x k; z 0 on missing cells, their start): the same
    passes, each matrix with its own mask and stopping rule (a matrix that has converged is frozen), as stacked
    BLAS products and one stacked k x k eigendecomposition per pass. The rank-r reconstruction
    mu + V_r D_r V_r' (x - mu) is applied as two products through the r scores; a pass moves only the missing
    cells (the step is masked). Same iterates as B separate calls up to rounding."""
    b, n, k = z.shape
    filled = z.transpose(0, 2, 1).copy()  # B x k x n
    free = (~observed).transpose(0, 2, 1).astype(float)  # 1 on the cells a pass moves
    step = np.empty_like(filled)
    active = np.ones(b, dtype=bool)
    n_sv = min(n, k)
    for _ in range(max_iter):
        mu = filled.mean(axis=2)  # B x k
        cross = filled @ filled.transpose(0, 2, 1) - n * mu[:, :, None] * mu[:, None, :]
        lam, vec = np.linalg.eigh(cross)
        eig = np.maximum(lam[:, ::-1][:, :n_sv], 0.0) / n  # s_j^2 / n, descending
        sigma2 = eig[:, rank:].mean(axis=1) if n_sv > rank else np.zeros(b)
        shrink = np.clip(1.0 - sigma2[:, None] / np.maximum(eig[:, :rank], 1e-12), 0.0, None)
        v = vec[:, :, ::-1][:, :, :rank]  # B x k x r
        scores = v.transpose(0, 2, 1) @ (filled - mu[:, :, None])  # B x r x n
        np.subtract((v * shrink[:, None, :]) @ scores + mu[:, :, None], filled, out=step)  # low rank - current
        step *= free
        if not active.all():
            step[~active] = 0.0
        change = np.sqrt(np.einsum("bkn,bkn->b", step, step) / np.maximum(np.einsum("bkn,bkn->b", filled, filled),
                                                                             1e-24))
        filled += step
        active &= change >= tol
        if not active.any():
            break
    return filled.transpose(0, 2, 1)


def impute_hiding(x_raw: pd.DataFrame, hidden: Sequence[tuple[np.ndarray, np.ndarray]], rank: int,
                  max_iter: int = 500, tol: float = 1e-6, chunk_cells: int = 2_000_000) -> Iterator[np.ndarray]:
    """The completions of x_raw with, for each b, its cells hidden[b] = (rows, columns) set missing too, in order:
    per b what `impute_low_rank(x_raw with those cells NaN, rank=rank).completed` returns (each matrix standardized
    with its own observed cells), up to rounding (~1e-13: the k x k passes of `_pca_em_gram`), an n x k array in
    x_raw's units. The fits run together (`_pca_em_gram_many`), in chunks of about `chunk_cells` cells (the memory
    in use): a leave-cells-out validation's few hundred refits of one small matrix, ~10x faster than one by one."""
    values = x_raw.to_numpy(dtype=float)
    step = max(1, chunk_cells // values.size)
    for start in range(0, len(hidden), step):
        observed = np.repeat(~np.isnan(values)[None], len(hidden[start:start + step]), axis=0)
        for b, (rows, cols) in enumerate(hidden[start:start + step]):
            observed[b, rows, cols] = False
        masked = np.where(observed, values[None], np.nan)
        mean, std = np.nanmean(masked, axis=1), np.nanstd(masked, axis=1)  # B x k
        if not (std > 0).all():
            raise ValueError("a benchmark has zero variance across the models left after hiding cells")
        z = np.where(observed, (values[None] - mean[:, None]) / std[:, None], 0.0)  # missing cells start at 0
        yield from _pca_em_gram_many(z, observed, rank, max_iter, tol) * std[:, None] + mean[:, None]


def holdout_cells(observed: np.ndarray, holdout: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random observed cells to hold out: (rows, cols). Cells are taken in random order while
    their column keeps > 2 and their row > 1 observed cells (running counts)."""
    rows, cols = np.nonzero(observed)
    n_hold = max(1, round(holdout * rows.size))
    order = rng.permutation(rows.size)
    col_left = observed.sum(axis=0).tolist()
    row_left = observed.sum(axis=1).tolist()
    held: list[int] = []
    for i, r, c in zip(order.tolist(), rows[order].tolist(), cols[order].tolist()):
        if len(held) == n_hold:
            break
        if col_left[c] > 2 and row_left[r] > 1:
            col_left[c] -= 1
            row_left[r] -= 1
            held.append(i)
    return rows[held], cols[held]


def _choose_rank(z: np.ndarray, observed: np.ndarray, max_rank: int, holdout: float, seed: int,
                 max_iter: int, tol: float, fast: bool = False) -> int:
    """Rank minimizing RMSE on a random hold-out of observed cells (columns keep >= 2 cells).

    `fast`: cross-validate on a uniform random subset of `CV_MAX_MODELS` models (when
    there are more) with the k x k passes of `_pca_em_gram`.
    """
    rng = np.random.default_rng(seed)
    if fast and z.shape[0] > CV_MAX_MODELS:
        subset = np.sort(rng.choice(z.shape[0], CV_MAX_MODELS, replace=False))
        z, observed = z[subset], observed[subset]
    hr, hc = holdout_cells(observed, holdout, rng)
    if hr.size == 0:
        return 1
    mask = observed.copy()
    mask[hr, hc] = False
    impute = _pca_em_gram if fast else _svd_impute
    errors = []
    for rank in range(1, max_rank + 1):
        completed = impute(z, mask, rank, max_iter, tol)
        errors.append(np.sqrt(np.mean((completed[hr, hc] - z[hr, hc]) ** 2)))
    return int(np.argmin(errors)) + 1


def impute_low_rank(
    x_raw: pd.DataFrame,
    rank: int | None = None,
    max_rank: int = 6,
    holdout: float = 0.1,
    max_iter: int = 500,
    tol: float = 1e-6,
    seed: int = 0,
    fast: bool | None = None,
) -> ImputationResult:
    """Fill NaN cells of a model x benchmark matrix by regularized iterative PCA (rank k).

    Columns are standardized with their observed mean/std, imputed in standardized space,
    and mapped back to original units. `rank=None` picks k in 1..max_rank by RMSE on a
    `holdout` share of observed cells. A complete matrix is returned unchanged.
    `fast=None` takes the fast path above `EXACT_MAX_MODELS` models (module docstring);
    True / False force it / the exact path.
    """
    validate_matrix(x_raw)
    values = x_raw.to_numpy(dtype=float)
    observed = ~np.isnan(values)
    mask_df = pd.DataFrame(~observed, index=x_raw.index, columns=x_raw.columns)
    if observed.all():
        return ImputationResult(x_raw.astype(float).copy(), 0, mask_df)
    if fast is None:
        fast = x_raw.shape[0] > EXACT_MAX_MODELS
    mean = np.nanmean(values, axis=0)
    std = np.nanstd(values, axis=0)
    z = (values - mean) / std
    limit = min(x_raw.shape) - 1
    if rank is None:
        rank = _choose_rank(z, observed, max(1, min(max_rank, limit)), holdout, seed, max_iter, tol, fast)
    elif not 1 <= rank <= max(1, limit):
        raise ValueError(f"imputation rank must be in 1..{max(1, limit)} for a {x_raw.shape} matrix, got {rank}")
    impute = _pca_em_gram if fast else _svd_impute
    completed = impute(z, observed, rank, max_iter, tol) * std + mean
    return ImputationResult(
        pd.DataFrame(completed, index=x_raw.index, columns=x_raw.columns), rank, mask_df
    )


def predictive_sd(x_raw: pd.DataFrame, completed: pd.DataFrame, r: int) -> pd.DataFrame:
    """The model-based predictive sd of every imputed cell of x_raw given its rank-r completion; 0 on
    observed cells, x_raw's units.

    The imputation model is the rank-r PCA model z = mu + U V' + e of the standardized matrix. The noise
    variance of benchmark j is the mean squared residual of its observed cells against the rank-r fit of the
    completed matrix, scaled up by the share of the observed cells that the fit's parameters use up (Josse &
    Husson 2012's degrees of freedom): sigma_j^2 = RSS_j / n_j x n_obs / (n_obs - p - r(n + p - r)); per
    benchmark, because benchmarks differ in noise. A missing cell of a model with n_i observed cells is
    predicted from r scores fitted to those cells, so its predictive variance is sigma_j^2 (1 + r / n_i) (the
    regression prediction variance, averaged over the model's cells); the loadings, fitted from all models,
    are treated as known."""
    values = x_raw.to_numpy(dtype=float)
    sd = np.zeros(values.shape)
    if np.isnan(values).any():
        sd = predictive_sd_array(values, completed.to_numpy(dtype=float), r)
    return pd.DataFrame(sd, index=x_raw.index, columns=x_raw.columns)


def predictive_sd_array(values: np.ndarray, completed: np.ndarray, r: int) -> np.ndarray:
    """`predictive_sd` on arrays (values with NaN where missing, at least one of them)."""
    observed = ~np.isnan(values)
    std = np.nanstd(values, axis=0)
    z = (completed - np.nanmean(values, axis=0)) / std
    n, p = z.shape
    centred = z - z.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    residual = centred - (u[:, :r] * s[:r]) @ vt[:r]
    dof = observed.sum() - p - r * (n + p - r)
    if dof <= 0:
        raise ValueError(f"x_raw {values.shape} has {observed.sum()} observed cells, too few to estimate the "
                         f"noise of a rank-{r} imputation")
    sigma2 = (np.where(observed, residual, 0.0) ** 2).sum(axis=0) / observed.sum(axis=0) * observed.sum() / dof
    variance = sigma2[None, :] * (1.0 + r / observed.sum(axis=1))[:, None]
    return np.where(observed, 0.0, np.sqrt(variance) * std[None, :])
