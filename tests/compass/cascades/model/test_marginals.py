from dataclasses import asdict

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from compass.cascades.marginals import (
    MixedBetaMarginal, fit_beta_mixture, fit_beta_mixtures, fit_marginal, fit_marginals, marginal_gof, marginal_gof_table,
    marginal_params_frame, marginals_from_params, sqrt_cvm,
)

from .synthetic import synthetic_calibrated

M = MixedBetaMarginal(phi_min=0.2, phi_max=0.9, w_min=0.1, w_max=0.2, pi=0.3, a1=1.0, b1=1.0, a2=2.0, b2=1.0)


def test_cdf_closed_form_with_point_masses():
    # x = (phi - 0.2)/0.7; F_mix = 0.3 x + 0.7 x^2 (Beta(1,1) and Beta(2,1) CDFs)
    for phi in (0.3, 0.55, 0.8):
        x = (phi - 0.2) / 0.7
        assert M.cdf(np.array(phi)) == pytest.approx(0.1 + 0.7 * (0.3 * x + 0.7 * x**2), rel=1e-12)
    assert M.cdf(np.array(0.2 - 1e-12)) == 0.0
    assert M.cdf(np.array(0.2)) == pytest.approx(0.1)
    assert M.cdf(np.array(0.9 - 1e-12)) == pytest.approx(0.8)
    assert M.cdf(np.array(0.9)) == pytest.approx(1.0)
    # density of the smooth part: 0.3 * 1 + 0.7 * 2x, per unit phi
    assert M.smooth_pdf(np.array(0.55)) == pytest.approx((0.3 + 0.7 * 2 * 0.5) / 0.7)


def test_quantile_inverts_cdf_and_sampling_matches():
    u = np.array([0.05, 0.1, 0.15, 0.4, 0.79, 0.81, 0.99])
    q = M.quantile(u)
    assert q[0] == 0.2 and q[1] == 0.2 and q[-1] == 0.9 and q[-2] == 0.9
    assert np.allclose(M.cdf(q[2:5]), u[2:5], atol=1e-10)
    draws = M.sample(50000, np.random.default_rng(0))
    assert np.mean(draws == 0.2) == pytest.approx(0.1, abs=0.006)
    assert np.mean(draws == 0.9) == pytest.approx(0.2, abs=0.008)
    assert np.mean(draws <= 0.55) == pytest.approx(float(M.cdf(np.array(0.55))), abs=0.008)


@pytest.mark.parametrize("shape", [(0.3, 2.9, 13.8, 0.85, 0.31), (0.9, 0.3, 3.0, 200.0, 300.0), (0.5, 1.0, 1.0, 1.0, 1.0)])
def test_smooth_quantile_inverts_steep_and_flat_mixtures(shape):
    """Newton from the CDF table reaches |F^s(Q(u)) - u| ~ 1e-12 even where the density is singular or huge."""
    m = MixedBetaMarginal(0.2, 0.9, 0.0, 0.0, *shape)
    u = np.concatenate([np.linspace(0.001, 0.999, 999), [0.9699284384611543]])
    q = m.smooth_quantile(u)
    assert np.all(np.diff(q[:-1]) >= 0)  # monotone in u
    assert np.max(np.abs(m.smooth_cdf(q) - u)) < 1e-9  # the bisection it replaced: 8e-6 on shape 2


def test_em_recovers_mixture_parameters():
    rng = np.random.default_rng(2)
    n = 4000
    first = rng.random(n) < 0.4
    x = np.where(first, rng.beta(2, 8, n), rng.beta(9, 2, n))
    pi, a1, b1, a2, b2 = fit_beta_mixture(x)
    assert pi == pytest.approx(0.4, abs=0.03)
    assert (a1, b1) == pytest.approx((2, 8), rel=0.15)
    assert (a2, b2) == pytest.approx((9, 2), rel=0.15)


# The pre-SQUAREM EM (one mixture at a time, a Python Newton M-step, plain EM to |dLL| < 1e-6), run on
# `_em_sample(seed)` before it was replaced: (pi, a1, b1, a2, b2) and its log-likelihood (density floored at 1e-6).
OLD_EM = {
    11: ((0.19877292565715549, 2.228155240101424, 12.102707463927782, 3.117001247158963, 1.4528976494443413),
         21.24041204602987),
    12: ((0.48125419879841425, 1.5521564007979165, 2.4138735014080304, 9.633453992127437, 2.4863931808560134),
         37.512136055451634),
}


