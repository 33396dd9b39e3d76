"""Registry of oracle estimators: name → f(OracleArrays) -> (quality, cost) at α = 1.

Seed paper 002 §3–4: the naive oracle (eq. 5), extrapolation (eqs. 11–12) and
our debiased alternatives (split-sample, empirical-Bayes shrinkage, bias
correction) and the paper's own PGM (§4.3.2 eq. 18, with the §4.4 LogNormal
cost model; `compass.oracle.pgm`). RECOMMENDED is the estimator the synthetic
validation study selects for G ≥ 2 (see `compass.oracle.validation.recommend`);
the empirical-Bayes estimators raise `NotIdentified` at G = 1, where the
published headline is a range (`compass.oracle.headline`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from compass.oracle.bias_correction import bias_corrected_oracle
from compass.oracle.bootstrap import bootstrap_interval, bootstrap_mean_interval
from compass.oracle.extrapolation import POWER, SMOOTH, extrapolated_oracle
from compass.oracle.naive import naive_curve, naive_oracle, naive_per_prompt
from compass.oracle.pgm import pgm_estimate
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
    "pgm": pgm_estimate,
}

RECOMMENDED = "bias_corrected"

# Estimators whose quality is a mean of per-prompt terms (each from its own prompt's cells): bootstrapped from the
# terms (`bootstrap_mean_interval`), the same draws without re-running the estimator per draw.
PER_PROMPT: dict[str, Callable[[OracleArrays], np.ndarray]] = {"naive": lambda a: naive_per_prompt(a)[0]}


def get_estimator(name: str) -> Estimator:
    """Look up an estimator by name; ValueError lists the known names."""
    if name not in ESTIMATORS:
        raise ValueError(f"unknown oracle estimator {name!r}; known: {sorted(ESTIMATORS)}")
    return ESTIMATORS[name]


def quality_interval(arrays: OracleArrays, name: str, n_boot: int, seed: int = 0) -> tuple[float, float]:
    """The prompt-bootstrap percentile interval of estimator `name`'s quality (`compass.oracle.bootstrap`)."""
    if name in PER_PROMPT:
        return bootstrap_mean_interval(PER_PROMPT[name](arrays), n_boot=n_boot, seed=seed)
    fn = get_estimator(name)
    return bootstrap_interval(arrays, lambda a: fn(a)[0], n_boot=n_boot, seed=seed)
