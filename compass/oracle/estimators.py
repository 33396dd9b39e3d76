"""Registry of oracle estimators: name → f(OracleArrays) -> (quality, cost) at α = 1.

Seed paper 002 §3–4: the naive oracle (eq. 5), extrapolation (eqs. 11–12) and
our debiased alternatives (split-sample, empirical-Bayes shrinkage, bias
correction). The PGM of §4.3.2 lives in `compass.oracle.pgm` and is added by
`compass.oracle.validation` when requested. RECOMMENDED is the estimator the
synthetic validation study selects (see `compass.oracle.validation.recommend`).
"""

from __future__ import annotations

from collections.abc import Callable

from compass.oracle.bias_correction import bias_corrected_oracle
from compass.oracle.extrapolation import POWER, SMOOTH, extrapolated_oracle
from compass.oracle.naive import naive_curve, naive_oracle
from compass.oracle.records import OracleArrays
from compass.oracle.shrinkage import shrinkage_oracle
from compass.oracle.split_sample import split_sample_oracle

Estimator = Callable[[OracleArrays], tuple[float, float]]

ESTIMATORS: dict[str, Estimator] = {
    "naive": naive_oracle,
    "extrapolation_power": lambda a: extrapolated_oracle(naive_curve(a), POWER),
    "extrapolation_smooth": lambda a: extrapolated_oracle(naive_curve(a), SMOOTH),
    "split_sample": split_sample_oracle,
    "shrinkage_plugin": lambda a: shrinkage_oracle(a, "plugin"),
    "shrinkage_posterior_max": lambda a: shrinkage_oracle(a, "posterior_max"),
    "bias_corrected": bias_corrected_oracle,
    "bias_corrected_posterior": lambda a: bias_corrected_oracle(a, "posterior"),
}

RECOMMENDED = "bias_corrected"


def get_estimator(name: str) -> Estimator:
    """Look up an estimator by name; ValueError lists the known names."""
    if name not in ESTIMATORS:
        raise ValueError(f"unknown oracle estimator {name!r}; known: {sorted(ESTIMATORS)}")
    return ESTIMATORS[name]