def _em_sample(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    first = rng.random(300) < 0.35
    return np.where(first, rng.beta(1.5, 4, 300), rng.beta(6, 1.8, 300))


def _mixture_loglik(x: np.ndarray, pi: float, a1: float, b1: float, a2: float, b2: float) -> float:
    dens = pi * stats.beta.pdf(x, a1, b1) + (1 - pi) * stats.beta.pdf(x, a2, b2)
    return float(np.log(np.maximum(dens, 1e-6)).sum())


@pytest.mark.parametrize("seed", sorted(OLD_EM))
def test_accelerated_em_matches_the_old_em(seed):
    """The batched SQUAREM EM ends where the old plain EM did: log-likelihood not worse by more than 1e-6
    relative, parameters within 1 % (the old EM's own stopping rule leaves ~0.5 % in flat directions: on seed 12
    its parameters are 0.4 % from the exact fixed point)."""
    x = _em_sample(seed)
    old, old_ll = OLD_EM[seed]
    assert _mixture_loglik(x, *old) == pytest.approx(old_ll, rel=1e-12)  # the reference is what it says
    new = fit_beta_mixture(x)
    assert _mixture_loglik(x, *new) >= old_ll - 1e-6 * abs(old_ll)
    np.testing.assert_allclose(new, old, rtol=1e-2)
    # one batch of several arrays gives each array's own fit
    batch = fit_beta_mixtures([x, _em_sample(seed + 100)[:120], x[:50]])
    np.testing.assert_allclose(batch[0], new, rtol=1e-6)  # the M-step stops on a 1e-12 relative change
    np.testing.assert_allclose(batch[2], fit_beta_mixture(x[:50]), rtol=1e-6)


def test_an_array_that_stops_early_leaves_the_batch_with_its_own_fit():
    """Each array stops on its own and then leaves the batch (issue 12, item 10): in a batch with a slow array, a
    fast one gets exactly the fit it gets next to a copy of itself (same padding, both stopping together), and the
    slow one keeps iterating to exactly its own fit."""
    def sample(seed: int, b1: float, a2: float) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return np.where(rng.random(300) < 0.35, rng.beta(1.5, b1, 300), rng.beta(a2, 1.8, 300))

    fast, slow = sample(0, 12, 18), sample(50, 2, 3)  # well / poorly separated components
    assert fit_beta_mixture(fast, max_iter=30) == fit_beta_mixture(fast)  # done within 30 EM steps
    assert fit_beta_mixture(slow, max_iter=30) != fit_beta_mixture(slow)  # not yet
    assert fit_beta_mixtures([fast, slow]) == [fit_beta_mixtures([fast, fast])[0], fit_beta_mixtures([slow, slow])[0]]


@pytest.mark.parametrize("max_iter", [60, 2000])
def test_a_fit_does_not_depend_on_the_width_of_its_batch(max_iter):
    """Padding: an array fitted alone and in batches padded to 1.5x, 4x and 13x its size gets bit-identical
    parameters, at the default stopping rule and at a 60-step cut-off (summing the zero-weight padding used to move
    a fit by up to 1.8e-4 relative, 2 % at the cut-off)."""
    rng = np.random.default_rng(7)
    x = np.where(rng.random(297) < 0.4, rng.beta(1.5, 4.0, 297), rng.beta(4.0, 1.5, 297))
    alone = fit_beta_mixture(x, max_iter=max_iter)
    for width in (445, 1188, 3861):
        other = rng.beta(2.0, 2.0, width)
        assert fit_beta_mixtures([x, other], max_iter=max_iter)[0] == alone, width


def test_fit_marginal_counts_masses_and_guards_small_n():
    rng = np.random.default_rng(0)
    phi = np.concatenate([np.full(30, 0.1), np.full(50, 0.95), 0.1 + 0.85 * rng.beta(3, 2, 220)])
    m = fit_marginal(phi)
    assert (m.phi_min, m.phi_max) == (0.1, 0.95)
    assert m.w_min == pytest.approx(30 / 300) and m.w_max == pytest.approx(50 / 300)
    tiny = fit_marginal(np.array([0.1, 0.3, 0.5, 0.6, 0.9]))  # 3 interior points -> single beta
    assert tiny.pi == 1.0 and (tiny.a1, tiny.b1) == (tiny.a2, tiny.b2)
    with pytest.raises(ValueError, match="identical"):
        fit_marginal(np.full(10, 0.4))
    with pytest.raises(ValueError, match="NaN"):
        fit_marginal(np.array([0.1, np.nan, 0.3]))


def test_sqrt_cvm_and_bootstrap():
    rng = np.random.default_rng(4)
    good = M.sample(800, rng)
    stat, p, _ = marginal_gof(M, good, n_boot=40, rng=rng)
    assert stat < 0.05 and p > 0.02
    # E[int (F_n - F)^2 dF] = 1/(6n) for a continuous F: check the statistic's scale
    cont = MixedBetaMarginal(0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    sims = [sqrt_cvm(cont, rng.random(200)) ** 2 for _ in range(200)]
    assert np.mean(sims) == pytest.approx(1 / (6 * 200), rel=0.15)
    bad = np.clip(good + 0.1, 0.2, 0.9)
    stat_bad, p_bad, _ = marginal_gof(M, bad, n_boot=40, rng=rng)
    assert stat_bad > 2 * stat and p_bad < 0.05


def test_fit_marginals_frame():
    df = pd.DataFrame({"split": "train", "model_id": np.repeat(["a", "b"], 100),
                       "p_correct": np.concatenate([np.linspace(0.1, 0.9, 100), np.linspace(0.2, 0.8, 100)])})
    out = marginal_params_frame(fit_marginals(df))
    assert list(out.columns) == ["model_id", "parameter", "value"]
    assert len(out) == 18
    with pytest.raises(ValueError, match="p_correct"):
        fit_marginals(df.drop(columns="p_correct"))


def test_refit_gof_and_gof_table():
    rng = np.random.default_rng(5)
    vals = M.sample(400, rng)
    stat_r, p_r, refitted = marginal_gof(M, vals, n_boot=10, refit=True, bootstrap_refit=True, rng=rng)
    assert stat_r <= sqrt_cvm(M, vals) + 1e-3 and 0.0 <= p_r <= 1.0
    assert refitted.w_min == pytest.approx(np.mean(vals == vals.min()))
    df = pd.DataFrame({"split": "test", "model_id": "a", "p_correct": vals})
    table = marginal_gof_table(df, {"a": M}, n_boot=10)
    assert list(table.columns) == ["model_id", "split", "refit", "sqrt_cvm", "p_value", "n", "n_fit"]
    assert (table["n_fit"] == table["n"]).all()  # below GOF_SAMPLE every value is tested
    assert table.loc[~table.refit, "sqrt_cvm"].iloc[0] == pytest.approx(sqrt_cvm(M, vals))
    with pytest.raises(ValueError, match="no 'train' rows"):
        marginal_gof_table(df, {"a": M}, split="train")


def test_params_frame_round_trips_through_duckdb():
    """marginal_params_frame -> DuckDB DOUBLE (shuffled, extra column, like cascade.marginals) -> back."""
    fitted = fit_marginals(synthetic_calibrated(n_train=300, k=3, seed=5))
    frame = marginal_params_frame(fitted)
    with duckdb.connect() as con:
        con.register("incoming", frame)
        stored = con.execute("select 'mmlu' as dataset, * from incoming order by value desc").df()
    rebuilt = marginals_from_params(stored)
    assert list(rebuilt) == sorted(fitted)
    for model, original in fitted.items():
        assert len(set(asdict(original).values())) == 9  # any two parameters mixed up would show
        back = rebuilt[model]
        assert asdict(back) == pytest.approx(asdict(original), rel=1e-12, abs=0)
        grid = np.linspace(original.phi_min - 0.05, original.phi_max + 0.05, 201)
        grid = np.concatenate([grid, [original.phi_min, original.phi_max]])
        for method in ("cdf", "smooth_pdf", "smooth_quantile"):
            points = np.linspace(0.0, 1.0, 201) if method == "smooth_quantile" else grid
            np.testing.assert_allclose(getattr(back, method)(points), getattr(original, method)(points),
                                       rtol=1e-12, atol=1e-12, err_msg=f"{model}.{method}")
    with pytest.raises(ValueError, match="exactly once"):
        marginals_from_params(frame[frame["parameter"] != "b2"])
    with pytest.raises(ValueError, match="exactly once"):
        marginals_from_params(pd.concat([frame, frame.tail(1)]))
    with pytest.raises(ValueError, match="no marginal parameters"):
        marginals_from_params(frame.head(0))
