"""What to measure next (issue 49 items 1, 2): value of information of unmeasured cells, greedy batches, prices.
All catalogs here are synthetic (generated in the tests).

Mutations applied by hand, each red: the preposterior draw at the point imputation (cell sd replaced by 0 in
`_candidates`); `single_cell_value` comparing with the best mean including the cell's own model; the greedy batch
without `~chosen` (re-picks a chosen cell); `cell_costs` without the question count (np.outer(c, 1));
`usd_per_question` ignoring a model's own LiveBench cost; the budget check dropped."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from compass.mlcompass.evaluation_costs import cell_costs, question_counts, usd_per_question
from compass.mlcompass.next_evaluations import (
    BATCH_COLUMNS,
    CELL_COLUMNS,
    cell_values,
    finite_difference_gradient,
    greedy_batch,
    linear_gradient,
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


def test_costs_scale_with_questions_and_use_livebench_prices():
    x = pd.DataFrame(np.nan, index=["a", "b", "c"], columns=["math_comp", "hf_bbh", "unknown"])
    live = pd.DataFrame({"model": ["a", "z"], "cost_per_question": [0.02, 0.01], "input_price_per_million": [1.0, 2.0],
                         "output_price_per_million": [3.0, 2.0], "nq_math_comp": [100, 100], "nq_spatial": [40, 40]})
    q = question_counts(x.columns, live)
    assert q.to_dict() == {"math_comp": 100.0, "hf_bbh": 6511.0, "unknown": 70.0}
    price = pd.Series({"a": 99.0, "b": 4.0})
    c = usd_per_question(x.index, price, live)
    tokens = np.median([0.02 * 1e6 / 2.0, 0.01 * 1e6 / 2.0])
    assert c["a"] == pytest.approx(0.02)  # its own LiveBench cost, not its price
    assert c["b"] == pytest.approx(tokens * 4.0 / 1e6)
    assert c["c"] == pytest.approx(np.median([0.02, tokens * 4.0 / 1e6]))  # no price: the median rule
    usd = cell_costs(x, q, c)
    assert usd.loc["a", "hf_bbh"] == pytest.approx(6511 * 0.02)
    assert usd.loc["b", "math_comp"] / usd.loc["b", "unknown"] == pytest.approx(100 / 70)
    with pytest.raises(ValueError):
        cell_costs(x, q.drop("unknown"), c)


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
