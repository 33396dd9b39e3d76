"""What to measure next: value of information of unmeasured (model, benchmark) cells (issue 49).

Posterior. The rank bootstrap (`rank_uncertainty.replicate_scores`) gives B draws S_b(m) of every ranked model's
leaderboard score; mu_m = mean_b S_b(m), sigma_m^2 = var_b S_b(m). The recommendation is the posterior-mean pick
m* = argmax_m mu_m, and its expected regret is

    R = E[max_m S(m)] - mu_{m*}                                                         (1)

Measuring a cell. Cell c = (m, j) is unmeasured; its value has the imputation's predictive distribution
X_c ~ N(x^_c, s_c^2) (`imputation.predictive_sd`, the draw of step (i) of the bootstrap). The score of model m is
linearized in its own cell, g_c = dScore(m) / dx_{mj} (`linear_gradient` for a utility linear in the
benchmarks, `finite_difference_gradient` otherwise), so measuring c moves model m's posterior mean by

    delta_c = g_c (X_c - x^_c) ~ N(0, t_c^2),   t_c = g_c s_c                             (2)

Correlated cells. The imputation's errors e_c = X_c - x^_c of one model's cells move together: equicorrelated,
Corr(e_c, e_c') = r for two cells of one model (`imputation_validation`'s noise_correlation, the leave-pattern-out
intraclass correlation, 0.26 on frontier_api; the rank bootstrap draws them so, `rank_uncertainty.imputation_draw`),
independent across models. Model m's score error over its unmeasured cells U_m is D_m = sum_{c in U_m} t_c u_c,
u_c = e_c / s_c. Measuring a set A of m's cells (n = |A|) moves its posterior mean by E[D_m | u_A], a normal shift of
variance

    tau_m(A)^2 = b' R_A^-1 b = ( b.b - r (1'b)^2 / (1 - r + r n) ) / (1 - r),                (2r)
    b_a = (1 - r) t_a + r T_m ,   T_m = sum_{c in U_m} t_c ,   R_A = (1 - r) I + r 11'

(the cell's own error plus what it tells about m's other unmeasured cells; in the running sums S1 = sum_A t_a,
S2 = sum_A t_a^2: 1'b = (1 - r) S1 + r n T_m, b.b = (1 - r)^2 S2 + 2 r (1 - r) T_m S1 + n r^2 T_m^2, O(1) per
candidate, no cell x cell array). r = 0 gives tau_m(A)^2 = sum_A t_a^2; A = U_m gives Var(D_m). Capped:
tau_m(A)^2 <= sigma_m^2 (a model's cells cannot resolve more than its whole posterior spread); the other models'
means stay (independent across models). A single cell has tau_c = min(|b_c|, sigma_m).

Value (preposterior analysis). E[max_m S(m)] does not depend on what is measured (tower property), so the expected
drop in the regret (1) from measuring A is the expected value of sample information

    V(A) = E_Z[ max_m (mu_m + tau_m(A) Z_m) ] - max_m mu_m ,   Z_m ~ iid N(0, 1)         (3)

in score units, >= 0. It is computed by drawing the cell values from their predictive distribution at
`n_nodes` equal-probability quantile nodes z_q = Phi^-1((q - 1/2) / Q), q = 1..Q, re-ranking the shifted means
and averaging; for several models at once every model takes the Q nodes in its own random order (a Latin
hypercube, common to all candidates: common random numbers). For a single cell, (3) has the closed form
tau f(-|mu_m - M_-m| / tau), f(z) = z Phi(z) + phi(z), M_-m = max of the other means (Frazier's knowledge gradient);
the tests check the nodes against it.

Batch (greedy). k cells are chosen one at a time, each maximizing the marginal gain V(A + c) - V(A) (or that gain
per dollar), among cells not yet chosen; a chosen cell is never picked again.

P(wrong). With A measured, the posterior draws become S'_b(m) = mu_m + tau_m Z_m + rho_m (S_b(m) - mu_m),
rho_m = sqrt(1 - tau_m^2 / sigma_m^2) (the measured part of the spread is replaced by its realization), and the
probability that the new pick is not the best is averaged over the same nodes: P_wrong(A) = E_Z[ mean_b
1{S'_b(pick_Z) < max_m S'_b(m)} ]. Reported along the greedy path on L' = `p_wrong_nodes` of the L nodes, drawn
without replacement, with its standard error sqrt(v / L'), v the variance over the L' nodes of the inner mean: the
error of the node sample only (the bootstrap's own B draws are held fixed). No finite-population correction: the
L nodes are themselves a random sample (a fresh Latin hypercube per call), so the error to report is against
E_Z, not against the mean over these L nodes (second review of issue 49: over 200 fresh node sets the estimate
spread 0.031, the corrected SE said 0.029, sqrt(v / L') 0.033).

Approximations (documented, tested): the linearization (2) (exact for a utility linear in the benchmark
columns with fixed factor loadings), Gaussian cell predictive distributions, the equicorrelation (2r) (one r per
case, no low-rank borrowing across models: V is conservative there).
Cost: O(cells x n_nodes) per greedy step, O(n_nodes x B x n) for P_wrong; no n x n x k arrays.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.stats import norm

CELL_COLUMNS = ["model_id", "benchmark", "cell_sd", "gradient", "tau", "cost_usd", "value", "value_per_usd",
                "rank_value", "rank_per_usd"]
BATCH_COLUMNS = ["step", "model_id", "benchmark", "cost_usd", "gain", "value", "spend_usd", "p_wrong", "p_wrong_se",
                 "tau_model"]  # tau_model: tau_m(A) of (2r) of the chosen cell's model after the step
MAX_CORRELATION = 0.95  # r is clipped to [0, MAX_CORRELATION] where read (`clip_correlation`): (2r) divides by 1 - r


def clip_correlation(r: float) -> float:
    """r of (2r) as the ranking and every update use it: NaN (not estimated) -> 0, then clipped to [0,
    MAX_CORRELATION]. Applied once where r is read, so the ranking and the agent's update agree."""
    return float(np.clip(np.nan_to_num(float(r)), 0.0, MAX_CORRELATION))


