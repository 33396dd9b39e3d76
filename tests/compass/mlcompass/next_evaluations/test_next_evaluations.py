"""What to measure next (issue 49 items 1, 2): value of information of unmeasured cells, greedy batches, prices.
All catalogs here are synthetic (generated in the tests).

Mutations applied by hand, each red: the preposterior draw at the point imputation (cell sd replaced by 0 in
`_candidates`); `single_cell_value` comparing with the best mean including the cell's own model; the greedy batch
without `~chosen` (re-picks a chosen cell); `cell_costs` without the question count (q = 1); `benchmark_profiles`
ignoring LiveBench's per-task counts or tokens (every task at the typical profile); the budget check dropped;
greedy_batch without `count[rows[c]] += 1` or without the s1 / s2 updates (second review of issue 49); p_wrong's SE
with the finite-population correction or without 1 / L'; `benchmark_profiles` pricing vote and agentic columns;
`_candidates` keeping cells without a price; `shift_variance` clipping r on its own."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from compass.mlcompass.evaluation_costs import benchmark_profiles, cell_costs, token_prices
from compass.mlcompass.next_evaluations import (
    BATCH_COLUMNS,
    CELL_COLUMNS,
    MAX_CORRELATION,
    cell_values,
    clip_correlation,
    finite_difference_gradient,
    greedy_batch,
    linear_gradient,
    p_wrong,
    quantile_nodes,
    shift_variance,
)


def _catalog(n: int = 12, k: int = 6, seed: int = 0, spread: float = 0.02, sd: float = 0.3, share: float = 0.5):
    """Synthetic: completed matrix, predictive sd on a random `share` of cells, equal weights, draws whose spread
    is that of the imputation (no cap binds), random per-cell costs."""
    rng = np.random.default_rng(seed)
    models = pd.Index([f"m{i:02d}" for i in range(n)])
    benches = pd.Index([f"b{j}" for j in range(k)])
    completed = pd.DataFrame(rng.normal(0, 0.1, (n, k)), index=models, columns=benches)
    completed.iloc[:, 0] += np.linspace(0, spread * k, n)  # a near-tied top
    cell_sd = pd.DataFrame(np.where(rng.random((n, k)) < share, sd, 0.0), index=models, columns=benches)
    grad = linear_gradient(pd.Series(1.0 / k, index=benches), models, benches)
    mu = completed.to_numpy() @ np.full(k, 1.0 / k)
    tot = np.sqrt(((grad.to_numpy() * cell_sd.to_numpy()) ** 2).sum(axis=1) + 0.01 ** 2)
    z = rng.standard_normal((400, n))
    z = (z - z.mean(0)) / z.std(0, ddof=1)
    draws = mu + z * tot
    costs = pd.DataFrame(rng.uniform(1, 50, (n, k)), index=models, columns=benches)
    return completed, cell_sd, grad, draws, costs


def _kg(mu: np.ndarray, i: int, tau: float) -> float:
    """Closed form of (3) for one cell: tau f(-d / tau), f(z) = z Phi(z) + phi(z)."""
    d = abs(mu[i] - np.delete(mu, i).max())
    return tau * (-d / tau * norm.cdf(-d / tau) + norm.pdf(-d / tau))


def test_single_cell_value_matches_the_closed_form_and_uses_the_predictive_spread():
    _, cell_sd, grad, draws, costs = _catalog()
    table = cell_values(draws, cell_sd, grad, costs, n_nodes=512)
    assert list(table.columns) == CELL_COLUMNS
    assert len(table) == int((cell_sd.to_numpy() > 0).sum())
    mu = draws.mean(axis=0)
    pos = cell_sd.index.get_indexer(table["model_id"])
    closed = np.array([_kg(mu, i, t) for i, t in zip(pos, table["tau"])])
    assert table["tau"].to_numpy() == pytest.approx(cell_sd.to_numpy()[cell_sd.to_numpy() > 0][0] / 6)
    assert table["value"].to_numpy() == pytest.approx(closed, rel=0.02, abs=2e-5)
    assert (table["value"] > 1e-4).sum() >= 3  # the near-tied top's cells are worth something
    # twice the predictive sd: every cell worth more (the draw is from the distribution, not the point)
    wider = cell_values(draws * 0 + (draws - mu) * 2 + mu, cell_sd * 2, grad, costs, n_nodes=512)
    merged = table.merge(wider, on=["model_id", "benchmark"])
    top = merged["value_x"] > 1e-4
    assert (merged.loc[top, "value_y"] > merged.loc[top, "value_x"] * 1.3).all()


def test_value_against_exact_recomputation_with_a_nonlinear_score():
    """The linearization (2) against re-scoring the completed matrix at each drawn cell value (a small catalog, a
    nonlinear utility): draw y ~ N(x^, s^2), put it in the cell, recompute every score, re-rank, average."""
    completed, cell_sd, _, _, costs = _catalog(n=8, k=4, seed=3, spread=0.05)

    def score_fn(x: pd.DataFrame) -> np.ndarray:
        return np.log1p(np.exp(x.to_numpy() @ np.array([0.4, 0.3, 0.2, 0.1])))

    grad = finite_difference_gradient(score_fn, completed)
    mu = score_fn(completed)
    rng = np.random.default_rng(1)
    z = rng.standard_normal((2000, len(mu)))
    draws = mu + (z - z.mean(0)) / z.std(0, ddof=1) * 0.5  # wide: the cap does not bind
    table = cell_values(draws, cell_sd, grad, costs, n_nodes=256).head(6)
    y = norm.ppf((np.arange(4000) + 0.5) / 4000)
    for _, row in table.iterrows():
        i, j = completed.index.get_loc(row["model_id"]), completed.columns.get_loc(row["benchmark"])
        best = []
        for yy in y[::10]:
            x = completed.copy()
            x.iat[i, j] += yy * cell_sd.iat[i, j]
            best.append(score_fn(x).max())
        exact = np.mean(best) - mu.max()
        assert row["value"] == pytest.approx(exact, rel=0.1, abs=2e-4)


def test_greedy_batch_never_repicks_and_respects_budget():
    _, cell_sd, grad, draws, costs = _catalog(n=6, k=3, share=1.0, spread=0.005)
    n_cells = int((cell_sd.to_numpy() > 0).sum())
    batch = greedy_batch(draws * 0 + (draws - draws.mean(0)) * 50 + draws.mean(0), cell_sd, grad, costs, k=n_cells)
    assert list(batch.columns) == BATCH_COLUMNS
    chosen = batch.iloc[1:]
    assert not chosen.duplicated(["model_id", "benchmark"]).any()
    assert len(chosen) >= 4
    assert (np.diff(batch["value"]) >= -1e-12).all()
    budget = 40.0
    by_usd = greedy_batch(draws, cell_sd, grad, costs, budget_usd=budget, per_dollar=True)
    assert by_usd["spend_usd"].iloc[-1] <= budget
    assert by_usd["spend_usd"].iloc[-1] == pytest.approx(by_usd["cost_usd"].sum())
    first = cell_values(draws, cell_sd, grad, costs, n_nodes=128).iloc[0]
    top = greedy_batch(draws, cell_sd, grad, costs, k=1).iloc[1]
    assert top["gain"] == pytest.approx(first["value"], rel=1e-9)  # step 1 of the greedy = the best single cell


def test_costs_follow_livebench_per_task_questions_and_tokens():
    """Eq. (1) of `evaluation_costs`: q_j x (T_in p_in + T_out p_out) / 1e6 with LiveBench's per-task q and tokens
    (the benchmark names `livebench_task_<x>` the connector writes); vote and agentic columns unpriced."""
    scores = pd.DataFrame({
        "model_id": ["a", "z", "a", "z", "a"],
        "benchmark": ["livebench_task_python", "livebench_task_python", "livebench_task_typos", "livebench_task_typos",
                      "livebench_global"],  # a sum of tasks: not in the typical task's profile
        "n_questions": [20.0, 20.0, 50.0, 50.0, 1270.0], "run_usd": [3.0, 1.0, 0.04, 0.02, 30.0],
        "input_tokens_per_question": [300_000.0, 280_000.0, 300.0, 400.0, 9_000.0],
        "output_tokens_per_question": [30_000.0, 32_000.0, 2_000.0, 3_000.0, 15_000.0]})
    benches = ["livebench_task_python", "livebench_task_typos", "hf_bbh", "unknown", "lmarena_english",
               "swe_bench_verified", "fictionlivebench_120k"]
    profiles = benchmark_profiles(benches, scores)
    # votes and agentic / long-context runs are not for sale: no price, never a candidate
    assert profiles.loc[["lmarena_english", "swe_bench_verified", "fictionlivebench_120k"]].isna().all(axis=None)
    profiles = profiles.iloc[:4]
    assert profiles.loc["livebench_task_python"].tolist() == [20.0, 290_000.0, 31_000.0]
    assert profiles.loc["livebench_task_typos"].tolist() == [50.0, 350.0, 2_500.0]
    assert profiles.loc["hf_bbh", "questions"] == 6511.0  # a published size, the median task's tokens
    assert profiles.loc["unknown"].tolist() == [35.0, (290_000 + 350) / 2, (31_000 + 2_500) / 2]
    prices = token_prices(pd.DataFrame({"model_id": ["a", "b", "b", "z"], "input_usd_per_mtok": [1.0, 2.0, 8.0, 1.0],
                                        "output_usd_per_mtok": [4.0, 6.0, 1.0, 2.0]}), ["a", "b", "c"])
    assert prices.loc["b"].tolist() == [2.0, 6.0]  # blend 3.0 beats 6.25
    usd = cell_costs(profiles, prices)
    assert usd.loc["b", "livebench_task_python"] == pytest.approx(20 * (290_000 * 2.0 + 31_000 * 6.0) / 1e6)
    assert usd.loc["b", "livebench_task_typos"] == pytest.approx(50 * (350 * 2.0 + 2_500 * 6.0) / 1e6)
    # 20 agentic-coding questions cost ~20x the 50 typos questions at the same price
    assert usd.loc["b", "livebench_task_python"] / usd.loc["b", "livebench_task_typos"] > 15
    assert usd.loc["c"].tolist() == pytest.approx(usd.loc[["a", "b"]].median().tolist())  # unpriced: the median
    plain = cell_costs(benchmark_profiles(["x", "hf_bbh"]), prices)
    assert plain.loc["a", "hf_bbh"] / plain.loc["a", "x"] == pytest.approx(6511 / 50)
    with pytest.raises(ValueError):
        cell_costs(profiles, prices.iloc[:0].reindex(["c"]))


def test_one_case_scenario_at_300_models_by_40_benchmarks_is_fast():
    """The brief's scale: 300 x 40, half the cells unmeasured, B = 200, every cell valued and a 20-cell batch (and a
    budgeted one by value per USD) in well under 20 s (~0.5 s measured on 2 shared cores)."""
    import time

    _, cell_sd, grad, draws, costs = _catalog(n=300, k=40, spread=0.001)
    start = time.perf_counter()
    table = cell_values(draws[:200], cell_sd, grad, costs)
    batch = greedy_batch(draws[:200], cell_sd, grad, costs, k=20)
    greedy_batch(draws[:200], cell_sd, grad, costs, budget_usd=200.0, per_dollar=True)
    assert time.perf_counter() - start < 20.0
    assert len(table) > 5000 and len(batch) == 21


def test_equicorrelated_shift_matches_the_conditional_expectation_by_matrices():
    """(2r): Var(E[D | u_A]) = Cov(D, u_A) Corr(u_A)^-1 Cov(u_A, D), by matrices, for subsets of 6 cells."""
    rng = np.random.default_rng(3)
    t, r = rng.normal(0, 1, 6), 0.35
    corr = (1 - r) * np.eye(6) + r
    cov_d = corr @ t  # Cov(D, u_c) with D = sum_c t_c u_c
    for a in ([0], [1, 4], [0, 2, 3, 5], list(range(6))):
        brute = cov_d[a] @ np.linalg.solve(corr[np.ix_(a, a)], cov_d[a])
        ours = shift_variance(t[a].sum(), (t[a] ** 2).sum(), len(a), t.sum(), r)
        assert ours == pytest.approx(brute, rel=1e-10)
    assert shift_variance(t.sum(), (t ** 2).sum(), 6, t.sum(), r) == pytest.approx(t @ corr @ t)  # all of U: Var(D)


def test_correlated_cells_move_the_top_cell_to_the_model_with_many_unmeasured_cells():
    """Two tied contenders: 'one' with a single unmeasured cell of sd 0.2, 'many' with six of sd 0.12. Independent
    (r = 0), 'one''s cell is worth most; with the within-model correlation r = 0.5 a cell of 'many' also tells
    about its five other cells (b = 0.5 t + 0.5 T) and comes first. Red when the correlation is ignored."""
    models, benches = pd.Index(["one", "many", "low"]), pd.Index([f"b{j}" for j in range(6)])
    cell_sd = pd.DataFrame(0.0, index=models, columns=benches)
    cell_sd.loc["one", "b0"] = 0.2
    cell_sd.loc["many"] = 0.12
    grad = linear_gradient(pd.Series(1.0, index=benches), models, benches)
    z = np.random.default_rng(0).standard_normal((2000, 3))
    draws = np.array([1.0, 1.0, 0.0]) + z * 2.0  # wide posteriors: no cap binds
    costs = pd.DataFrame(1.0, index=models, columns=benches)
    independent = cell_values(draws, cell_sd, grad, costs, correlation=0.0)
    correlated = cell_values(draws, cell_sd, grad, costs, correlation=0.5)
    assert independent.iloc[0]["model_id"] == "one"
    assert correlated.iloc[0]["model_id"] == "many"
    assert correlated.set_index("model_id").loc["many", "tau"].iloc[0] == pytest.approx(0.5 * 0.12 + 0.5 * 0.72)
    assert greedy_batch(draws, cell_sd, grad, costs, k=1, correlation=0.0)["model_id"].iloc[1] == "one"
    assert greedy_batch(draws, cell_sd, grad, costs, k=1, correlation=0.5)["model_id"].iloc[1] == "many"


def test_p_wrong_standard_error_against_fresh_node_sets():
    """P_wrong's SE sqrt(v / L') (node error only, the bootstrap draws held fixed) against the spread of the estimate
    over fresh node sets, each drawn as greedy_batch draws them (a new Latin hypercube of 128 nodes, L' rows of it):
    conservative and close at L' = 32 (measured 0.033 vs 0.031), conservative at L' = 128 (the 128 nodes are a
    sample too: not SE 0). Red with the finite-population correction (SE 0 at L' = L) or without 1 / L'."""
    _, cell_sd, _, draws, _ = _catalog(n=12, spread=0.01)
    tau = draws.std(axis=0, ddof=1) * 0.8
    for used in (32, 128):
        runs = []
        for seed in range(80):
            rng = np.random.default_rng(seed)
            z = np.stack([rng.permutation(quantile_nodes(128)) for _ in range(draws.shape[1])], axis=1)
            runs.append(p_wrong(draws, tau, z[rng.choice(128, used, replace=False)]))
        estimates, ses = np.array([r[0] for r in runs]), np.array([r[1] for r in runs])
        assert estimates.std(ddof=1) > 0.005
        assert 0.9 * estimates.std(ddof=1) < ses.mean() < 1.6 * estimates.std(ddof=1), used
    batch = greedy_batch(draws, cell_sd, linear_gradient(pd.Series(1 / 6, index=cell_sd.columns), cell_sd.index,
                                                         cell_sd.columns), cell_sd * 0 + 1.0, k=3)
    assert batch["p_wrong_se"].iloc[0] == 0.0 and (batch["p_wrong_se"].iloc[1:] > 0).all()


def test_greedy_batch_keeps_each_models_correlated_shift_by_matrices():
    """(2r) along the greedy path: r = 0.4, model 'a' with 4 unmeasured cells, 'c' with 2, unequal t; after every
    step the chosen cell's model has tau_m(A)^2 = b' R_A^-1 b, b_a = Cov(D_m, u_a) = ((1 - r) I + r 11')_a. t,
    computed with explicit matrices over the cells of that model chosen so far. Red without the count or the
    s1 / s2 updates."""
    models, benches = pd.Index(["a", "b", "c"]), pd.Index([f"b{j}" for j in range(4)])
    cell_sd = pd.DataFrame(0.0, index=models, columns=benches)
    cell_sd.loc["a"] = [0.1, 0.3, 0.2, 0.15]
    cell_sd.loc["c", ["b0", "b2"]] = [0.25, 0.05]
    grad = linear_gradient(pd.Series(1.0, index=benches), models, benches)
    z = np.random.default_rng(0).standard_normal((2000, 3))
    draws = np.array([1.0, 1.0, 0.95]) + z * 2.0  # wide posteriors: no cap binds
    r = 0.4
    batch = greedy_batch(draws, cell_sd, grad, pd.DataFrame(1.0, index=models, columns=benches), k=6, correlation=r)
    assert len(batch) == 7 and batch.iloc[1:]["model_id"].value_counts()["a"] >= 3
    for step in range(1, len(batch)):
        model = batch["model_id"].iloc[step]
        chosen = batch.iloc[1:step + 1]
        t_all = cell_sd.loc[model].to_numpy()
        unmeasured = np.flatnonzero(t_all > 0)
        t = t_all[unmeasured]
        corr = (1 - r) * np.eye(len(t)) + r
        a = [list(unmeasured).index(benches.get_loc(b)) for b in chosen.loc[chosen["model_id"] == model, "benchmark"]]
        cov = corr[a] @ t  # Cov(u_a, D_m), D_m = sum_c t_c u_c
        expected = cov @ np.linalg.solve(corr[np.ix_(a, a)], cov)
        assert batch["tau_model"].iloc[step] ** 2 == pytest.approx(expected, rel=1e-9), step


def test_cells_without_a_price_are_no_candidates_and_r_is_clipped_where_read():
    """A NaN cost (a vote column, `evaluation_costs`) keeps a cell out of the values and the batch, while its error
    still counts in its model's T_m; r is clipped once where read (`clip_correlation`), a function handed an
    unclipped r refuses it instead of clipping on its own (ranking and update cannot disagree)."""
    _, cell_sd, grad, draws, costs = _catalog(share=1.0)
    costs = costs.copy()
    costs["b1"] = np.nan
    table = cell_values(draws, cell_sd, grad, costs)
    assert len(table) == 5 * len(cell_sd) and "b1" not in set(table["benchmark"])
    batch = greedy_batch(draws, cell_sd, grad, costs, k=15, correlation=0.3)
    assert "b1" not in set(batch["benchmark"].dropna())
    assert clip_correlation(0.99) == MAX_CORRELATION and clip_correlation(float("nan")) == 0.0
    assert clip_correlation(-0.2) == 0.0
    with pytest.raises(ValueError):
        shift_variance(1.0, 1.0, 1, 2.0, 0.99)
