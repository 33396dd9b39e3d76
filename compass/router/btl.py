"""Bradley–Terry–Luce structure for preference labels over N models (seed 003, App. A.2; spec §2.10):
η_{k,ℓ}(s) = exp θ_k(s) / (exp θ_k(s) + exp θ_ℓ(s)), with θ_k(s) a preference score per model.

ERRATA (spec §2.10): this η is a probability in [0, 1] while preference labels are y ∈ {−1, 0, 1} (+1: k
preferred). On the label scale the BTL expectation is E[y | s, k, ℓ] = 2·η_{k,ℓ}(s) − 1 = tanh((θ_k − θ_ℓ)/2),
equivalently η = E[(y + 1)/2]: the fit below maps y to {0, ½, 1} and maximizes the Bernoulli likelihood with
those soft targets, and every η handed to a meta-learner is 2η − 1.

θ_k(s) = β_k · (1, s) is linear in the query features with θ_0 ≡ 0 (scores are identified up to a constant);
the paper leaves the functional form open ("reasonable functional assumptions ... future work").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.model_selection import KFold


def preference_expectation(theta_k: np.ndarray, theta_l: np.ndarray) -> np.ndarray:
    """E[y | s, k, ℓ] on the {−1, 0, 1} scale: 2·η_{k,ℓ} − 1 with η the BTL probability that k is preferred."""
    return 2.0 * expit(np.asarray(theta_k, dtype=float) - np.asarray(theta_l, dtype=float)) - 1.0


@dataclass(frozen=True)
class BTLModel:
    coef: np.ndarray  # (n_models, 1 + n_features); row 0 is zero (the reference model)

    def theta(self, X: np.ndarray) -> np.ndarray:
        """(n, n_models) preference scores θ_k(s)."""
        return np.hstack([np.ones((len(X), 1)), X]) @ self.coef.T

    def expectation(self, X: np.ndarray, k: np.ndarray, l: np.ndarray) -> np.ndarray:
        """2·η̂_{k,ℓ}(s) − 1 for each row's pair (the scale-fixed η a meta-learner uses)."""
        th = self.theta(X)
        rows = np.arange(len(X))
        return preference_expectation(th[rows, k], th[rows, l])


def fit_btl(X: np.ndarray, k: np.ndarray, l: np.ndarray, y: np.ndarray, n_models: int,
            penalty: float = 1.0) -> BTLModel:
    """Maximum penalized likelihood of the soft targets u = (y + 1)/2 ∈ [0, 1] under u ~ η_{k,ℓ}(s)
    (cross-entropy, ridge `penalty` on the slopes), by L-BFGS with the analytic gradient."""
    Z = np.hstack([np.ones((len(X), 1)), X])
    u = (np.asarray(y, dtype=float) + 1.0) / 2.0
    rows, width = np.arange(len(X)), Z.shape[1]
    ridge = np.ones(width)
    ridge[0] = 0.0  # intercepts unpenalized

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        coef = np.vstack([np.zeros(width), flat.reshape(n_models - 1, width)])
        th = Z @ coef.T
        d = th[rows, k] - th[rows, l]
        nll = np.sum(np.logaddexp(0.0, d) - u * d)
        resid = expit(d) - u
        grad = np.zeros((n_models, width))
        np.add.at(grad, k, resid[:, None] * Z)
        np.add.at(grad, l, -resid[:, None] * Z)
        reg = penalty * np.sum(ridge * coef[1:] ** 2)
        return nll + reg, (grad[1:] + 2 * penalty * ridge * coef[1:]).ravel()

    res = minimize(loss, np.zeros((n_models - 1) * width), jac=True, method="L-BFGS-B")
    return BTLModel(np.vstack([np.zeros(width), res.x.reshape(n_models - 1, width)]))


def btl_eta_hat(X_g: np.ndarray, k_g: np.ndarray, l_g: np.ndarray, X_p: np.ndarray, k_p: np.ndarray,
                l_p: np.ndarray, y: np.ndarray, n_models: int, folds: int = 5,
                seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The preference outcome model of the DR-learner under BTL, on the label scale (2η̂ − 1): fitted on all
    preference rows for the gold rows, cross-fitted (K folds) for the preference rows themselves."""
    on_gold = fit_btl(X_p, k_p, l_p, y, n_models).expectation(X_g, k_g, l_g)
    on_pref = np.empty(len(y))
    for train, held in KFold(folds, shuffle=True, random_state=seed).split(X_p):
        model = fit_btl(X_p[train], k_p[train], l_p[train], y[train], n_models)
        on_pref[held] = model.expectation(X_p[held], k_p[held], l_p[held])
    return on_gold, on_pref
