import itertools

import numpy as np
import pytest

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
