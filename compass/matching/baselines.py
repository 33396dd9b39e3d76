"""Baselines of CUPID's Table 1 (App. C.4; spec-004 §3.3-3.6): RUCB (Zoghi et al. 2014), LMArena-style
sampling with a Bradley-Terry fit (C.4.1), its cost-constrained variant (C.4.2) and ε-greedy dueling
(Yue & Joachims 2009; C.4.4). All keep a win matrix W (W_ij = times i beat j) and see no metadata.
"""

from __future__ import annotations

import numpy as np

from compass.matching.duel import argmax_random


class WinMatrix:
    """W and the comparison counts shared by the baselines."""

    uses_language = False

    def __init__(self, K: int, seed: int):
        self.W = np.zeros((K, K))
        self.rng = np.random.default_rng(seed)
        self.K = K

    def feedback(self, mask: np.ndarray | None) -> None:
        """The baselines take no language feedback."""

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None:
        if i != j:
            self.W[(i, j) if i_won else (j, i)] += 1


# -- RUCB -----------------------------------------------------------------------------------------------
def rucb_upper(W: np.ndarray, t: int, alpha: float) -> np.ndarray:
    """u_ij = W_ij/N_ij + √(α ln t / N_ij), N = W + Wᵀ; 1 where N_ij = 0; ½ on the diagonal (Zoghi et al. 2014, Alg. 1)."""
    N = W + W.T
    with np.errstate(divide="ignore", invalid="ignore"):
        U = np.where(N > 0, W / N + np.sqrt(alpha * np.log(t) / N), 1.0)
    np.fill_diagonal(U, 0.5)
    return U


def copeland(W: np.ndarray) -> np.ndarray:
    """Normalized Copeland score Cp_i = (1/(K−1)) Σ_{j≠i} 1[p̂_ij > ½] (spec §3.3)."""
    N = W + W.T
    with np.errstate(divide="ignore", invalid="ignore"):
        beats = np.where(N > 0, W / N, 0.5) > 0.5
    return beats.sum(1) / (len(W) - 1)


class RUCB(WinMatrix):
    """Relative Upper Confidence Bound: champion from C = {c : u_cj >= ½ ∀j} with the hypothesized best B,
    opponent d = argmax_j u_jc (ties uniform, d ≠ c on a tie). A self-duel (d = c) is played and costs, but
    teaches nothing, as in the original algorithm."""

    def __init__(self, K: int, seed: int, alpha: float = 0.51):
        super().__init__(K, seed)
        self.alpha = alpha
        self.hypothesis: int | None = None

    def champion(self, U: np.ndarray) -> int:
        """Algorithm 1 lines 4-9 of Zoghi et al. (2014)."""
        C = np.flatnonzero((U >= 0.5).all(axis=1))
        if len(C) == 0:
            return int(self.rng.integers(self.K))
        if self.hypothesis is not None and self.hypothesis not in C:
            self.hypothesis = None
        if len(C) == 1:
            self.hypothesis = int(C[0])
            return self.hypothesis
        if self.hypothesis is not None and self.rng.random() < 0.5:
            return self.hypothesis
        others = C[C != self.hypothesis] if self.hypothesis is not None else C
        return int(self.rng.choice(others))

    def opponent(self, U: np.ndarray, c: int) -> int:
        col = U[:, c]
        ties = np.flatnonzero(col == col.max())
        if len(ties) > 1:
            ties = ties[ties != c]
        return int(self.rng.choice(ties))

    def select(self, t: int, remaining: float) -> tuple[int, int]:
        U = rucb_upper(self.W, t, self.alpha)
        c = self.champion(U)
        return c, self.opponent(U, c)

    def best(self) -> int:
        return argmax_random(copeland(self.W), self.rng)


# -- ε-greedy -------------------------------------------------------------------------------------------
def mean_win_rate(W: np.ndarray) -> np.ndarray:
    """s_i = (1/(K−1)) Σ_{j≠i} p̂_ij with p̂_ij = W_ij/N_ij, ½ when N_ij = 0 (spec §3.6)."""
    N = W + W.T
    with np.errstate(divide="ignore", invalid="ignore"):
        P = np.where(N > 0, W / N, 0.5)
    np.fill_diagonal(P, 0.0)
    return P.sum(1) / (len(W) - 1)


class EpsilonGreedy(WinMatrix):
    """Champion uniformly at random w.p. ε, else argmax s (ties uniform); challenger argmax_{j≠champion} s_j."""

    def __init__(self, K: int, seed: int, epsilon: float = 0.1):
        super().__init__(K, seed)
        self.epsilon = epsilon

    def select(self, t: int, remaining: float) -> tuple[int, int]:
        s = mean_win_rate(self.W)
        explore = self.rng.random() < self.epsilon
        champion = int(self.rng.integers(self.K)) if explore else argmax_random(s, self.rng)
        rest = np.delete(np.arange(self.K), champion)
        return champion, int(rest[argmax_random(s[rest], self.rng)])

    def best(self) -> int:
        return argmax_random(mean_win_rate(self.W), self.rng)


