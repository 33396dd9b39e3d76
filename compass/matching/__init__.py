"""CUPID matchmaking (seed paper 004, "CUPID in the Model Zoo: Online Matchmaking for Selecting Your Dream
LLM", Nguyen, Liu, Senanayake, ICML 2026; implementation guide ../shared/specs/spec-004-cupid.md, whose
§ numbers are given as "spec §"): find, within a money budget B and T rounds of pairwise duels, the one
model of a pool that best matches a person's latent objectives.

`gp` is the probit Gaussian-process preference model with its Laplace posterior (§3.2.2, App. A.1-A.3,
eqs. 1, 7-14), the predictive preference of eq. 3 and the Laplace evidence for the optional kernel refit;
`heart` is HEART-UCB inside the CUPID loop (§3.2, Algorithm 1): belief over latent objectives (§3.2.3,
eq. 4), belief-aware UCB (eq. 5), language bias (§3.2.4, App. A.7), budget pacing (§3.2.5), pair
selection (eq. 6), with every open choice of the spec an option; `baselines` are App. C.4's RUCB, LMA,
cost-constrained LMA and ε-greedy, `references` the two rows that do not learn (cheapest feasible model,
always the two cheapest); `pool`, `users` and `costs` read Table 5-style pools, App. D.3-style users and
the cost of a duel (§4.1); `simulate` is spec §5's LLM-free judge and feedback; `study` the automated
validation of §4.1 (Table 1) with standard errors and the best-model-found rate, `verdict` when an
advantage counts, `paper` Table 1 as printed; `interactive` a person's session (§4.4), `bridge` its export to
an ML Compass scenario.
Figures are in `compass.matching.plots` (matplotlib; not imported here).
"""

from compass.matching.baselines import RUCB, CostLMA, EpsilonGreedy, LMArena, bradley_terry, copeland
from compass.matching.bridge import learned_weights, scenario_from_session, session_scenario
from compass.matching.costs import TokenModel
from compass.matching.duel import Matcher, affordable_top_pair
from compass.matching.gp import LaplacePosterior, PreferenceGP, laplace_posterior, log_evidence
from compass.matching.heart import HEART_METHODS, HeartOptions, HeartUCB, options_for
from compass.matching.interactive import answer_costs, request_mask, scenario_requests
from compass.matching.paper import table_1 as paper_table_1
from compass.matching.pool import Pool, pool_from_frame, read_pool
from compass.matching.references import CheapestFeasible, TwoCheapest
from compass.matching.simulate import FEEDBACK_VARIANTS, LanguageFeedback, MetadataJudge
from compass.matching.study import (METHOD_LABELS, METHODS, REFERENCES, ROUTER_USD, TABLE_1, Session,
                                    SessionResult, convergence, run_study, simulate_session, summarize)
from compass.matching.users import Constraint, User
from compass.matching.verdict import advantages, beaten_baselines, claimed_users

__all__ = [
    # the preference GP (§3.2.2, App. A)
    "PreferenceGP", "LaplacePosterior", "laplace_posterior", "log_evidence",
    # HEART-UCB and the CUPID variants (§3.2, Algorithm 1)
    "HeartUCB", "HeartOptions", "HEART_METHODS", "options_for", "Matcher", "affordable_top_pair",
    # baselines (App. C.4) and references that do not learn
    "RUCB", "LMArena", "CostLMA", "EpsilonGreedy", "bradley_terry", "copeland", "CheapestFeasible", "TwoCheapest",
    # pools, users, costs, the LLM-free person (§4.1, App. D, spec §5)
    "Pool", "read_pool", "pool_from_frame", "User", "Constraint", "TokenModel", "MetadataJudge", "LanguageFeedback",
    "FEEDBACK_VARIANTS",
    # the study (§4.1, Table 1) and when an advantage counts
    "Session", "SessionResult", "simulate_session", "run_study", "summarize", "convergence", "METHODS", "TABLE_1",
    "REFERENCES", "METHOD_LABELS", "ROUTER_USD", "advantages", "claimed_users", "beaten_baselines", "paper_table_1",
    # a person's session (§4.4) and the bridge to a scenario
    "answer_costs", "request_mask", "scenario_requests", "learned_weights", "scenario_from_session", "session_scenario",
]
