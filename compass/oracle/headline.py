"""The published headline oracle: a point estimate only where the data identify one (seed 002, §4.3).

Whatever the estimator, the true oracle O = (1/N) Σ_n max_l p_nl (eq. 4) lies in
a range the data pin down without any model:

* below by the best single model, O ≥ max_l (1/N) Σ_n p_nl (a max of means never
  exceeds the mean of maxima; but the *sample* SOTA is biased upward, so this end
  is approximate: coverage 62.5 % at G = 1, 200 prompts, high accuracy, in the
  synthetic study), and by the split-sample oracle, whose held-out score is ≤ O
  in expectation (`compass.oracle.split_sample`);
* above by the naive oracle, E[O_biased] ≥ O (eq. 5 selects on its own noise, §4.1).

`headline` publishes the recommended estimate when it is identified and inside
that range (flag ""), the range itself when it is not identified (flag "range":
G = 1, where the empirical-Bayes prior's concentration is unknown), and
otherwise a value clipped into the range with the reason ("below_split_sample"
takes precedence over "clipped"). The naive and split-sample ends hold in
expectation; a flag is a warning to read the estimate with care, not a proof
that it is wrong (the below-split test has no noise tolerance yet).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLAGS = ("", "range", "clipped", "below_split_sample")


@dataclass(frozen=True)
class Headline:
    quality: float  # the published point (NaN when flag == "range")
    lo: float  # identified lower bound, max(best single model, split-sample)
    hi: float  # identified upper bound, the naive oracle
    flag: str  # one of FLAGS
    note: str  # one sentence for people


def headline(estimate: float, sota: float, naive: float, split_sample: float, tol: float = 1e-9) -> Headline:
    """Combine the recommended estimate with the identified range [max(SOTA, split-sample), naive]."""
    lo = max(sota, split_sample) if np.isfinite(split_sample) else sota
    lo, hi = min(lo, naive), naive
    if not np.isfinite(estimate):
        return Headline(float("nan"), lo, hi, "range",
                        f"not identified: the oracle lies in [{lo:.4f}, {hi:.4f}] (best single model or "
                        "split-sample to naive oracle)")
    if np.isfinite(split_sample) and estimate < split_sample - tol:
        return Headline(lo, lo, hi, "below_split_sample",
                        f"estimate {estimate:.4f} is below the split-sample lower bound {split_sample:.4f}; "
                        f"published at the bound")
    if estimate < lo - tol or estimate > hi + tol:
        return Headline(float(np.clip(estimate, lo, hi)), lo, hi, "clipped",
                        f"estimate {estimate:.4f} is outside [{lo:.4f}, {hi:.4f}]; published clipped")
    return Headline(float(estimate), lo, hi, "", "")


def headline_consistent(estimate: np.ndarray, published: np.ndarray, flag: np.ndarray, sota: np.ndarray,
                        naive: np.ndarray, split_sample: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Per row, whether a published headline agrees with its range recomputed from the range's ends (the
    best single model, the split-sample and the naive oracle; not from `headline`'s own lo/hi).

    Each row must carry the one flag its estimate calls for, with the value that flag publishes:
    "" for an identified estimate inside [lo, naive], lo = max(SOTA, split-sample), published as the estimate;
    "range" for no estimate, no point; "below_split_sample" for an estimate below the split-sample oracle,
    published at lo; "clipped" for any other estimate outside [lo, naive], published at the nearer end. A
    headline that moves the estimate, flags (or fails to flag) the wrong rows, names the wrong reason, or
    publishes another value than its flag's is inconsistent.
    """
    est, pub, sota, naive, split = (np.asarray(a, dtype=float) for a in (estimate, published, sota, naive,
                                                                           split_sample))
    flag = np.asarray(flag, dtype=object)
    lo = np.minimum(np.where(np.isfinite(split), np.maximum(sota, split), sota), naive)
    finite = np.isfinite(est)
    below = finite & np.isfinite(split) & (est < split - tol)
    outside = finite & ~below & ((est < lo - tol) | (est > naive + tol))
    inside = finite & ~below & ~outside

    def publishes(value: np.ndarray) -> np.ndarray:
        return np.abs(pub - value) <= tol

    point_ok = (flag == "") & inside & publishes(est)
    range_ok = (flag == "range") & ~finite & np.isnan(pub)
    below_ok = (flag == "below_split_sample") & below & publishes(lo)
    clipped_ok = (flag == "clipped") & outside & publishes(np.clip(est, lo, naive))
    return point_ok | range_ok | below_ok | clipped_ok


def range_interval(p_hat: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """A confidence interval around the identified range [best single model, naive oracle] (ours; seed 002 §4.3
    gives the range's ends only in expectation). ``p_hat``: (prompts, models) cell means.

    Lower end: max over models of each model's one-sided lower confidence bound at a / L (a = (1 - level) / 2,
    Bonferroni), a lower bound for max_l mu_l <= O with probability >= 1 - a whatever the selection (the sample
    SOTA itself is biased upward: it exceeded the truth in 37.5 % of the synthetic high-accuracy draws). Upper end:
    the naive oracle (mean over prompts of max_l p_hat, >= O in expectation) plus its one-sided bound at a. Normal
    approximations over prompts (independent prompts); coverage >= level up to them (checked in
    `validation.validation_study`, column range_ci_covers_share, on PGM worlds, and in a world with the real data's
    nuisance, livecodebench's G = 10 rates resampled: `scripts/oracle_g1_coverage.py --no-pgm`).
    """
    from scipy.stats import norm

    p = np.asarray(p_hat, dtype=float)
    n, n_models = p.shape
    if n < 2 or not 0 < level < 1:
        raise ValueError(f"need >= 2 prompts and 0 < level < 1, got {n} prompts and level {level}")
    a = (1.0 - level) / 2.0
    se = p.std(axis=0, ddof=1) / np.sqrt(n)
    lo = float(np.max(p.mean(axis=0) - norm.ppf(1.0 - a / n_models) * se))
    best = p.max(axis=1)
    hi = float(best.mean() + norm.ppf(1.0 - a) * best.std(ddof=1) / np.sqrt(n))
    return max(lo, 0.0), min(hi, 1.0)