# -- LMArena-style --------------------------------------------------------------------------------------
def bradley_terry(W: np.ndarray, theta: np.ndarray, steps: int = 50, lr: float = 0.01) -> np.ndarray:
    """BT scores by gradient ascent on ℓ(θ): ∂ℓ/∂θ_i = Σ_j (W_ij − N_ij σ(θ_i − θ_j)), re-centred Σθ = 0 (C.4.1)."""
    N = W + W.T
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        theta = theta + lr * (W - N * p).sum(1)
        theta -= theta.mean()
    return theta


def refit_round(t: int) -> bool:
    """LMA refits at rounds 1, 2, 4, 6, ... (C.4.1)."""
    return t == 1 or t % 2 == 0


class LMArena(WinMatrix):
    """Anchor P(a) ∝ exp(α_s(θ_a − θ̄))(1 + α_u/√max(n_a, 1)), ε-uniform; opponent
    P(o | a) ∝ base_o exp(−(θ_a − θ_o)²/τ²); best = argmax θ at the last refit. Ignores cost."""

    def __init__(self, K: int, seed: int, epsilon: float = 0.05, alpha_s: float = 1.0, alpha_u: float = 1.0,
                 tau: float = 1.0):
        super().__init__(K, seed)
        self.epsilon, self.alpha_s, self.alpha_u, self.tau = epsilon, alpha_s, alpha_u, tau
        self.theta = np.zeros(K)
        self.ranking_best = int(self.rng.integers(K))

    def base(self) -> np.ndarray:
        n = (self.W + self.W.T).sum(1)
        return np.exp(self.alpha_s * (self.theta - self.theta.mean())) * (1 + self.alpha_u / np.sqrt(np.maximum(n, 1)))

    def _draw(self, weights: np.ndarray) -> int:
        p = (1 - self.epsilon) * weights / weights.sum() + self.epsilon / len(weights)
        return int(self.rng.choice(len(weights), p=p))

    def select(self, t: int, remaining: float) -> tuple[int, int]:
        base = self.base()
        a = self._draw(base)
        w = base * np.exp(-((self.theta[a] - self.theta) ** 2) / self.tau**2)
        w[a] = 0.0
        return a, int(self.rng.choice(self.K, p=w / w.sum()))

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None:
        super().observe(t, i, j, i_won, cost)
        if refit_round(t):
            self.theta = bradley_terry(self.W, self.theta)
            self.ranking_best = argmax_random(self.theta, self.rng)

    def best(self) -> int:
        return self.ranking_best


class CostLMA(LMArena):
    """Cost-constrained LMA (C.4.2): s_i = θ_i + 1/√(1 + n_i) − (α_c + λ_t) c_i; anchor ∝ exp(s) mixed with
    ε-uniform, opponent ∝ exp(s_j − (θ_a − θ_j)²/τ); λ_{t+1} = max(0, λ_t + η(c_t − γB/T)). α_c was lost
    in extraction: 0.01 [I]. With the budget guard only pairs that fit the remaining budget are drawn."""

    def __init__(self, K: int, seed: int, cost_proxy: np.ndarray, call_cost: np.ndarray, budget: float,
                 rounds: int, cost_weight: float = 0.01, eta: float = 0.5, gamma: float = 1.0,
                 budget_guard: bool = True, **kw):
        super().__init__(K, seed, **kw)
        self.c, self.call_cost = cost_proxy, call_cost
        self.target = gamma * budget / rounds
        self.cost_weight, self.eta, self.lam, self.budget_guard = cost_weight, eta, 0.0, budget_guard

    def score(self) -> np.ndarray:
        n = (self.W + self.W.T).sum(1)
        return self.theta + 1 / np.sqrt(1 + n) - (self.cost_weight + self.lam) * self.c

    def select(self, t: int, remaining: float) -> tuple[int, int] | None:
        s = self.score()
        fits = (self.call_cost[:, None] + self.call_cost[None, :] <= remaining) if self.budget_guard else np.ones((self.K, self.K), bool)
        np.fill_diagonal(fits, False)
        anchors = fits.any(1)
        if not anchors.any():
            return None
        weights = np.where(anchors, np.exp(s - s.max()), 0.0)
        p = (1 - self.epsilon) * weights / weights.sum() + self.epsilon * anchors / anchors.sum()
        a = int(self.rng.choice(self.K, p=p))
        w = np.where(fits[a], np.exp(s - s.max() - (self.theta[a] - self.theta) ** 2 / self.tau), 0.0)
        if w.sum() <= 0:  # every weight underflowed: uniform over the affordable opponents
            w = fits[a].astype(float)
        return a, int(self.rng.choice(self.K, p=w / w.sum()))

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None:
        super().observe(t, i, j, i_won, cost)
        self.lam = max(0.0, self.lam + self.eta * (cost - self.target))
