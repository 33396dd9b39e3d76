"""Cluster overlap (thesis ch. 5, §5.3): α = twice the minimax error of the best linear classifier
(eqs. 5.1-5.4), its LDA approximation (Theorem 6, eqs. 5.5-5.6), the centre-to-centre (C2C) variant
(App. 4C) and the exact value by the Anderson-Bahadur search, for tests and diagnostics.

Separations q and overlaps α are two views of one number: α = 2·(1 - Φ(q)).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import minimize_scalar
from scipy.stats import norm


def overlap_from_separation(q: np.ndarray | float) -> np.ndarray | float:
    """α = 2(1 - Φ(q)) (eq. 5.5), computed with the survival function for small overlaps."""
    return 2.0 * norm.sf(q)


def separation_from_overlap(alpha: np.ndarray | float) -> np.ndarray | float:
    """q = Φ⁻¹(1 - α/2): q_min from max_overlap and q_max from min_overlap in eq. 5.8."""
    return norm.isf(np.asarray(alpha) / 2.0)


def axis_separation(a: np.ndarray, delta: np.ndarray, cov1: np.ndarray, cov2: np.ndarray) -> np.ndarray:
    """q(a) = aᵀδ / (√(aᵀΣ₁a) + √(aᵀΣ₂a)) (eq. 5.6), batched over the leading axis of a and δ."""
    s1 = np.sqrt(np.einsum("...i,...ij,...j->...", a, cov1, a))
    s2 = np.sqrt(np.einsum("...i,...ij,...j->...", a, cov2, a))
    return np.einsum("...i,...i->...", a, delta) / (s1 + s2)


def lda_axis(delta: np.ndarray, cov1: np.ndarray, cov2: np.ndarray) -> np.ndarray:
    """a_LDA = ((Σ₁ + Σ₂)/2)⁻¹ δ (Theorem 6); batched."""
    return np.linalg.solve((cov1 + cov2) / 2.0, delta[..., None])[..., 0]


def separation(mu1: np.ndarray, mu2: np.ndarray, cov1: np.ndarray, cov2: np.ndarray, mode: str = "lda") -> np.ndarray:
    """The approximate separation q of eq. 5.6 with the LDA axis (mode 'lda') or a = δ ('c2c')."""
    delta = np.asarray(mu2, float) - np.asarray(mu1, float)
    a = lda_axis(delta, cov1, cov2) if mode == "lda" else delta
    return axis_separation(a, delta, cov1, cov2)


def pairwise_separations(centers: np.ndarray, covs: np.ndarray, mode: str = "lda") -> np.ndarray:
    """(k, k) matrix of q_ij (diagonal +inf) for k clusters; k² small solves, fine for k in the tens."""
    k = len(centers)
    i, j = np.triu_indices(k, 1)
    q = separation(centers[i], centers[j], covs[i], covs[j], mode) if len(i) else np.empty(0)
    out = np.full((k, k), np.inf)
    out[i, j] = q
    out[j, i] = q
    return out


def pairwise_overlaps(centers: np.ndarray, covs: np.ndarray, mode: str = "lda") -> np.ndarray:
    """(k, k) matrix of approximate overlaps α_ij (diagonal 0)."""
    return overlap_from_separation(pairwise_separations(centers, covs, mode))


def _exact_path(delta: np.ndarray, cov1: np.ndarray, cov2: np.ndarray) -> tuple[float, np.ndarray, float]:
    """(t*, a*, q*) maximising q on the Anderson-Bahadur path a(t) = (tΣ₁ + (1-t)Σ₂)⁻¹ δ, t ∈ [0, 1]
    (Anderson and Bahadur, 1962): a coarse grid, then a bounded Brent search on t. One generalized
    eigendecomposition Σ₁V = Σ₂VΛ (VᵀΣ₂V = I) makes every a(t) = V (tΛ + (1-t)I)⁻¹ Vᵀδ an O(p) step."""
    lam, vecs = eigh(cov1, cov2)
    g = vecs.T @ delta

    def q_of(t: float) -> float:
        w = g / (t * lam + (1 - t))
        return float(w @ g / (np.sqrt(w @ (lam * w)) + np.sqrt(w @ w)))

    grid = np.linspace(0.0, 1.0, 33)
    values = [q_of(t) for t in grid]
    best = int(np.argmax(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    res = minimize_scalar(lambda t: -q_of(t), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    t, q = (float(res.x), float(-res.fun)) if -res.fun >= values[best] else (float(grid[best]), values[best])
    return t, vecs @ (g / (t * lam + (1 - t))), q


def exact_separation(mu1: np.ndarray, mu2: np.ndarray, cov1: np.ndarray, cov2: np.ndarray) -> float:
    """max_a q(a) for two Gaussians (eq. 5.3), on the Anderson-Bahadur path."""
    return _exact_path(np.asarray(mu2, float) - np.asarray(mu1, float), cov1, cov2)[2]


def exact_axis(mu1: np.ndarray, mu2: np.ndarray, cov1: np.ndarray, cov2: np.ndarray) -> np.ndarray:
    """The unit axis a* of the best linear classifier between two Gaussians, pointing from μ₁ to μ₂."""
    delta = np.asarray(mu2, float) - np.asarray(mu1, float)
    a = _exact_path(delta, cov1, cov2)[1]
    return a / np.linalg.norm(a)


def exact_overlap(mu1: np.ndarray, mu2: np.ndarray, cov1: np.ndarray, cov2: np.ndarray) -> float:
    """The exact minimax overlap α of eq. 5.4 for two Gaussian clusters."""
    return float(overlap_from_separation(exact_separation(mu1, mu2, cov1, cov2)))


def separation_and_gradient(delta: np.ndarray, cov_i: np.ndarray, cov_j: np.ndarray,
                            pooled_inv: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """q(δ) and ∂q/∂δ for δ = μ_j - μ_i, batched over j (the rows of δ, cov_j, pooled_inv).

    LDA (pooled_inv = ((Σ_i + Σ_j)/2)⁻¹): a = S⁻¹δ, q = δᵀa/(A + B) with A = √(aᵀΣ_i a), B = √(aᵀΣ_j a);
    ∂q/∂δ = [2a(A + B) - δᵀa (S⁻¹Σ_i a / A + S⁻¹Σ_j a / B)] / (A + B)². C2C (pooled_inv None): a = δ and
    S⁻¹ = I in the same formula. The gradient differentiates through the axis (the axis moves with δ).
    """
    a = delta if pooled_inv is None else np.einsum("mij,mj->mi", pooled_inv, delta)
    ci_a = np.einsum("ij,mj->mi", cov_i, a)
    cj_a = np.einsum("mij,mj->mi", cov_j, a)
    A = np.sqrt(np.einsum("mi,mi->m", a, ci_a))
    B = np.sqrt(np.einsum("mi,mi->m", a, cj_a))
    num = np.einsum("mi,mi->m", delta, a)
    if pooled_inv is not None:
        ci_a = np.einsum("mij,mj->mi", pooled_inv, ci_a)
        cj_a = np.einsum("mij,mj->mi", pooled_inv, cj_a)
    den = A + B
    q = num / den
    grad = (2 * a * den[:, None] - num[:, None] * (ci_a / A[:, None] + cj_a / B[:, None])) / (den ** 2)[:, None]
    return q, grad
