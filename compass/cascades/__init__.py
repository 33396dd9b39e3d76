"""LLM cascades, their economics and human-in-the-loop deferral (seed paper 001, the Zellinger thesis,
chapters 2-4; full reference in compass/__init__.py). Chapter 2: calibrated confidences
(`calibration`), mixed beta marginals (`marginals`), pairwise copulas (`copulas`), the Markov-copula
model of a cascade's P(correct) and E[cost] (`markov_model`), Rational Tuning of the deferral
thresholds (`rational_tuning`), the grid-search and Bayesian-optimization baselines (`baselines`),
realized error and cost of threshold vectors (`evaluate`) and error-cost curves with their AUC
comparisons (`curves`). Chapter 3: economic evaluation by expected reward under prices
(`economics`). Chapter 4: "Ask" and "Fail Fast, or Ask" (`failfast`, with the synthetic records of
`failfast_synthetic`). `study` runs the chapters' study design on real records. Names from
`copulas` and `markov_model` are loaded on first access, because pyvinecopulib imports
matplotlib.pyplot; `compass.cascades.rational_tuning.rational_tuning` is not re-exported (the name
would hide its module). Figures are in `compass.cascades.plots` (matplotlib; not imported here).
"""

from importlib import import_module as _import_module

from compass.cascades.baselines import bayes_opt_curve, grid_search_curve
from compass.cascades.calibration import calibrate, expected_calibration_error, task_kind_for
from compass.cascades.curves import auc_comparisons, compare_methods, curve_auc, pareto_mask
from compass.cascades.data import pivot, validate_records
from compass.cascades.economics import (
    cer_curve,
    critical_price_of_error,
    optimal_model_map,
    reward_grid,
    rewards,
    summarize_systems,
    tuned_cascade_rewards,
)
from compass.cascades.evaluate import evaluate_grid, evaluate_thresholds
from compass.cascades.failfast import ask_curve, auarc, failfast_curve, failfast_table, latency_drag
from compass.cascades.failfast_synthetic import FailFastSyntheticConfig, generate_failfast_synthetic
from compass.cascades.marginals import MixedBetaMarginal, fit_marginal, fit_marginals

# Re-exports whose module imports pyvinecopulib (and with it matplotlib.pyplot): name -> module.
_LAZY = {
    "PairCopula": "compass.cascades.copulas",
    "fit_copula": "compass.cascades.copulas",
    "copula_table": "compass.cascades.copulas",
    "markov_test": "compass.cascades.copulas",
    "CascadeModel": "compass.cascades.markov_model",
    "fit_cascade_model": "compass.cascades.markov_model",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(_import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    # chapter 2: calibration, Markov-copula model, baselines, evaluation
    "validate_records", "pivot", "calibrate", "task_kind_for", "expected_calibration_error",
    "MixedBetaMarginal", "fit_marginal", "fit_marginals",
    "PairCopula", "fit_copula", "copula_table", "markov_test",
    "CascadeModel", "fit_cascade_model",
    "grid_search_curve", "bayes_opt_curve", "evaluate_thresholds", "evaluate_grid",
    "pareto_mask", "curve_auc", "auc_comparisons", "compare_methods",
    # chapter 3: economic evaluation
    "summarize_systems", "rewards", "reward_grid", "optimal_model_map", "critical_price_of_error",
    "cer_curve", "tuned_cascade_rewards",
    # chapter 4: Ask, Fail Fast or Ask
    "ask_curve", "auarc", "failfast_curve", "failfast_table", "latency_drag",
    "FailFastSyntheticConfig", "generate_failfast_synthetic",
]
