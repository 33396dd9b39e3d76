import numpy as np
import pytest

from compass.oracle.bootstrap import bootstrap_interval, bootstrap_mean_interval
from compass.oracle.estimators import quality_interval
from compass.oracle.naive import naive_oracle, naive_per_prompt
from compass.oracle.records import build_arrays, from_arrays
from compass.oracle.report import analyze
from compass.oracle.synthetic import generate


def test_bootstrap_matches_binomial_standard_error():
    rng = np.random.default_rng(0)
    n, p = 800, 0.3
    out = np.zeros((n, 2, 1))
    out[:, 0, 0] = rng.random(n) < p
    arr = from_arrays(out, np.ones(2))
    mean = lambda a: float(a.p_hat[:, 0].mean())
    lo, hi = bootstrap_interval(arr, mean, n_boot=400, seed=1)
    p_hat = mean(arr)
    se = np.sqrt(p_hat * (1 - p_hat) / n)
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.15)
    assert lo < p_hat < hi
    assert bootstrap_interval(arr, mean, n_boot=50, seed=3) == bootstrap_interval(arr, mean, n_boot=50, seed=3)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_interval(arr, mean, n_boot=1)


@pytest.mark.parametrize("g", [1, 3])
def test_naive_bootstrap_from_per_prompt_terms_is_the_rerun_bootstrap(g):
    # issue 45: the naive oracle's interval from its per-prompt terms (computed once) is the interval of rerunning it
    # on every resample: the same draws, the same numbers (a rerun at 1 M prompts x 50 draws took 14 s)
    arr = build_arrays(generate(150, 4, g, seed=4).records)
    terms = naive_per_prompt(arr)
    assert terms[0].mean() == pytest.approx(naive_oracle(arr)[0], abs=1e-12)
    assert terms[1].mean() == pytest.approx(naive_oracle(arr)[1], rel=1e-12)
    rerun = bootstrap_interval(arr, lambda a: naive_oracle(a)[0], n_boot=40, seed=7)
    assert quality_interval(arr, "naive", 40, seed=7) == pytest.approx(rerun, abs=1e-12)
    assert bootstrap_mean_interval(terms[0], n_boot=40, seed=8) != pytest.approx(rerun, abs=1e-12)


def test_analyze_tables_and_consistency():
    data = generate(120, 4, 4, seed=2)
    arr = build_arrays(data.records)
    rep = analyze(arr, n_boot=5)
    assert list(rep.single_models.columns) == ["model_id", "quality", "cost", "reliability"]
    assert list(rep.curve.columns) == ["generations", "quality", "cost"]
    assert list(rep.estimates.columns) == ["estimator", "quality", "quality_lo", "quality_hi", "cost", "recommended",
                                           "identified"]
    assert list(rep.frontier.columns) == ["estimator", "alpha", "quality", "cost"]
    assert list(rep.posthoc.columns) == ["k", "quality", "cost"]
    assert set(rep.summary) == {"sota_model", "sota_quality", "sota_cost", "oracle_quality", "oracle_estimate",
                                "headline_lo", "headline_hi", "headline_ci_lo", "headline_ci_hi", "headline_ci_flag",
                                "headline_flag", "headline_note", "error_rate_reduction", "error_rate_reduction_lo",
                                "error_rate_reduction_hi", "cost_saving_at_sota_quality", "aiq", "cost_saving_flag",
                                "aiq_flag"}
    est = rep.estimates.set_index("estimator")
    assert est.loc["naive", "quality"] == pytest.approx(naive_oracle(arr)[0])
    assert est["recommended"].sum() == 1 and est.loc["bias_corrected", "recommended"]
    assert rep.curve["quality"].iloc[-1] == pytest.approx(est.loc["naive", "quality"])
    naive_front = rep.frontier[rep.frontier.estimator == "naive"]
    assert naive_front["quality"].max() == pytest.approx(est.loc["naive", "quality"])
    s = rep.summary
    assert s["sota_quality"] == pytest.approx(rep.single_models["quality"].max())
    assert s["error_rate_reduction"] == pytest.approx(
        ((1 - s["sota_quality"]) - (1 - s["oracle_quality"])) / (1 - s["sota_quality"]))
    # reliability, eq. 24
    p_bar = arr.p_hat
    np.testing.assert_allclose(rep.single_models["reliability"], 2 * np.abs(p_bar - 0.5).mean(axis=0))
    with pytest.raises(ValueError, match="recommended estimator"):
        analyze(arr, estimators=("naive",), n_boot=0)
