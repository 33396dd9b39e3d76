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


def clopper_pearson(successes: np.ndarray, trials: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson bounds for a proportion, each at error `alpha` (Clopper & Pearson 1934):

        lower(x) = B⁻¹(alpha; x, n − x + 1)   (0 at x = 0)
        upper(x) = B⁻¹(1 − alpha; x + 1, n − x)   (1 at x = n)

    with B⁻¹ the Beta quantile (scipy.stats.beta.ppf), x successes out of n = `trials`. `successes` may be
    fractional (a sum of per-prompt means in [0, 1]; see `range_interval`). At x = n the lower bound is
    alpha^(1/n) < 1, and at x = 0 the upper bound is 1 − alpha^(1/n) > 0: neither collapses onto x / n.
    """
    from scipy.stats import beta

    x = np.clip(np.asarray(successes, dtype=float), 0.0, trials)
    lower = np.where(x > 0, beta.ppf(alpha, np.where(x > 0, x, 1.0), trials - x + 1.0), 0.0)
    upper = np.where(x < trials, beta.ppf(1.0 - alpha, x + 1.0, np.where(x < trials, trials - x, 1.0)), 1.0)
    return lower, upper


INTERVAL_FLAGS = ("", "all_correct", "all_wrong")


def interval_flag(p_hat: np.ndarray) -> str:
    """"all_correct" / "all_wrong" when every model answers every prompt right / wrong, else "".

    Such data cannot tell the models apart; `range_interval` is still finite and not of zero width (its
    width comes from the prompt count alone), and the flag says so.
    """
    p = np.asarray(p_hat, dtype=float)
    if (p == 1.0).all():
        return "all_correct"
    if (p == 0.0).all():
        return "all_wrong"
    return ""


def range_interval(p_hat: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """A confidence interval around the identified range [best single model, naive oracle] (ours; seed 002 §4.3
    gives the range's ends only in expectation). ``p_hat``: (prompts, models) cell means φ̄_nl (eq. 5).

    With a = (1 − level) / 2, N prompts, L models and the Clopper–Pearson bounds of `clopper_pearson`:

        lo = max_l lower(x_l) at a / L,   x_l = Σ_n φ̄_nl                    (Bonferroni over the L models)
        hi = upper(x_0) at a,             x_0 = Σ_n max_l φ̄_nl = N · O_biased   (eq. 5)

    Lower end: P(lo > max_l μ_l) ≤ Σ_l P(lower(x_l) > μ_l) ≤ L · a / L = a whatever the selection, and
    max_l μ_l ≤ O (eq. 4), so lo ≤ O with probability ≥ 1 − a (the sample SOTA itself is biased upward: it
    exceeded the truth in 37.5 % of the synthetic high-accuracy draws). Upper end: a one-sided bound on
    E[O_biased] ≥ O (§4.1), so hi ≥ O with probability ≥ 1 − a. Together: coverage ≥ 1 − 2a = level.

    Why Clopper–Pearson (issue 47): the normal bound p̂ ± z √(p̂(1 − p̂) / N) used before has zero width when a
    model answers every prompt right, so with every model at 0.99 accuracy (N = 300, L = 10) it covered the truth
    in 0.665 of 200 draws (0.07 at N = 200, L = 20). At G = 1 each x_l and x_0 is a count of N Bernoulli trials: binomial when
    prompts are drawn at random, Poisson-binomial given the prompts, whose tails beyond one success from the
    mean are no heavier than the binomial's at the mean rate (Hoeffding 1956), so the bounds are exact or
    conservative at any accuracy, 1.0 and 0.0 included. At G ≥ 2 the φ̄_nl are means in [0, 1], whose variance is
    at most μ(1 − μ): the same bound on the fractional count is conservative to first order, not exact. Coverage
    and width against the normal bound: `scripts/oracle_g1_coverage.py`, docs/results/oracle.md.
    """
    p = np.asarray(p_hat, dtype=float)
    n, n_models = p.shape
    if n < 2 or not 0 < level < 1:
        raise ValueError(f"need >= 2 prompts and 0 < level < 1, got {n} prompts and level {level}")
    a = (1.0 - level) / 2.0
    lo = float(np.max(clopper_pearson(p.sum(axis=0), n, a / n_models)[0]))
    hi = float(clopper_pearson(p.max(axis=1).sum(), n, a)[1])
    return lo, hi
