"""Does the value-of-information ranking pick better cells than references that do not think? (issue 49 item 5)

Semi-synthetic world (stated as such in every output): the real catalog matrix x_raw keeps its missingness
pattern and its real prices; its missing cells get a held-out truth, the rank-r imputation plus Gaussian noise of
the imputation's predictive sd (`imputation.predictive_sd`), drawn once per seed, equicorrelated within a model with
correlation r (`rank_uncertainty.imputation_draw`; r = 0: independent cells). The leaderboard score is
linear in the benchmarks,

    Score(m) = sum_j w_j x_mj - lam log10 p_m ,   w_j = 1 / (k sd_j)                       (S)

(the mean z-score, a cost-aware scenario with a log-price penalty; sd_j the observed column sd), so the
linearization (2) of `next_evaluations` is exact here. The agent sees the observed cells only: its posterior is
the rank-r imputation of what it has seen, with B draws of the missing cells from their predictive sd (with the
world's r, which it knows: eq. (2r) of `next_evaluations`).

One run: a strategy orders unmeasured cells; the first k (or, under a dollar budget, the cells in that order that
still fit) are revealed at their true value and replace their imputed values; a model's other unmeasured cells move
by their conditional mean, s_c r / (1 - r + r n) sum_A u_a (u_a = the revealed standardized errors, n of them; none
when r = 0), and the agent picks argmax of its posterior-mean score;
regret = max_m Score_true(m) - Score_true(pick), spend = the revealed cells' USD (`evaluation_costs`), changed = the
pick differs from the pick with nothing revealed. Candidates: unmeasured cells with a price (a NaN cost is not for
sale: `evaluation_costs.NOT_PURCHASABLE`). Strategies: "voi" (`next_evaluations.greedy_batch`, by value for k, by
value per USD under a budget), "random" (uniform), "uncertain" (largest predictive sd over the column's sd), "top2"
(the current #1 and #2's unmeasured cells, alternating), "top5" (uniform among the current top 5's unmeasured
cells: a reference that can move the decision), "cheapest" (lowest USD); with r > 0 also "voi_r0", the VOI ranking
with r forced to 0 (the agent's update still knows r: the ablation of eq. (2r)). Every strategy sees the `World` only
through `AgentView` (observed cells, posterior, costs): none reads the truth (tested).

Well-specified by construction: the world draws the truth from exactly the distribution the agent's posterior
assumes (same imputation, same predictive sd, same r), which is the setting VOI is optimal in. Misspecified worlds
(`make_world`'s sd_scale, agent_correlation): the truth's deviations are sd_scale times wider than the agent's
predictive sd, or the agent assumes a correlation other than the world's.

Hidden leaders (`make_world`'s hide_leaders = N): the real nuisance at the top of frontier_api, whose leaders' rows
are ~82 % imputed. After the truth is drawn, the N models with the best true scores keep only
1 - LEADER_MISSING_SHARE of their row observed (at least LEADER_KEPT cells, chosen at random); the cells hidden are
real measurements, so their truth is the real score, not a draw from the agent's predictive distribution (the
agent's imputation of a sparse leader row is misspecified as the real one is). Hidden cells are for sale when their
column is. Which rows are leaders is the world's choice, not a strategy's: strategies still see only the observed
cells (a sparse row is what the real frontier looks like).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.mlcompass.imputation import impute_low_rank, predictive_sd
from compass.mlcompass.next_evaluations import check_correlation, greedy_batch, linear_gradient
from compass.mlcompass.rank_uncertainty import imputation_draw

STRATEGIES = ("voi", "random", "uncertain", "top2", "top5", "cheapest")
RUN_COLUMNS = ["seed", "setting", "strategy", "n_revealed", "spend_usd", "regret", "regret_none", "changed"]
TOP_MODELS = 5  # "top5": the current top this many models
LEADER_MISSING_SHARE = 0.82  # hidden leaders: the share of a leader's row unobserved (frontier_api's leaders)
LEADER_KEPT = 2  # hidden leaders: cells of a leader's row kept observed at least


@dataclass(frozen=True)
class World:
    """The semi-synthetic world of one seed: truth (complete), what is observed, cell prices, score terms (S)."""

    truth: pd.DataFrame
    observed: pd.DataFrame
    cell_usd: pd.DataFrame
    weights: pd.Series
    penalty: pd.Series  # lam log10 p_m, per model
    rank: int
    max_iter: int = 500
    correlation: float = 0.0  # r: within-model correlation of the truth's deviations from the imputation
    agent_correlation: float = 0.0  # the r the agent assumes (= correlation when well-specified)

    def true_scores(self) -> np.ndarray:
        return self.truth.to_numpy() @ self.weights.to_numpy() - self.penalty.to_numpy()


@dataclass(frozen=True)
class AgentView:
    """What a strategy may see: observed cells, the posterior built from them, cell prices."""

    observed: pd.DataFrame
    completed: pd.DataFrame
    cell_sd: pd.DataFrame
    draws: np.ndarray
    gradient: pd.DataFrame
    cell_usd: pd.DataFrame
    mu: np.ndarray
    correlation: float = 0.0


def streams(seed: int) -> list[np.random.SeedSequence]:
    """Independent random streams of one seed: the world's truth, the agent's posterior draws, the strategies.
    One stream for both made the agent's first posterior draw equal to the true scores (review of issue 49)."""
    return np.random.SeedSequence(seed).spawn(3)


