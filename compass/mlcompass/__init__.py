"""ML Compass (seed paper 000; full reference in compass/__init__.py): model selection as constrained
optimization over a capability-cost frontier. The package extracts internal measures x from raw
benchmark scores (§4.3, `measures`, `imputation`, `factor_alignment`), peels Pareto tiers and fits
the CES capability frontier and its cost side F_C(c) = c0 c^d (§4.4, `pareto`, `ces_fit`,
`cost_fit`, `frontier`), learns context-specific utilities from interaction outcomes (§4.5,
`utilities`, `utility_models`, `outcome_labels`), solves for target profiles (x*, c*) and recommends
models under deployment scenarios with deployment-aware leaderboards and policy values (§4.6, §5.6,
`targets`, `recommend`, `scenarios`, `policy_values`, `decisions`, `explain`, `changes`), and
implements the stylized model of §3 (Theorem 3.1 and the comparative statics, `theory`) and the
frontier sensitivity grid of EC §8.4 (`sensitivity`). Case studies are YAML files (`case_study`).
Entry points named like their own module are not re-exported (the name would hide the module): use
`compass.mlcompass.recommend.recommend`, `compass.mlcompass.explain.explain` and
`compass.mlcompass.policy_values.policy_values`. Figures are in `compass.mlcompass.plots`
(matplotlib; not imported here).
"""

from compass.mlcompass.case_study import CaseStudy, load_cases
from compass.mlcompass.ces_fit import CESFit, fit_ces
from compass.mlcompass.cost_fit import CostFit, build_frontier, fit_cost_side
from compass.mlcompass.decisions import DecisionInputs
from compass.mlcompass.factor_alignment import FactorAlignment, align_loadings
from compass.mlcompass.frontier import CESFrontier, ces_score
from compass.mlcompass.imputation import ImputationResult, impute_low_rank
from compass.mlcompass.measures import MeasureResult, extract_measures
from compass.mlcompass.pareto import pareto_tiers
from compass.mlcompass.policy_values import policy_selections
from compass.mlcompass.recommend import Recommendation, model_scores, project_to_target, screen_models
from compass.mlcompass.scenarios import Scenario, leaderboard, paper_scenarios
from compass.mlcompass.sensitivity import SensitivityGrid, frontier_sensitivity, sensitivity_summary
from compass.mlcompass.targets import Target, solve_target
from compass.mlcompass.theory import (
    OptimalProfile,
    Sensitivity,
    StylizedProblem,
    budget_sensitivity,
    check_assumptions,
    optimal_profile,
    regulatory_sensitivity,
    technology_sensitivity,
)
from compass.mlcompass.utilities import UtilityFit, UtilityFn, fit_utilities_by_group, fit_utility, linear_utility
from compass.mlcompass.utility_models import utilities_from_rows, utility_from_row

__all__ = [
    # measures (§4.3)
    "extract_measures", "MeasureResult", "impute_low_rank", "ImputationResult",
    "align_loadings", "FactorAlignment",
    # frontier (§4.4)
    "pareto_tiers", "fit_ces", "CESFit", "fit_cost_side", "CostFit", "build_frontier",
    "CESFrontier", "ces_score",
    # utilities (§4.5)
    "fit_utility", "fit_utilities_by_group", "linear_utility", "UtilityFit", "UtilityFn",
    "utility_from_row", "utilities_from_rows",
    # targets, recommendations, leaderboards (§4.6, §5.6)
    "solve_target", "Target", "screen_models", "model_scores", "project_to_target",
    "Recommendation", "Scenario", "paper_scenarios", "leaderboard", "policy_selections",
    "CaseStudy", "load_cases", "DecisionInputs",
    # stylized model (§3) and frontier sensitivity (EC §8.4)
    "check_assumptions", "StylizedProblem", "optimal_profile", "OptimalProfile",
    "budget_sensitivity", "regulatory_sensitivity", "technology_sensitivity", "Sensitivity",
    "frontier_sensitivity", "sensitivity_summary", "SensitivityGrid",
]
