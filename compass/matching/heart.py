"""HEART-UCB inside the CUPID loop (CUPID §3.2, Algorithm 1; spec-004 §2.5-2.14).

Each round: Laplace posterior of the preference GP per latent objective (§3.2.2), belief-aware UCB
(eq. 5), language bias B_t ℓ_t (§3.2.4), budget pacing penalty λ_t c_m (§3.2.5), optional cooldown,
top-2 pair (eq. 6); after the duel the belief update (eq. 4) and the comparison stored under the MAP
objective (the "dual update", §5.1). Every spec choice marked [I] or [C] is a field of `HeartOptions`
with the spec's default; the ablations and the latent dueling bandit are options too (spec §3.1-3.2).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from compass.matching.duel import affordable_top_pair, ranked
from compass.matching.gp import PreferenceGP, log_evidence, onehot_kernel, rbf


# The refit's grid: model lengthscale multipliers and outputscales (BoTorch bounds the outputscale to [0.005, 200]).
REFIT_LENGTHSCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
REFIT_OUTPUTSCALES = (0.25, 1.0, 4.0, 16.0)


@dataclass(frozen=True)
class HeartOptions:
    """Hyper-parameters (App. B.2 Table 4) and the spec's open choices."""

    beta: float = 1.5  # exploration weight [P]
    eta_lambda: float = 0.5  # budget-penalty learning rate [P]
    rho: float = 1.3  # language-bias weight [P]
    kappa: float = 1.6  # language-bias cap [P]
    b_min: float = 0.01  # minimum language bias [P]
    gamma: float = 1.0  # cost sensitivity in τ_t [I]
    pacing: str = "adaptive"  # τ_t = γ(B − C_{t−1})/(T − t + 1) [R]; "static": γB/T
    normalize_costs: bool = False  # c_m / max c_m and c_t, τ_t / (B/T) [I]; False = paper-literal raw units
    sigma: float = 1.0  # probit noise [C]/[I]
    outputscale: float = 1.0  # kernel outputscale, BoTorch initial value [C]
    lengthscale: float = 0.52  # RBF lengthscale on one-hot inputs, mode of BoTorch's Gamma(2.4, 2.7) prior [C]
    kernel_refit: bool = False  # [C] refit (lengthscale, outputscale) by Laplace evidence once min_fit_pairs exist
    min_fit_pairs: int = 5  # [C]
    model_inputs: str = "onehot"  # "onehot" [C] or "metadata" (standardized metadata, lengthscale √dim) [I]
    n_objectives: int | None = None  # L latent objectives; None: L = K [C]
    objective_assignment: str = "map"  # comparison stored under the MAP objective [C] ("sample": z ~ b_{t+1}) [I]
    predictive_includes_noise: bool = True  # Φ(μ_d/√(2σ² + s_d²)) [R]; False: Φ(μ_d/s_d) [C]
    spread: str = "std"  # dispersion S_t of the bUCB scores: "std" [P] or "iqr" [C]
    language_mode: str = "bias"  # "bias" [P], "filter" or "both" (App. B.1.2) [I]
    reuse_feedback: bool = False  # a round without feedback has ℓ ≡ 0 [I]; True: reuse the last mask
    cooldown_weight: float = 0.0  # w_cd [C]/[I]
    cooldown_window: int = 5  # H arm slots [C]
    final_rule: str = "posterior_mean"  # m̂ = argmax Σ_z b μ [I]; "last_winner" [C]
    use_cost: bool = True  # False: "CUPID w/o cost penalty" (λ ≡ 0)
    use_language: bool = True  # False: "CUPID w/o language" (ℓ ≡ 0)
    budget_guard: bool = True  # only pairs whose expected cost fits the remaining budget (spec §2.13 [I])
    # Ties in HEART (round 1: prior everywhere) broken at random (the guide: λ_1 = 0 gives cost no role in round 1).
    # True: by lower c_m, the paper's reading (§5.1: round-1 selection "is driven by the language bias and the
    # cost penalty"); on a pool whose cheapest models are feasible that alone converges in round 1.
    cost_tiebreak: bool = False


