import itertools

import numpy as np
import pandas as pd
import pytest

from benchmarks.bench_cascade import sequential_infill  # the loop before issue 47, the reference

from compass.cascades.markov_model import fit_cascade_model
from compass.cascades.rational_tuning import default_lambdas, rational_tuning

from .synthetic import synthetic_calibrated

CHAIN = ["m0", "m1", "m2"]


@pytest.fixture(scope="module")
def model():
    return fit_cascade_model(synthetic_calibrated(n_train=400, k=3, seed=1), CHAIN)


def test_frontier_columns_and_optimality_against_brute_force(model):
    lams = np.array([0.0, 30.0, 300.0, 3000.0])
    out = rational_tuning(model, lams, infill_q=None)
    assert list(out.columns) == ["cascade", "copula", "point", "lambda", "infill", "phi_1", "phi_2",
                                 "pred_error", "pred_cost", "objective"]
    assert len(out) == 4 and not out.infill.any()
    # brute force: the model objective on a 120 x 120 grid of thresholds
    lo, hi = np.array(model.bounds(CHAIN)).T
    g = [np.linspace(lo[j], hi[j], 120) for j in range(2)]
    grid = np.array(list(itertools.product(*g)))
    p, c = model.evaluate(CHAIN, grid)
    for _, row in out.iterrows():
        best = np.min(1 - p + row["lambda"] * c)
        assert row.objective <= best + 2e-4, row["lambda"]
    # higher cost sensitivity never buys a more expensive operating point
    by_lam = out.sort_values("lambda")
    assert np.all(np.diff(by_lam.pred_cost) <= 1e-9)
    assert np.all(np.diff(by_lam.pred_error) >= -1e-9)


def test_default_sweep_reaches_cheapest_model_and_infills(model):
    out = rational_tuning(model, infill_q=0.1)
    sweep = out[~out.infill]
    assert sweep.pred_cost.min() <= 1.25 * model.costs["m0"]
    assert sweep["lambda"].min() == 0.0
    # after infill (eq. 2.13) consecutive points differ by at most q of marginal mass per threshold
    plain = rational_tuning(model, infill_q=None)
    assert len(out) > len(plain) and len(plain) == len(sweep)
    for frame, bound in ((out, 0.1), (plain, None)):
        gaps = [np.abs(np.diff(model.marginals[m].cdf(frame[f"phi_{j + 1}"].to_numpy()))).max()
                for j, m in enumerate(CHAIN[:-1])]
        if bound is None:
            assert max(gaps) > 0.1  # the plain sweep has gaps to fill in this fixture
        else:
            assert max(gaps) <= bound + 1e-9


def test_subcascade_and_copula_choice(model):
    records = synthetic_calibrated(n_train=400, k=3, seed=1)
    aic = fit_cascade_model(records, CHAIN, copula="aic")
    lams = default_lambdas(model, CHAIN, 8)
    a = rational_tuning(model, lams, infill_q=None)
    b = rational_tuning(aic, lams, infill_q=None)
    assert a.copula.iloc[0] == "gumbel_tau" and b.copula.iloc[0] == "aic"
    # both frontiers span the same cost range up to model error
    assert b.pred_cost.max() == pytest.approx(a.pred_cost.max(), rel=0.05)
    sub = rational_tuning(model, lams, cascade=["m0", "m2"], infill_q=None)
    assert "phi_2" not in sub.columns and sub.cascade.iloc[0] == "m0>m2"
    with pytest.raises(ValueError, match="unknown model"):
        rational_tuning(model, lams, cascade=["m0", "m9"])
    with pytest.raises(ValueError, match="lambdas"):
        rational_tuning(model, [-1.0])


def test_pattern_search_matches_or_beats_lbfgsb(model):
    lams = default_lambdas(model, CHAIN, 10)
    pattern = rational_tuning(model, lams, infill_q=None).sort_values("lambda")
    lbfgsb = rational_tuning(model, lams, infill_q=None, method="lbfgsb").sort_values("lambda")
    assert np.all(pattern.objective.to_numpy() <= lbfgsb.objective.to_numpy() + 1e-3)
    with pytest.raises(ValueError, match="method"):
        rational_tuning(model, lams, method="newton")


@pytest.mark.parametrize("q, cap_factor", [(0.1, 20), (0.02, 20), (0.003, 20), (0.003, 3), (0.5, 20)])
def test_batched_infill_equals_the_sequential_loop(q, cap_factor):
    """The batched CDFs (`_infill`) insert bitwise the points of the one-at-a-time loop, also when the cap stops it
    (q = 0.003 with 3x as many points as solutions) and when nothing is inserted (q = 0.5)."""
    from compass.cascades.rational_tuning import _infill

    chain = ["m0", "m1", "m2", "m3"]
    model = fit_cascade_model(synthetic_calibrated(n_train=400, k=4, seed=2), chain)
    thresholds = list(rational_tuning(model, cascade=chain, infill_q=None)[["phi_1", "phi_2", "phi_3"]].to_numpy())
    cap = cap_factor * len(thresholds)
    got, want = _infill(model, chain, thresholds, q, cap), sequential_infill(model, chain, thresholds, q, cap)
    assert len(got) == len(want) and [f for _, f in got] == [f for _, f in want]
    np.testing.assert_array_equal(np.array([t for t, _ in got]), np.array([t for t, _ in want]))
    if cap_factor == 3:
        assert len(got) == cap  # the cap stopped the loop
    assert any(f for _, f in got) == (q < 0.5)


def test_infill_evaluates_cdfs_in_batches_and_the_frontier_is_unchanged(monkeypatch):
    """A k = 4 study sweep with infill: the frame equals the one the sequential loop gives, and the marginal CDFs
    are called once per model and bisection level (it was twice per model and gap checked: hundreds of calls)."""
    from compass.cascades import rational_tuning as rt
    from compass.cascades.marginals import MixedBetaMarginal

    chain = ["m0", "m1", "m2", "m3"]
    model = fit_cascade_model(synthetic_calibrated(n_train=400, k=4, seed=2), chain)
    model.evaluate(chain, np.array(model.bounds(chain)).mean(axis=1)[None, :])  # lazy tables: not counted below
    calls = []
    cdf = MixedBetaMarginal.cdf
    monkeypatch.setattr(MixedBetaMarginal, "cdf", lambda self, phi: calls.append(np.size(phi)) or cdf(self, phi))
    got = rational_tuning(model, cascade=chain, infill_q=0.02)
    batched = len(calls)
    monkeypatch.setattr(rt, "_infill", sequential_infill)
    calls.clear()
    want = rational_tuning(model, cascade=chain, infill_q=0.02)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got["infill"].sum() > 20
    assert batched * 10 < len(calls), (batched, len(calls))
