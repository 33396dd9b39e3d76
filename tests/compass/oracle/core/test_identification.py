"""Seed 002 headline identification (issue 12): G = 1 gives a range, never the optimizer's start value;
the published interval covers the truth; the headline is never below the split-sample bound unflagged.
All data here is synthetic with known truth."""

import numpy as np
import pytest

from compass.oracle.bias_correction import bias_corrected_oracle
from compass.oracle.estimators import ESTIMATORS
from compass.oracle.headline import headline
from compass.oracle.naive import naive_oracle
from compass.oracle.records import from_arrays
from compass.oracle.report import analyze
from compass.oracle.shrinkage import NotIdentified, fit_priors
from compass.oracle.split_sample import split_sample_oracle
from tests.compass.oracle.core.conftest import beta_outcomes


def test_eb_prior_refuses_one_generation():
    arr = from_arrays(beta_outcomes(300, 4, 1, seed=0)[0], np.ones(4))
    with pytest.raises(NotIdentified, match="G = 1"):
        fit_priors(arr)
    with pytest.raises(NotIdentified):
        bias_corrected_oracle(arr)


def test_g1_publishes_the_identified_range():
    out, p = beta_outcomes(400, 5, 1, seed=3)
    arr = from_arrays(out, np.linspace(1, 2, 5))
    rep = analyze(arr, n_boot=0, estimators=("naive", "split_sample", "bias_corrected", "pgm"))
    est = rep.estimates.set_index("estimator")
    assert not est.loc["bias_corrected", "identified"] and np.isnan(est.loc["bias_corrected", "quality"])
    assert est.loc["pgm", "identified"]  # the PGM is parametric: identified under its own model
    s = rep.summary
    assert s["headline_flag"] == "range" and np.isnan(s["oracle_quality"]) and np.isnan(s["error_rate_reduction"])
    sota = arr.p_hat.mean(axis=0).max()
    assert s["headline_lo"] == pytest.approx(max(sota, split_sample_oracle(arr)[0]))
    assert s["headline_hi"] == pytest.approx(naive_oracle(arr)[0])
    assert s["headline_lo"] <= p.max(axis=1).mean() <= s["headline_hi"]  # the truth is inside
    assert s["error_rate_reduction_lo"] < s["error_rate_reduction_hi"]


@pytest.mark.parametrize(("estimate", "flag", "published"), [
    (0.85, "", 0.85),                      # inside [max(sota, split), naive]
    (0.97, "clipped", 0.95),               # above naive
    (0.79, "below_split_sample", 0.81),    # below split-sample: published at the bound
    (float("nan"), "range", float("nan")),
])
def test_headline_rules(estimate, flag, published):
    h = headline(estimate, sota=0.80, naive=0.95, split_sample=0.81)
    assert (h.flag, h.lo, h.hi) == (flag, 0.81, 0.95)
    np.testing.assert_equal(h.quality, published)


def test_estimate_between_split_and_sota_is_clipped():
    h = headline(0.82, sota=0.84, naive=0.95, split_sample=0.80)
    assert h.flag == "clipped" and h.quality == 0.84


def test_split_sample_is_a_lower_bound_and_range_covers_truth():
    """Over seeds, E[split-sample] < truth < E[naive]; each draw's range covers the truth (independent models)."""
    gaps, covered = [], []
    for seed in range(6):
        out, p = beta_outcomes(300, 4, 5, seed=seed)
        arr = from_arrays(out, np.ones(4))
        truth = p.max(axis=1).mean()
        split, naive = split_sample_oracle(arr)[0], naive_oracle(arr)[0]
        gaps.append(split - truth)
        covered.append(max(arr.p_hat.mean(axis=0).max(), split) <= truth <= naive)
    se = np.std(gaps, ddof=1) / np.sqrt(len(gaps))
    assert np.mean(gaps) < -3 * se  # biased low: a lower bound in expectation
    assert all(covered)


def test_bias_corrected_headline_never_below_the_split_sample_bound():
    """Independent beta-binomial cells (EB posterior means too concentrated): whatever `bias_corrected`
    returns, the published headline lies in [max(SOTA, split), naive], and is flagged where it had to move."""
    for seed in range(3):
        out, p = beta_outcomes(300, 6, 5, a=8.0, b=2.0, seed=seed)
        arr = from_arrays(out, np.linspace(1, 3, 6))
        s = analyze(arr, n_boot=0, estimators=("naive", "split_sample", "bias_corrected")).summary
        assert s["headline_lo"] <= p.max(axis=1).mean() <= s["headline_hi"]  # the published range holds the truth
        assert s["headline_lo"] == pytest.approx(max(arr.p_hat.mean(axis=0).max(), split_sample_oracle(arr)[0]))
        assert s["headline_lo"] <= s["oracle_quality"] <= s["headline_hi"]
        moved = not np.isclose(s["oracle_quality"], s["oracle_estimate"])
        assert moved == (s["headline_flag"] != "")


def test_analyze_flags_an_estimate_below_the_split_sample_bound(monkeypatch):
    """The wiring: an estimator landing below the split-sample oracle is published at the bound, flagged."""
    arr = from_arrays(beta_outcomes(200, 4, 5, seed=1)[0], np.ones(4))
    split = split_sample_oracle(arr)[0]
    monkeypatch.setitem(ESTIMATORS, "too_low", lambda a: (split - 0.05, 1.0))
    s = analyze(arr, estimators=("naive", "split_sample", "too_low"), recommended="too_low", n_boot=0).summary
    assert s["headline_flag"] == s["cost_saving_flag"] == s["aiq_flag"] == "below_split_sample"
    assert s["oracle_estimate"] == pytest.approx(split - 0.05) and s["oracle_quality"] == pytest.approx(split)


