"""Capability Frontier oracles (seed paper 002; full reference in compass/__init__.py): the best
quality reachable at each cost by routing every prompt to the right model and generation. Records
become per-cell success counts (`records`); the naive oracle O_biased of §3 eq. 5 and its curve over
G (`naive`) are corrected by extrapolation in G (§4.3.1, `extrapolation`) and by our debiased
estimators, split-sample, empirical-Bayes shrinkage and bias correction (`split_sample`,
`shrinkage`, `bias_correction`), all registered by name in `estimators`. `frontier` traces the
routed quality-cost frontier and its headline numbers (§4.4, §6.1), `posthoc` the k-shot post-hoc
oracle (§4.5), `single_models` the per-model baselines, `bootstrap` the prompt-resampled intervals
and `report` one dataset's full analysis. `synthetic` draws data from the §4.3.2 PGM (Appendix G
defaults) and `validation` runs the synthetic studies; the PGM fit itself (`pgm`, slow, imported on
demand), the real-data preparation (`prepare`) and the entry points named like their own module
(`compass.oracle.single_models.single_models`, `compass.oracle.prepare.prepare`) are not
re-exported. Figures are in `compass.oracle.plots` (matplotlib; not imported here).
"""

from compass.oracle.bias_correction import bias_corrected_frontier, bias_corrected_oracle
from compass.oracle.bootstrap import bootstrap_interval
from compass.oracle.estimators import ESTIMATORS, RECOMMENDED, get_estimator
from compass.oracle.extrapolation import extrapolated_oracle, fit_curve
from compass.oracle.frontier import aiq, cost_saving, error_rate_reduction, pareto, route, sweep
from compass.oracle.naive import naive_curve, naive_oracle
from compass.oracle.posthoc import posthoc_curve, posthoc_oracle
from compass.oracle.records import OracleArrays, build_arrays, drop_short_models, from_arrays, from_cells
from compass.oracle.report import OracleReport, analyze
from compass.oracle.shrinkage import BetaPriors, fit_priors, posterior_means, shrinkage_oracle
from compass.oracle.single_models import sota
from compass.oracle.split_sample import split_sample_oracle
from compass.oracle.synthetic import SyntheticCounts, SyntheticData, generate, generate_counts
from compass.oracle.validation import bias_decay_study, entropy_uplift_study, validation_study

__all__ = [
    # data (§3)
    "OracleArrays", "build_arrays", "from_cells", "from_arrays", "drop_short_models",
    # oracle estimators at α = 1 (§3-4 and our debiased alternatives)
    "naive_oracle", "naive_curve", "extrapolated_oracle", "fit_curve", "split_sample_oracle",
    "shrinkage_oracle", "fit_priors", "posterior_means", "BetaPriors",
    "bias_corrected_oracle", "bias_corrected_frontier", "ESTIMATORS", "RECOMMENDED", "get_estimator",
    # frontier, post-hoc oracle, analysis (§4.4-4.5, §6)
    "route", "sweep", "pareto", "error_rate_reduction", "cost_saving", "aiq",
    "posthoc_oracle", "posthoc_curve", "sota", "bootstrap_interval", "OracleReport", "analyze",
    # synthetic data and validation studies (§4.3.2, Appendix G)
    "generate", "generate_counts", "SyntheticData", "SyntheticCounts",
    "validation_study", "bias_decay_study", "entropy_uplift_study",
]