def check_correlation(r: float) -> float:
    """r unchanged if already clipped (`clip_correlation`), else ValueError: no function clips it on its own."""
    if not 0.0 <= r <= MAX_CORRELATION:
        raise ValueError(f"correlation must be in [0, {MAX_CORRELATION}] (clip it where it is read), got {r!r}")
    return float(r)


def linear_gradient(weights: pd.Series, models: pd.Index, benchmarks: pd.Index) -> pd.DataFrame:
    """g of (2) for a score linear in the benchmark columns: Score(m) = sum_j w_j x_mj + const, so g_mj = w_j."""
    w = weights.reindex(benchmarks).fillna(0.0).to_numpy(dtype=float)
    return pd.DataFrame(np.broadcast_to(w, (len(models), len(benchmarks))).copy(), index=models, columns=benchmarks)


def finite_difference_gradient(score_fn: Callable[[pd.DataFrame], np.ndarray], completed: pd.DataFrame,
                               step: pd.Series | float = 0.01) -> pd.DataFrame:
    """g of (2) by central differences: column j of the completed matrix moved by +-h_j for every model at once
    (a model's score depends on its own row only once loadings and utilities are fixed), 2k calls of score_fn
    (completed matrix -> per-model score, rows in `completed`'s order). step: h_j, or a share of column j's sd."""
    h = (step if isinstance(step, pd.Series) else completed.std(axis=0) * float(step)).reindex(completed.columns)
    out = np.empty(completed.shape)
    for j, col in enumerate(completed.columns):
        up, down = completed.copy(), completed.copy()
        up[col] += h[col]
        down[col] -= h[col]
        out[:, j] = (np.asarray(score_fn(up), dtype=float) - np.asarray(score_fn(down), dtype=float)) / (2 * h[col])
    return pd.DataFrame(out, index=completed.index, columns=completed.columns)


def quantile_nodes(n_nodes: int) -> np.ndarray:
    """z_q = Phi^-1((q - 1/2) / Q), q = 1..Q: equal-probability draws of a standard normal (mean 0 exactly)."""
    z = norm.ppf((np.arange(n_nodes) + 0.5) / n_nodes)
    return z - z.mean()


