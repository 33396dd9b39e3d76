"""The simulation of issue 49 item 5 on a small SYNTHETIC catalog (rank-2 matrix with holes, made-up prices).

Mutations applied by hand, each red: the agent's predictive sd widened by |truth - imputation| (every strategy,
references included, then sees the truth); `take` ignoring the budget; `run_seed` scoring the pick on the agent's
imputation instead of the truth (regret 0 everywhere); the agent's predictive sd widened by |truth - imputation| in a
world with r = 0.26 (red for voi and voi_r0 too); `reveal` without the 1 / (1 - r + r n) of the conditional mean
(second review of issue 49); `order_cells` keeping cells without a price."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.next_evaluations_simulation import (
    RUN_COLUMNS,
    STRATEGIES,
    agent_view,
    compare,
    make_world,
    order_cells,
    reveal,
    run_seed,
    take,
)


def _catalog(n: int = 30, k: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (n, 2)) @ rng.normal(0, 1, (2, k)) + rng.normal(0, 0.3, (n, k))
    x[rng.random((n, k)) < 0.35] = np.nan
    x[:, 0] = np.where(np.isnan(x[:, 0]), 0.1, x[:, 0])  # every model keeps one observed cell
    models = [f"m{i:02d}" for i in range(n)]
    frame = pd.DataFrame(x, index=models, columns=[f"b{j}" for j in range(k)])
    usd = pd.DataFrame(rng.uniform(1, 20, (n, k)), index=models, columns=frame.columns)
    log_price = pd.Series(rng.uniform(-1, 1, n), index=models)
    return frame, usd, log_price


def test_strategies_do_not_see_the_truth():
    """Every strategy (voi_r0 included) orders the same cells whatever the truth, independent (r = 0) or
    correlated (r = 0.26) world; only unmeasured cells with a price (column b3 is not for sale)."""
    x, usd, lp = _catalog()
    usd = usd.copy()
    usd["b3"] = np.nan
    for r in (0.0, 0.26):
        world = make_world(x, usd, lp, 0.1, 2, seed=0, correlation=r)
        other = dataclasses.replace(world, truth=world.truth.where(x.notna(), world.truth + 5.0 * np.sign(
            np.random.default_rng(9).standard_normal(x.shape))))
        for strategy in (*STRATEGIES, "voi_r0"):
            for k, budget in ((6, None), (None, 40.0)):
                a = order_cells(strategy, agent_view(world, world.observed, 100, 1), k, budget, 1)
                b = order_cells(strategy, agent_view(other, other.observed, 100, 1), k, budget, 1)
                assert a == b, (r, strategy)
                assert a and all(np.isnan(x.iat[i, c]) and np.isfinite(usd.iat[i, c]) for i, c in a), (r, strategy)


def test_run_seed_reveals_measures_and_compares():
    x, usd, lp = _catalog()
    runs = pd.concat([run_seed(x, usd, lp, 0.1, 2, seed, ks=(3,), budgets=(30.0,), n_draws=100) for seed in range(3)])
    assert list(runs.columns) == RUN_COLUMNS
    assert (runs["regret"] >= 0).all() and (runs["regret_none"] > 0).any() and (runs["regret"] > 0).any()
    budget = runs[runs["setting"] == "usd=30"]
    assert (budget["spend_usd"] <= 30.0 + 1e-9).all()
    assert (runs.loc[runs["setting"] == "k=3", "n_revealed"] <= 3).all()
    assert (runs.loc[(runs["setting"] == "k=3") & (runs["strategy"] == "random"), "n_revealed"] == 3).all()
    assert runs.loc[~np.isclose(runs["regret"], runs["regret_none"]), "changed"].all()  # other regret: other pick
    table = compare(runs)
    assert set(table["strategy"]) == set(STRATEGIES) and (table["n_seeds"] == 3).all()
    assert (table["n_changed"] == runs.groupby(["setting", "strategy"], sort=False)["changed"].sum().to_numpy()).all()
    assert set(table["regret_verdict"]) <= {"—", "voi better", "voi worse", "tie"}
    order = [(0, 1), (1, 1), (2, 1)]
    cheap = pd.DataFrame(1.0, index=x.index, columns=x.columns)
    cheap.iat[1, 1] = 100.0
    assert take(order, cheap, None, 2.0) == [(0, 1), (2, 1)]


def test_the_agents_posterior_draws_are_not_the_truth_under_one_seed():
    """World and agent of one seed draw from separate streams: with a shared stream the agent's first posterior
    draw was exactly the true scores (review of issue 49); red with `streams` returning one stream twice."""
    x, usd, lp = _catalog()
    world = make_world(x, usd, lp, 0.1, 2, seed=0)
    view = agent_view(world, world.observed, 50, 0)
    true = world.true_scores()
    assert min(np.abs(draw - true).max() for draw in view.draws) > 1e-6


def test_a_reveal_moves_the_models_other_cells_by_their_conditional_mean():
    """r = 0.6: 1 to 3 cells per model come back (so 1 - r + r n is not 1); every other unmeasured cell c of the
    model moves to x^_c + s_c E[u_c | u_A], E[u_c | u_A] = Cov(u_c, u_A) R_A^-1 u_A computed with explicit matrices,
    and the moved cells are closer to the truth than the imputation. Red without the 1 / (1 - r + r n)."""
    x, usd, lp = _catalog(n=60, k=8)
    r, errors = 0.6, []
    for seed in range(3):
        world = make_world(x, usd, lp, 0.1, 2, seed=seed, correlation=r)
        view = agent_view(world, world.observed, 20, seed)
        missing = x.isna().to_numpy()
        picks = {i: list(np.flatnonzero(missing[i])[:1 + i % 3]) for i in range(len(x)) if missing[i].sum() >= 2}
        assert max(len(c) for c in picks.values()) == 3
        seen = reveal(view, world.truth, [(i, c) for i, cols in picks.items() for c in cols])
        truth, completed, sd = world.truth.to_numpy(), view.completed.to_numpy(), view.cell_sd.to_numpy()
        for i, a in picks.items():
            others = [c for c in np.flatnonzero(missing[i]) if c not in a]
            u_a = (truth[i, a] - completed[i, a]) / sd[i, a]
            corr_a = (1 - r) * np.eye(len(a)) + r
            conditional = np.full(len(a), r) @ np.linalg.solve(corr_a, u_a)  # Cov(u_c, u_A) = r 1'
            assert seen[i, others] == pytest.approx(completed[i, others] + sd[i, others] * conditional, abs=1e-12)
            assert (seen[i, a] == truth[i, a]).all()
            errors += [(abs(seen[i, c] - truth[i, c]), abs(completed[i, c] - truth[i, c])) for c in others]
    after, before = np.mean(errors, axis=0)
    assert after < 0.93 * before


def test_hidden_leaders_are_the_true_top_rows_mostly_unobserved_with_their_real_scores_as_truth():
    """The harder world (`make_world`'s hide_leaders): the true top 4 rows keep LEADER_KEPT-or-more observed cells
    (82 % of an 8-column row hidden: 2 kept), their hidden cells' truth is the real score, the other rows are
    untouched, and the pick with nothing measured is wrong more often than in the plain world (red with the leaders
    chosen at random instead of by the truth, and with the truth of hidden cells redrawn)."""
    from compass.mlcompass.next_evaluations_simulation import LEADER_KEPT

    x, usd, lp = _catalog(n=40)
    wrong = {0: 0, 4: 0}
    for seed in range(12):
        for hide in (0, 4):
            world = make_world(x, usd, lp, 0.1, 2, seed=seed, hide_leaders=hide)
            true = world.true_scores()
            view = agent_view(world, world.observed, 50, seed)
            wrong[hide] += int(np.argmax(view.mu) != np.argmax(true))
            if hide:
                top = np.argsort(-true)[:hide]
                assert (world.observed.iloc[top].notna().sum(axis=1) == LEADER_KEPT).all()
                hidden = world.observed.isna() & x.notna()
                assert set(np.flatnonzero(hidden.any(axis=1))) <= set(top)
                assert np.allclose(world.truth.to_numpy()[hidden.to_numpy()], x.to_numpy()[hidden.to_numpy()])
    assert wrong[4] > wrong[0] + 2