def make_world(x_raw: pd.DataFrame, cell_usd: pd.DataFrame, log_price: pd.Series, lam: float, rank: int,
               seed: int, max_iter: int = 500, correlation: float = 0.0, sd_scale: float = 1.0,
               agent_correlation: float | None = None, hide_leaders: int = 0) -> World:
    """The world of one seed (module docstring): missing cells of x_raw filled with imputation + N(0, (sd_scale
    sd)^2), equicorrelated within a model (r = correlation, in [0, MAX_CORRELATION]: clip it where it is read); the
    agent assumes agent_correlation (None: the world's). max_iter: PCA-EM passes of every imputation (the agent's
    too). hide_leaders: the true top this many models' rows mostly hidden (module docstring, "Hidden leaders")."""
    r = check_correlation(correlation)
    imp = impute_low_rank(x_raw, rank=rank, max_iter=max_iter)
    sd = predictive_sd(x_raw, imp.completed, rank)
    rng = np.random.default_rng(streams(seed)[0])
    truth = imp.completed + imputation_draw(sd * sd_scale, r, rng)
    truth = truth.where(x_raw.isna(), x_raw)
    weights = 1.0 / (x_raw.shape[1] * x_raw.std(axis=0))
    assumed = r if agent_correlation is None else check_correlation(agent_correlation)
    penalty = lam * log_price.reindex(x_raw.index)
    observed = x_raw
    if hide_leaders > 0:
        true = truth.to_numpy() @ weights.to_numpy() - penalty.to_numpy()
        observed = hide_leader_cells(x_raw, np.argsort(-true, kind="stable")[:hide_leaders], rng)
    return World(truth, observed, cell_usd, weights, penalty, rank, max_iter, r, assumed)