def single_cell_value(mu: np.ndarray, tau: np.ndarray, model: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """V({c}) of (3) for cells c on models `model` with shifts `tau`, by the quantile nodes: draw, re-rank, average."""
    top = np.argsort(-mu)[:2]
    other = np.where(model == top[0], mu[top[1]] if mu.size > 1 else -np.inf, mu[top[0]])
    shifted = mu[model][:, None] + tau[:, None] * nodes[None, :]
    return np.maximum(shifted, other[:, None]).mean(axis=1) - mu[top[0]]


def _posterior(score_draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(score_draws, dtype=float)
    if s.ndim != 2 or s.shape[0] < 2:
        raise ValueError(f"score_draws must be (B >= 2, n models), got {s.shape}")
    return s.mean(axis=0), s.std(axis=0, ddof=1)


def shift_variance(s1: np.ndarray, s2: np.ndarray, n: np.ndarray, total: np.ndarray, r: float) -> np.ndarray:
    """tau_m(A)^2 of (2r) before the cap, from the running sums S1 = sum_A t_a, S2 = sum_A t_a^2, n = |A| and
    T_m = sum_{U_m} t_c (arrays broadcast together)."""
    r = check_correlation(r)
    sum_b = (1 - r) * s1 + r * n * total
    b_b = (1 - r) ** 2 * s2 + 2 * r * (1 - r) * total * s1 + n * r ** 2 * total ** 2
    return np.maximum(b_b - r * sum_b ** 2 / (1 - r + r * n), 0.0) / (1 - r)


def _candidates(cell_sd: pd.DataFrame, gradient: pd.DataFrame, costs: pd.DataFrame, sigma: np.ndarray,
                correlation: float) -> tuple[np.ndarray, ...]:
    """Candidate cells: unmeasured (sd > 0) with a price (a NaN cost is a column that cannot be bought, e.g. a vote
    tally: `evaluation_costs`); (row, col, sd, g, t = g s of (2), single-cell tau_c of (2r), cost, T_m per model).
    T_m sums over every unmeasured cell of m, priced or not (they all carry its score's error)."""
    sd = cell_sd.to_numpy(dtype=float)
    g = gradient.reindex(index=cell_sd.index, columns=cell_sd.columns).to_numpy(dtype=float)
    usd = costs.reindex(index=cell_sd.index, columns=cell_sd.columns).to_numpy(dtype=float)
    all_rows, all_cols = np.nonzero(sd > 0)
    total = np.bincount(all_rows, weights=g[all_rows, all_cols] * sd[all_rows, all_cols], minlength=len(cell_sd))
    rows, cols = np.nonzero((sd > 0) & np.isfinite(usd))
    t = g[rows, cols] * sd[rows, cols]
    var = shift_variance(t, t ** 2, np.ones_like(t), total[rows], correlation)
    tau = np.sqrt(np.minimum(var, sigma[rows] ** 2))
    return rows, cols, sd[rows, cols], g[rows, cols], t, tau, usd[rows, cols], total


def cell_values(score_draws: np.ndarray, cell_sd: pd.DataFrame, gradient: pd.DataFrame, costs: pd.DataFrame,
                n_nodes: int = 64, correlation: float = 0.0) -> pd.DataFrame:
    """Every unmeasured cell's value V({c}) of (3) (expected regret drop, score units), cost and value per USD,
    ranked both ways (1 = measure first). score_draws: (B, n) draws of the ranked models' scores, columns in
    cell_sd's row order; cell_sd: predictive sd per cell (0 = measured); gradient: g of (2); costs: USD per cell;
    correlation: r of (2r). Columns CELL_COLUMNS, sorted by value."""
    mu, sigma = _posterior(score_draws)
    if score_draws.shape[1] != len(cell_sd):
        raise ValueError("score_draws must have one column per row of cell_sd")
    rows, cols, sd, g, _, tau, usd, _ = _candidates(cell_sd, gradient, costs, sigma, correlation)
    value = single_cell_value(mu, tau, rows, quantile_nodes(n_nodes))
    per = value / np.where(usd > 0, usd, np.nan)
    table = pd.DataFrame({"model_id": cell_sd.index.to_numpy()[rows], "benchmark": cell_sd.columns.to_numpy()[cols],
                          "cell_sd": sd, "gradient": g, "tau": tau, "cost_usd": usd, "value": value,
                          "value_per_usd": per})
    table["rank_value"] = table["value"].rank(ascending=False, method="first").astype(int)
    table["rank_per_usd"] = table["value_per_usd"].rank(ascending=False, method="first", na_option="bottom").astype(int)
    return table.sort_values("rank_value").reset_index(drop=True)[CELL_COLUMNS]


def p_wrong(score_draws: np.ndarray, tau_model: np.ndarray, nodes_by_model: np.ndarray) -> tuple[float, float]:
    """P_wrong(A) of the module docstring and its standard error over the nodes, node error only (the bootstrap
    draws held fixed): E_Z mean_b 1{S'_b(pick_Z) < max S'_b}, Z_lm = nodes_by_model[l, m], SE sqrt(v / L')."""
    s = np.asarray(score_draws, dtype=float)
    mu, sigma = _posterior(s)
    rho = np.sqrt(np.clip(1.0 - tau_model ** 2 / np.maximum(sigma ** 2, 1e-300), 0.0, 1.0))
    centred = (s - mu) * rho
    inner = np.empty(len(nodes_by_model))
    for i, z in enumerate(nodes_by_model):
        means = mu + tau_model * z
        pick = int(np.argmax(means))
        draws = centred + means
        inner[i] = float((draws[:, pick] < draws.max(axis=1)).mean())
    n = inner.size
    se = float(np.sqrt(inner.var(ddof=1) / n)) if n > 1 else float("nan")
    return float(inner.mean()), se


def greedy_batch(score_draws: np.ndarray, cell_sd: pd.DataFrame, gradient: pd.DataFrame, costs: pd.DataFrame,
                 k: int | None = None, budget_usd: float | None = None, per_dollar: bool = False,
                 n_nodes: int = 128, p_wrong_nodes: int = 32, seed: int = 0, correlation: float = 0.0) -> pd.DataFrame:
    """Greedy batch of cells to measure (module docstring, (3) and "Batch"): up to k cells and/or cells whose
    total cost stays within budget_usd (a cell that does not fit is skipped), each step taking the largest
    marginal gain V(A + c) - V(A) (per USD with per_dollar), never a chosen cell, a model's shift of variance
    tau_m(A + c)^2 of (2r) with correlation r; stops early when no cell adds value. Returns BATCH_COLUMNS, one row
    per chosen cell: gain, the batch value V(A) after it, the cumulative spend, P_wrong(A) with its standard
    error and tau_m(A) of the cell's model (step 0 = nothing measured, no cell). A cell without a price is no
    candidate."""
    if k is None and budget_usd is None:
        raise ValueError("greedy_batch needs k, budget_usd or both")
    mu, sigma = _posterior(score_draws)
    if score_draws.shape[1] != len(cell_sd):
        raise ValueError("score_draws must have one column per row of cell_sd")
    rows, cols, _, _, t, _, usd, total = _candidates(cell_sd, gradient, costs, sigma, correlation)
    rng = np.random.default_rng(seed)
    n = mu.size
    base = quantile_nodes(n_nodes)
    z = np.stack([rng.permutation(base) for _ in range(n)], axis=1)  # (L, n) Latin hypercube
    zp = z[rng.choice(n_nodes, min(p_wrong_nodes, n_nodes), replace=False)]
    tau2_model = np.zeros(n)
    s1, s2, count = np.zeros(n), np.zeros(n), np.zeros(n)  # running sums of (2r) per model
    best = mu.max()
    value = 0.0
    chosen = np.zeros(rows.size, dtype=bool)
    spend = 0.0
    wrong = p_wrong(score_draws, np.zeros(n), zp)
    out = [{"step": 0, "model_id": None, "benchmark": None, "cost_usd": 0.0, "gain": 0.0, "value": 0.0,
            "spend_usd": 0.0, "p_wrong": wrong[0], "p_wrong_se": wrong[1], "tau_model": 0.0}]
    limit = rows.size if k is None else min(k, rows.size)
    while len(out) - 1 < limit:
        means = mu + np.sqrt(tau2_model) * z  # (L, n)
        order = np.argsort(-means, axis=1)[:, :2]
        top1 = np.take_along_axis(means, order[:, :1], axis=1)[:, 0]
        top2 = np.take_along_axis(means, order[:, 1:2], axis=1)[:, 0] if n > 1 else np.full(len(z), -np.inf)
        open_ = ~chosen
        if budget_usd is not None:
            open_ &= spend + usd <= budget_usd + 1e-12
        idx = np.flatnonzero(open_)
        if idx.size == 0:
            break
        m = rows[idx]
        var = shift_variance(s1[m] + t[idx], s2[m] + t[idx] ** 2, count[m] + 1, total[m], correlation)
        new_tau = np.sqrt(np.minimum(var, sigma[m] ** 2))
        gains = np.empty(idx.size)
        for start in range(0, idx.size, 2048):  # (chunk, L) at a time
            sl = slice(start, start + 2048)
            mm = m[sl]
            other = np.where(order[:, 0][None, :] == mm[:, None], top2[None, :], top1[None, :])
            shifted = mu[mm][:, None] + new_tau[sl][:, None] * z[:, mm].T
            gains[sl] = np.maximum(shifted, other).mean(axis=1) - best - value
        score = gains / np.maximum(usd[idx], 1e-12) if per_dollar else gains
        pick = int(np.argmax(score))
        if gains[pick] <= 1e-15:
            break
        c = idx[pick]
        chosen[c] = True
        tau2_model[rows[c]] = new_tau[pick] ** 2
        s1[rows[c]] += t[c]
        s2[rows[c]] += t[c] ** 2
        count[rows[c]] += 1
        wrong = p_wrong(score_draws, np.sqrt(tau2_model), zp)
        value += gains[pick]
        spend += usd[c]
        out.append({"step": len(out), "model_id": cell_sd.index[rows[c]], "benchmark": cell_sd.columns[cols[c]],
                    "cost_usd": float(usd[c]), "gain": float(gains[pick]), "value": float(value),
                    "spend_usd": float(spend), "p_wrong": wrong[0], "p_wrong_se": wrong[1],
                    "tau_model": float(new_tau[pick])})
    return pd.DataFrame(out, columns=BATCH_COLUMNS)