def test_headline_check_recomputes_the_range_and_catches_a_moved_or_unflagged_headline():
    """The asset check `headline_consistent`: every rule of `headline` passes it, and headlines broken the
    ways a regression could break them fail it (the old check, 'published value inside [SOTA, naive] or
    flagged', passed all three broken rows)."""
    from compass.oracle.headline import headline_consistent

    sota, naive, split = 0.80, 0.95, 0.81
    good = [headline(e, sota, naive, split) for e in (0.85, 0.97, 0.79, float("nan"))]
    est = [0.85, 0.97, 0.79, float("nan")]
    ok = headline_consistent(est, [h.quality for h in good], [h.flag for h in good], [sota] * 4, [naive] * 4,
                             [split] * 4)
    assert ok.all()
    broken = headline_consistent([0.97, 0.85, 0.90], [0.95, 0.84, 0.90], ["", "", "clipped"], [sota] * 3,
                                 [naive] * 3, [split] * 3)  # clipped unflagged, point moved, flagged in range
    assert not broken.any()


def test_headline_check_requires_the_flag_its_estimate_calls_for_and_that_flags_value():
    """Issue 28: the check accepted any non-empty flag with a value in range. Rows flagged outside the range
    with the wrong reason, or publishing another value than their flag's rule, must fail. Mutation: `other_ok`
    of the earlier check (any of "clipped" / "below_split_sample", finite estimate outside the range, published
    value anywhere in [lo, naive]) in place of below_ok | clipped_ok: all four broken rows pass (red)."""
    from compass.oracle.headline import headline_consistent

    sota, naive, split = 0.80, 0.95, 0.81
    rows = [  # (estimate, published, flag): every one outside the range, each with a wrong flag or value
        (0.79, 0.81, "clipped"),  # below the split-sample oracle: the reason must be below_split_sample
        (0.97, 0.95, "below_split_sample"),  # above naive: clipped, not below_split_sample
        (0.97, 0.90, "clipped"),  # clipped, but published inside the range instead of at the naive end
        (0.79, 0.90, "below_split_sample"),  # right reason, published above the bound lo = 0.81
    ]
    est, pub, flag = (list(col) for col in zip(*rows))
    assert not headline_consistent(est, pub, flag, [sota] * 4, [naive] * 4, [split] * 4).any()
    fixed = [headline(e, sota, naive, split) for e in est]  # the same estimates as `headline` publishes them
    assert headline_consistent(est, [h.quality for h in fixed], [h.flag for h in fixed], [sota] * 4, [naive] * 4,
                               [split] * 4).all()


def test_g1_range_interval_covers_the_truth_at_least_nominally_where_the_range_does_not():
    """Synthetic high-accuracy PGM draws at G = 1 (10 models, 200 prompts, like a small real benchmark): the
    identified range misses the truth often (its lower end, the sample SOTA, is biased upward), its 95 %
    interval (`range_interval`) covers it in at least 95 % of 40 draws."""
    from compass.oracle.headline import range_interval
    from compass.oracle.records import build_arrays
    from compass.oracle.synthetic import generate
    from compass.oracle.validation import REGIMES

    range_hits, ci_hits = [], []
    for r in range(40):
        data = generate(200, 10, 1, seed=500 + r, **REGIMES["high_accuracy"])
        arr = build_arrays(data.records, dataset="g1")
        head = headline(float("nan"), float(arr.p_hat.mean(axis=0).max()), naive_oracle(arr)[0],
                        split_sample_oracle(arr)[0])
        lo, hi = range_interval(arr.p_hat)
        range_hits.append(head.lo <= data.true_oracle <= head.hi)
        ci_hits.append(lo <= data.true_oracle <= hi)
    assert np.mean(range_hits) < 0.9 and np.mean(ci_hits) >= 0.95


def test_g1_interval_covers_in_a_resampled_world_without_the_pgm():
    """`scripts/oracle_g1_coverage.py --no-pgm` (issue 28 item 4): a world whose truth is a fixed (prompt x model)
    rate matrix, prompts resampled, one generation drawn. Here the matrix is SYNTHETIC (logistic difficulty x
    ability, not the PGM's generator); the truth is the mean over the drawn prompts of max_l p. The range misses
    the truth often at 2 models, the 95 % interval covers it in >= 95 % of 60 draws. Mutation: the interval's lower
    end at the sample SOTA (no confidence bound) -> red."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
    from scripts.oracle_g1_coverage import coverage, resampled_draw

    rng = np.random.default_rng(7)
    truth = 1 / (1 + np.exp(-(rng.normal(1.5, 1.5, (400, 1)) + rng.normal(0.0, 0.4, (1, 8)))))
    records, oracle = resampled_draw(truth)(3, 50, 0)
    assert len(records) == 150 and set(records["generation"]) == {0} and 0 < oracle <= 1
    row = coverage("synthetic matrix", resampled_draw(truth), 2, 200, 60)
    assert row["range_covers"] < 0.9 and row["after_covers"] >= 0.95
