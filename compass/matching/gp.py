"""Probit Gaussian-process preference model with its Laplace posterior (CUPID §3.2.2, App. A.1-A.3;
Chu & Ghahramani 2005; spec-004 §2.1-2.4).

Latent utilities f over rows (model m, objective z) have a product kernel
k((m,z),(m',z')) = s · k_M(m,m') · k_Z(z,z'): an RBF on the concatenated input x(m) ⊕ onehot(z) factorizes
so. A comparison "w beats l" has likelihood Φ((f_w − f_l)/(√2σ)) (eq. 1, 7-8). The Laplace posterior
(eqs. 9-14) is computed on the rows that hold data only; every other row follows from the GP
conditional, cov* = K** − K*D (I + W K)⁻¹ W K_D*, so a round costs O(KL·n²) for n data rows.
Kernel hyper-parameters start at BoTorch's initial values (lengthscale 0.52, outputscale 1); the [C]
marginal-likelihood refit after 5 comparisons is an option of HEART-UCB (`kernel_refit`), which picks the
grid point of largest Laplace evidence `log_evidence` (Rasmussen & Williams 2006, eq. 3.32) — a grid
search, not BoTorch's gradient-based MAP with priors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

SQRT2 = np.sqrt(2.0)


def inverse_mills(z: np.ndarray) -> np.ndarray:
    """h(z) = φ(z)/Φ(z), evaluated in log space (stable for z ≪ 0; spec §6.2)."""
    log_phi = -0.5 * z**2 - 0.5 * np.log(2 * np.pi)
    return np.exp(log_phi - log_ndtr(z))


def rbf(X: np.ndarray, lengthscale: float) -> np.ndarray:
    """Unit-variance RBF Gram matrix exp(−‖x − x'‖² / 2ℓ²)."""
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * sq / lengthscale**2)


@dataclass(frozen=True)
class LaplacePosterior:
    """Laplace approximation on the data rows: mode f̂ (eq. 10), a = K⁻¹f̂, M = (I + WK)⁻¹W, Σ = (K⁻¹ + W)⁻¹ (eq. 12)."""

    mode: np.ndarray
    alpha: np.ndarray
    M: np.ndarray
    cov: np.ndarray
    log_likelihood: float
    logdet: float = 0.0  # log det(I + W K)


def _likelihood_terms(f: np.ndarray, winners: np.ndarray, losers: np.ndarray, sigma: float):
    """Σ log Φ(z_s), the gradient g and the negative Hessian W of the probit log-likelihood (eq. 11)."""
    n = len(f)
    scale = SQRT2 * sigma
    z = (f[winners] - f[losers]) / scale
    h = inverse_mills(z)
    g = np.zeros(n)
    np.add.at(g, winners, h / scale)
    np.add.at(g, losers, -h / scale)
    w = h * (z + h) / scale**2  # = (1/2σ²) h(z)(z + h(z)), in (0, 1/2σ²)
    W = np.zeros((n, n))
    for a, b, v in zip(winners, losers, w, strict=True):
        W[a, a] += v
        W[b, b] += v
        W[a, b] -= v
        W[b, a] -= v
    return float(log_ndtr(z).sum()), g, W


def log_evidence(post: LaplacePosterior) -> float:
    """Laplace approximation of log p(D | hyper-parameters) = log p(D | f̂) − ½ f̂ᵀK⁻¹f̂ − ½ log det(I + W K)
    (Rasmussen & Williams 2006, eq. 3.32), for the kernel `post` was fitted with."""
    return float(post.log_likelihood - 0.5 * post.mode @ post.alpha - 0.5 * post.logdet)