class HeartUCB:
    """CUPID's HEART-UCB matcher over a pool with static cost proxy c_m and expected call costs."""

    def __init__(self, features: np.ndarray | None, cost_proxy: np.ndarray, call_cost: np.ndarray,
                 budget: float, rounds: int, seed: int, options: HeartOptions = HeartOptions()):
        self.o = options
        K = len(cost_proxy)
        L = options.n_objectives or K
        self.features, self.K, self.L = features, K, L
        self.gp = self.make_gp(1.0, options.outputscale)
        self.c = cost_proxy / cost_proxy.max() if options.normalize_costs else cost_proxy
        self.call_cost, self.budget, self.rounds = call_cost, budget, rounds
        self.rng = np.random.default_rng(seed)
        self.uses_language = options.use_language
        self.belief = np.full(L, 1.0 / L)
        self.lam, self.spent = 0.0, 0.0
        self.rows: dict[tuple[int, int], int] = {}
        self.comparisons: list[tuple[int, int]] = []
        self.post = None
        self.mask = np.zeros(K)
        self.recent: deque[int] = deque(maxlen=options.cooldown_window)
        self.last_winner: int | None = None
        self.trace: dict[str, float] = {}

    # -- posterior -------------------------------------------------------------------------------------
    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        keys = list(self.rows)
        return np.array([m for m, _ in keys], int), np.array([z for _, z in keys], int)

    def posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """μ_t(m, z) and σ_t(m, z), (K, L) each (eq. 13)."""
        mean, var = self.gp.predict(self.post, *self._data())
        return mean, np.sqrt(var)

    def make_gp(self, scale: float, outputscale: float) -> PreferenceGP:
        """The GP with the model lengthscale × `scale` (one-hot: 0.52 [C]; metadata: √dim [I]) and `outputscale`."""
        if self.o.model_inputs == "metadata":
            model_kernel = rbf(self.features, scale * np.sqrt(self.features.shape[1]))
        else:
            model_kernel = onehot_kernel(self.K, scale * self.o.lengthscale)
        return PreferenceGP(model_kernel, onehot_kernel(self.L, self.o.lengthscale), outputscale, self.o.sigma)

    def _refit(self) -> None:
        """Laplace posterior; with `kernel_refit` and >= min_fit_pairs comparisons, the (lengthscale, outputscale)
        grid point of largest Laplace evidence first."""
        models, objectives = self._data()
        w, l = np.array(self.comparisons).T
        if self.o.kernel_refit and len(self.comparisons) >= self.o.min_fit_pairs:
            fits = [(gp, gp.fit(models, objectives, w, l)) for gp in
                    (self.make_gp(a, s) for a in REFIT_LENGTHSCALES for s in REFIT_OUTPUTSCALES)]
            self.gp, self.post = max(fits, key=lambda fit: log_evidence(fit[1]))
            return
        self.post = self.gp.fit(models, objectives, w, l)

    # -- scores ----------------------------------------------------------------------------------------
    def language_bias(self, bucb: np.ndarray) -> float:
        """B_t = max(b_min, min(ρ S_t, κ S_t)), b_min when S_t <= 0 (§3.2.4, A.7)."""
        if self.o.spread == "iqr":
            q75, q25 = np.percentile(bucb, [75, 25])
            spread = q75 - q25
        else:
            spread = float(np.std(bucb))
        if spread <= 0:
            return self.o.b_min
        return max(self.o.b_min, min(self.o.rho * spread, self.o.kappa * spread))

    def scores(self) -> np.ndarray:
        """HEART_t(m) = Σ_z b_t(z)[μ + βσ] + B_t ℓ_t(m) − λ_t c_m − w_cd cd_t(m) (eq. 6)."""
        mean, sd = self.posterior()
        bucb = (mean + self.o.beta * sd) @ self.belief  # eq. 5
        self.trace["b_t"] = self.language_bias(bucb) if self.uses_language else 0.0
        cooldown = np.bincount(np.array(self.recent, int), minlength=self.K)
        return bucb + self.trace["b_t"] * self.mask - self.lam * self.c - self.o.cooldown_weight * cooldown

    # -- protocol --------------------------------------------------------------------------------------
    def feedback(self, mask: np.ndarray | None) -> None:
        """ℓ_t from the language channel; no feedback: ℓ ≡ 0 (or the last mask with reuse_feedback)."""
        if mask is not None:
            self.mask = np.asarray(mask, float)
        elif not self.o.reuse_feedback:
            self.mask = np.zeros(self.K)
        if not self.uses_language:
            self.mask = np.zeros(self.K)

    def select(self, t: int, remaining: float) -> tuple[int, int] | None:
        """Top-2 HEART scores; ties by ℓ_t, then by lower c_m (`cost_tiebreak`, with the cost term on), then
        seeded at random (spec §2.10); with the budget guard only affordable pairs; `filter` mode keeps ℓ = 1."""
        h = self.scores()
        tie_cost = -self.c if self.o.cost_tiebreak and self.o.use_cost else np.zeros(self.K)
        order = ranked(np.round(h, 12), self.mask, tie_cost, self.rng.random(self.K))
        candidates = None
        if self.o.language_mode in ("filter", "both") and self.mask.sum() >= 2:
            candidates = np.flatnonzero(self.mask)
        if self.o.language_mode == "filter":
            h = h - self.trace["b_t"] * self.mask
            order = ranked(np.round(h, 12), tie_cost, self.rng.random(self.K))
        guard = remaining if self.o.budget_guard else None
        return affordable_top_pair(order, self.call_cost, guard, candidates)

    def predictive(self, i: int, j: int) -> np.ndarray:
        """P(m_i ≻ m_j | z, D_t) for every objective z (eq. 3)."""
        mean, sd = self.posterior()
        models, objectives = self._data()
        cov = self.gp.pair_covariance(self.post, i, j, models, objectives)
        var_d = sd[i] ** 2 + sd[j] ** 2 - 2 * cov
        return self.gp.preference(mean[i] - mean[j], var_d, self.o.predictive_includes_noise)

    def update_belief(self, i: int, j: int, i_won: bool) -> None:
        """log b_{t+1} = log b_t + ȳ log P_t + (1 − ȳ) log(1 − P_t), normalized (eq. 4; floors at 1e-12)."""
        p = np.clip(self.predictive(i, j), 1e-6, 1 - 1e-6)
        log_b = np.log(np.maximum(self.belief, 1e-300)) + np.maximum(np.log(p if i_won else 1 - p), np.log(1e-12))
        log_b -= log_b.max()
        self.belief = np.exp(log_b) / np.exp(log_b).sum()

    def _objective_for_data(self) -> int:
        """MAP objective with seeded random tie-breaking (spec §6.4), or a draw from the belief."""
        if self.o.objective_assignment == "sample":
            return int(self.rng.choice(self.L, p=self.belief))
        return int(self.rng.choice(np.flatnonzero(self.belief >= self.belief.max() - 1e-15)))

    def _row(self, m: int, z: int) -> int:
        return self.rows.setdefault((m, z), len(self.rows))

    def observe(self, t: int, i: int, j: int, i_won: bool, cost: float) -> None:
        """Belief update with the pre-update posterior, GP update under ẑ, then λ pacing (Algorithm 1)."""
        self.update_belief(i, j, i_won)
        winner, loser = (i, j) if i_won else (j, i)
        z = self._objective_for_data()
        self.comparisons.append((self._row(winner, z), self._row(loser, z)))
        self._refit()
        self.recent.extend([i, j])
        self.last_winner = winner
        if self.o.use_cost:
            self.lam = self.pacing_step(self.lam, cost, self.spent, t)
        self.spent += cost

    def pacing_step(self, lam: float, cost: float, spent_before: float, t: int) -> float:
        """λ_{t+1} = max(0, λ_t + η_λ (c_t − τ_t)), τ_t = γ(B − C_{t−1})/(T − t + 1) (§3.2.5)."""
        if self.o.pacing == "static":
            target = self.o.gamma * self.budget / self.rounds
        else:
            target = self.o.gamma * (self.budget - spent_before) / (self.rounds - t + 1)
        if self.o.normalize_costs:
            scale = self.budget / self.rounds
            cost, target = cost / scale, target / scale
        return max(0.0, lam + self.o.eta_lambda * (cost - target))

    def best(self) -> int:
        """m̂_t = argmax_m Σ_z b_t(z) μ_t(m, z) (spec §2.13), or the last duel's winner."""
        if self.o.final_rule == "last_winner" and self.last_winner is not None:
            return self.last_winner
        mean, _ = self.posterior()
        return int(ranked(np.round(mean @ self.belief, 12), -self.lam * self.c, self.rng.random(self.K))[0])


HEART_METHODS = ("cupid", "cupid_no_cost", "cupid_no_language", "latent_dueling", "cupid_cost_tiebreak")


def options_for(method: str, base: HeartOptions = HeartOptions()) -> HeartOptions:
    """The HEART-UCB variants of Table 1: CUPID, its two ablations, the latent dueling bandit (spec §3.1-3.2), and
    CUPID with the paper's round-1 cost tie-break. The budget guard belongs to pacing: the variants without the
    cost penalty do not have it."""
    return {"cupid": base, "cupid_cost_tiebreak": replace(base, cost_tiebreak=True),
            "cupid_no_cost": replace(base, use_cost=False, budget_guard=False),
            "cupid_no_language": replace(base, use_language=False),
            "latent_dueling": replace(base, use_cost=False, use_language=False, budget_guard=False)}[method]