def hide_leader_cells(x_raw: pd.DataFrame, leaders: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """x_raw with each leader row's observed cells hidden at random until LEADER_MISSING_SHARE of the row is missing,
    keeping at least LEADER_KEPT observed (module docstring, "Hidden leaders")."""
    out = x_raw.copy()
    keep = max(LEADER_KEPT, int(np.floor((1 - LEADER_MISSING_SHARE) * x_raw.shape[1])))
    for row in leaders:
        seen = np.flatnonzero(x_raw.iloc[row].notna().to_numpy())
        if seen.size > keep:
            out.iloc[row, rng.choice(seen, seen.size - keep, replace=False)] = np.nan
    return out


def agent_view(world: World, observed: pd.DataFrame, n_draws: int, seed: int) -> AgentView:
    """The agent's posterior from `observed` (never the truth): imputation, predictive sd, B score draws."""
    imp = impute_low_rank(observed, rank=world.rank, max_iter=world.max_iter)
    sd = predictive_sd(observed, imp.completed, world.rank)
    w = world.weights.to_numpy()
    mu = imp.completed.to_numpy() @ w - world.penalty.to_numpy()
    rng = np.random.default_rng(streams(seed)[1])
    r = world.agent_correlation
    noise = rng.standard_normal((n_draws,) + observed.shape)
    if r > 0:  # the shared part of each model's cells (rank_uncertainty.imputation_draw, B at once)
        noise = np.sqrt(r) * rng.standard_normal((n_draws, observed.shape[0], 1)) + np.sqrt(1 - r) * noise
    draws = mu + (noise * sd.to_numpy()) @ w
    grad = linear_gradient(world.weights, observed.index, observed.columns)
    return AgentView(observed, imp.completed, sd, draws, grad, world.cell_usd, mu, r)


def order_cells(strategy: str, view: AgentView, limit: int | None, budget_usd: float | None,
                seed: int) -> list[tuple[int, int]]:
    """Unmeasured cells (row, col) in the order `strategy` would measure them (module docstring)."""
    missing = view.observed.isna().to_numpy() & np.isfinite(view.cell_usd.to_numpy())  # for sale
    rows, cols = np.nonzero(missing)
    usd = view.cell_usd.to_numpy()[rows, cols]
    if strategy in ("voi", "voi_r0"):
        batch = greedy_batch(view.draws, view.cell_sd, view.gradient, view.cell_usd, k=limit,
                             budget_usd=budget_usd, per_dollar=budget_usd is not None, seed=seed,
                             correlation=view.correlation if strategy == "voi" else 0.0).iloc[1:]
        return list(zip(view.observed.index.get_indexer(batch["model_id"]),
                        view.observed.columns.get_indexer(batch["benchmark"])))
    if strategy == "random":
        order = np.random.default_rng(seed).permutation(rows.size)
    elif strategy == "uncertain":
        rel = view.cell_sd.to_numpy()[rows, cols] / view.observed.std(axis=0).to_numpy()[cols]
        order = np.argsort(-rel, kind="stable")
    elif strategy == "cheapest":
        order = np.argsort(usd, kind="stable")
    elif strategy == "top2":
        first, second = np.argsort(-view.mu, kind="stable")[:2]
        a, b = np.flatnonzero(rows == first), np.flatnonzero(rows == second)
        order = np.array([i for pair in zip(a, b) for i in pair] + list(a[len(b):]) + list(b[len(a):]), dtype=int)
    elif strategy == "top5":
        top = np.flatnonzero(np.isin(rows, np.argsort(-view.mu, kind="stable")[:TOP_MODELS]))
        order = np.random.default_rng(seed).permutation(top)
    else:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    return list(zip(rows[order], cols[order]))


def take(order: list[tuple[int, int]], cell_usd: pd.DataFrame, k: int | None, budget_usd: float | None
         ) -> list[tuple[int, int]]:
    """The first k cells of `order`, or under a budget those that still fit, in order (a cell too dear is skipped)."""
    if budget_usd is None:
        return order[:k]
    out, spend, usd = [], 0.0, cell_usd.to_numpy()
    for r, c in order:
        if spend + usd[r, c] <= budget_usd + 1e-12:
            out.append((r, c))
            spend += usd[r, c]
    return out


def reveal(view: AgentView, truth: pd.DataFrame, cells: list[tuple[int, int]]) -> np.ndarray:
    """The agent's completed matrix after `cells` came back at their true values (module docstring): each revealed
    cell replaces its imputed value, a model's other unmeasured cells move by their conditional mean under r."""
    seen = view.completed.to_numpy().copy()
    sd = view.cell_sd.to_numpy()
    r = view.correlation
    by_model: dict[int, list[int]] = {}
    for row, col in cells:
        by_model.setdefault(row, []).append(col)
    for row, cols in by_model.items():
        u = (truth.to_numpy()[row, cols] - seen[row, cols]) / sd[row, cols]
        if r > 0:
            others = (sd[row] > 0) & ~np.isin(np.arange(seen.shape[1]), cols)
            seen[row, others] += sd[row, others] * r / (1 - r + r * len(cols)) * u.sum()
        seen[row, cols] = truth.to_numpy()[row, cols]
    return seen


def run_seed(x_raw: pd.DataFrame, cell_usd: pd.DataFrame, log_price: pd.Series, lam: float, rank: int, seed: int,
             ks: tuple[int, ...] = (5, 10, 20), budgets: tuple[float, ...] = (), n_draws: int = 200,
             strategies: tuple[str, ...] = STRATEGIES, max_iter: int = 500, correlation: float = 0.0,
             sd_scale: float = 1.0, agent_correlation: float | None = None, hide_leaders: int = 0) -> pd.DataFrame:
    """Every strategy x setting (each k, each USD budget) on the world of one seed (`make_world`'s arguments):
    RUN_COLUMNS rows; when the agent assumes r > 0 the ablation "voi_r0" too."""
    world = make_world(x_raw, cell_usd, log_price, lam, rank, seed, max_iter, correlation, sd_scale,
                       agent_correlation, hide_leaders)
    if world.agent_correlation > 0 and "voi_r0" not in strategies:
        strategies = (*strategies, "voi_r0")
    true = world.true_scores()
    view = agent_view(world, world.observed, n_draws, seed)
    strategy_seed = int(streams(seed)[2].generate_state(1)[0])
    pick_none = int(np.argmax(view.mu))
    regret_none = float(true.max() - true[pick_none])
    settings = [(f"k={k}", k, None) for k in ks] + [(f"usd={b:g}", None, b) for b in budgets]
    rows = []
    for strategy in strategies:
        for name, k, budget in settings:
            cells = take(order_cells(strategy, view, k, budget, strategy_seed), cell_usd, k, budget)
            # the agent's update, coherent with the world (imputation + within-model correlated cell noise), not a
            # re-imputation (that carried a reveal's noise into every other cell, so revealing made decisions worse
            # on average: review of issue 49)
            mu = reveal(view, world.truth, cells) @ world.weights.to_numpy() - world.penalty.to_numpy()
            pick = int(np.argmax(mu))
            spend = float(sum(cell_usd.iat[r, c] for r, c in cells))
            rows.append({"seed": seed, "setting": name, "strategy": strategy, "n_revealed": len(cells),
                         "spend_usd": spend, "regret": float(true.max() - true[pick]), "regret_none": regret_none,
                         "changed": pick != pick_none})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def compare(runs: pd.DataFrame, reference: str = "voi") -> pd.DataFrame:
    """Per setting and strategy: mean regret, spend, how many seeds' picks the reveals changed (n_changed), and the
    paired (same seed) difference against `reference` in regret and in regret reduction per USD, (regret_none - regret) / spend (0 when nothing was spent), with 2 SE
    and a verdict: "voi better" / "voi worse" when the mean paired difference is beyond 2 SE, else "tie"."""
    r = runs.assign(gain_per_usd=np.where(runs["spend_usd"] > 0,
                                          (runs["regret_none"] - runs["regret"]) / runs["spend_usd"].where(
                                              runs["spend_usd"] > 0, 1.0), 0.0))
    base = r[r["strategy"] == reference].set_index(["setting", "seed"])
    out = []
    for (setting, strategy), g in r.groupby(["setting", "strategy"], sort=False):
        g = g.set_index(["setting", "seed"])
        b = base.loc[g.index]
        d_regret = (g["regret"] - b["regret"]).to_numpy()  # > 0: the reference regrets more
        d_gain = (b["gain_per_usd"] - g["gain_per_usd"]).to_numpy()  # > 0: voi buys more regret drop per USD
        n = len(g)
        se_r = d_regret.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
        se_g = d_gain.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan

        def verdict(d: float, se: float) -> str:
            return "—" if strategy == reference else ("voi better" if d > 2 * se else "voi worse" if d < -2 * se
                                                       else "tie")
        out.append({"setting": setting, "strategy": strategy, "n_seeds": n, "n_changed": int(g["changed"].sum()),
                    "regret": g["regret"].mean(),
                    "spend_usd": g["spend_usd"].mean(), "n_revealed": g["n_revealed"].mean(),
                    "regret_minus_voi": d_regret.mean(), "se_regret": se_r,
                    "regret_verdict": verdict(d_regret.mean(), se_r),
                    "gain_per_usd": g["gain_per_usd"].mean(), "voi_minus_gain_per_usd": d_gain.mean(),
                    "se_gain_per_usd": se_g, "per_usd_verdict": verdict(d_gain.mean(), se_g)})
    return pd.DataFrame(out)
