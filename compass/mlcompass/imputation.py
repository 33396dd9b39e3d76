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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

MIN_OBSERVED_PER_COLUMN = 3


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


def _choose_rank(z: np.ndarray, observed: np.ndarray, max_rank: int, holdout: float, seed: int,
                 max_iter: int, tol: float) -> int:
    """Rank minimizing RMSE on a random hold-out of observed cells (columns keep >= 2 cells)."""
    rng = np.random.default_rng(seed)
    rows, cols = np.nonzero(observed)
    n_hold = max(1, int(round(holdout * rows.size)))
    order = rng.permutation(rows.size)
    mask = observed.copy()
    held: list[int] = []
    for k in order:
        if len(held) == n_hold:
            break
        r, c = rows[k], cols[k]
        if mask[:, c].sum() > 2 and mask[r].sum() > 1:
            mask[r, c] = False
            held.append(k)
    if not held:
        return 1
    hr, hc = rows[held], cols[held]
    errors = []
    for rank in range(1, max_rank + 1):
        completed = _svd_impute(z, mask, rank, max_iter, tol)
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
) -> ImputationResult:
    """Fill NaN cells of a model x benchmark matrix by regularized iterative PCA (rank k).

    Columns are standardized with their observed mean/std, imputed in standardized space,
    and mapped back to original units. `rank=None` picks k in 1..max_rank by RMSE on a
    `holdout` share of observed cells. A complete matrix is returned unchanged.
    """
    validate_matrix(x_raw)
    values = x_raw.to_numpy(dtype=float)
    observed = ~np.isnan(values)
    mask_df = pd.DataFrame(~observed, index=x_raw.index, columns=x_raw.columns)
    if observed.all():
        return ImputationResult(x_raw.astype(float).copy(), 0, mask_df)
    mean = np.nanmean(values, axis=0)
    std = np.nanstd(values, axis=0)
    z = (values - mean) / std
    limit = min(x_raw.shape) - 1
    if rank is None:
        rank = _choose_rank(z, observed, max(1, min(max_rank, limit)), holdout, seed, max_iter, tol)
    elif not 1 <= rank <= max(1, limit):
        raise ValueError(f"imputation rank must be in 1..{max(1, limit)} for a {x_raw.shape} matrix, got {rank}")
    completed = _svd_impute(z, observed, rank, max_iter, tol) * std + mean
    return ImputationResult(
        pd.DataFrame(completed, index=x_raw.index, columns=x_raw.columns), rank, mask_df
    )