def laplace_posterior(K: np.ndarray, winners: np.ndarray, losers: np.ndarray, sigma: float = 1.0,
                      tol: float = 1e-8, max_iter: int = 100) -> LaplacePosterior:
    """Mode and covariance of p(f | D) ≈ N(f̂, (K⁻¹ + W)⁻¹) for comparisons winners[s] ≻ losers[s] (eqs. 9-13).

    Newton iterations f ← K (I + W K)⁻¹ (W f + g) with step halving on S(f) = ½ fᵀK⁻¹f − Σ log Φ(z_s)."""
    n = len(K)
    I = np.eye(n)
    f, a = np.zeros(n), np.zeros(n)
    loglik, g, W = _likelihood_terms(f, winners, losers, sigma)
    objective = 0.0 - loglik
    for _ in range(max_iter):
        a_new = np.linalg.solve(I + W @ K, W @ f + g)
        step = 1.0
        while True:
            a_try = a + step * (a_new - a)
            f_try = K @ a_try
            ll_try, g_try, W_try = _likelihood_terms(f_try, winners, losers, sigma)
            obj_try = 0.5 * f_try @ a_try - ll_try
            if obj_try <= objective + 1e-12 or step < 1e-6:
                break
            step /= 2
        converged = np.max(np.abs(f_try - f)) < tol
        f, a, loglik, g, W, objective = f_try, a_try, ll_try, g_try, W_try, obj_try
        if converged:
            break
    B = I + W @ K
    M = np.linalg.solve(B, W)
    return LaplacePosterior(f, a, M, K - K @ M @ K, loglik, float(np.linalg.slogdet(B)[1]))


@dataclass(frozen=True)
class PreferenceGP:
    """The GP over (model, objective) rows: model kernel k_M (K×K, unit diagonal), objective kernel k_Z
    (L×L), outputscale s, probit noise σ."""

    model_kernel: np.ndarray
    objective_kernel: np.ndarray
    outputscale: float = 1.0
    sigma: float = 1.0

    def gram(self, models: np.ndarray, objectives: np.ndarray) -> np.ndarray:
        return self.outputscale * self.model_kernel[np.ix_(models, models)] * self.objective_kernel[np.ix_(objectives, objectives)]

    def fit(self, models: np.ndarray, objectives: np.ndarray, winners: np.ndarray, losers: np.ndarray,
            jitter: float = 1e-6) -> LaplacePosterior:
        """Laplace posterior on data rows (models[r], objectives[r]); comparisons index those rows."""
        K = self.gram(models, objectives) + jitter * np.eye(len(models))
        return laplace_posterior(K, winners, losers, self.sigma)

    def cross(self, models: np.ndarray, objectives: np.ndarray) -> np.ndarray:
        """K_{*D}: (K, L, n) covariances of every (model, objective) with the n data rows."""
        return self.outputscale * self.model_kernel[:, models][:, None, :] * self.objective_kernel[:, objectives][None, :, :]

    def predict(self, post: LaplacePosterior | None, models: np.ndarray, objectives: np.ndarray):
        """Posterior mean μ(m,z) and variance σ²(m,z) for every model and objective, (K, L) each (eq. 13)."""
        K, L = len(self.model_kernel), len(self.objective_kernel)
        if post is None:
            return np.zeros((K, L)), np.full((K, L), self.outputscale)
        Ks = self.cross(models, objectives)
        mean = Ks @ post.alpha
        var = self.outputscale - np.einsum("kln,nm,klm->kl", Ks, post.M, Ks)
        return mean, np.maximum(var, 1e-12)

    def pair_covariance(self, post: LaplacePosterior | None, i: int, j: int, models: np.ndarray,
                        objectives: np.ndarray) -> np.ndarray:
        """Posterior cov(f(i,z), f(j,z)) for every objective z, (L,)."""
        prior = self.outputscale * self.model_kernel[i, j] * np.ones(len(self.objective_kernel))
        if post is None:
            return prior
        Ks = self.cross(models, objectives)
        return prior - np.einsum("ln,nm,lm->l", Ks[i], post.M, Ks[j])

    def preference(self, mean_diff: np.ndarray, var_diff: np.ndarray, includes_noise: bool = True) -> np.ndarray:
        """P(m_i ≻ m_j) = Φ(μ_d / √(2σ² + s_d²)) (eq. 3, 21 via identity 19); without the noise term the
        [C] web-app form Φ(μ_d / s_d)."""
        denom = np.sqrt(2 * self.sigma**2 * includes_noise + np.maximum(var_diff, 1e-12))
        return ndtr(mean_diff / denom)


def onehot_kernel(n: int, lengthscale: float) -> np.ndarray:
    """RBF on one-hot inputs: 1 on the diagonal, exp(−1/ℓ²) off it (‖e_a − e_b‖² = 2)."""
    off = np.exp(-1.0 / lengthscale**2)
    return (1 - off) * np.eye(n) + off
