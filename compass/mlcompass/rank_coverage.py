"""Coverage of the leaderboard's rank intervals on simulated catalogs with known truth (issues 11, 29).

Synthetic data, for tests and the coverage study (scripts/mlcompass_rank_coverage.py). A catalog
(`simulated_catalog`) is drawn from a two-factor model of six benchmarks, as real catalogs are read
(§4.3); a few models answer prompts in two contexts, and the truth has the nuisance the real data show:
each model has its own effect on the logit scale of its success probability (real per-model logit
residuals around the fitted utilities have sd 0.17-0.53 per context on frontier_api), on top of what its
measures predict. `coverage` is the share of (model, catalog) pairs whose actual rank lies in the
bootstrap's 90 % interval (`rank_uncertainty`), over all models and over the true top 5 (issue 42, item 8),
in the worlds of `WORLDS`: the project's (a well-specified utility, outcome models drawn at random), a
saturating one (the true utility stops rising at a ceiling the catalog's best models reach, as 2024 QA sets
do for 2026 models) and a bottom-of-range one (the outcome models are drawn from the weaker half of the
catalog, so the leaders are ranked by extrapolation), and the last two at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.rank_uncertainty import TOP, bootstrap_replicates, rank_intervals
from compass.mlcompass.scenarios import Scenario

__all__ = ["LOADINGS", "MEASURED_TOP5", "REFERENCE", "TARGET_TOP5", "WORLDS", "SimulatedCatalog", "World", "coverage",
           "interval_label", "simulated_catalog", "synthetic_case"]

# Two-factor world: benchmarks b0-b2 measure factor 1, b3-b5 factor 2 (unit variance, uniqueness 1 - l^2).
LOADINGS = np.zeros((6, 2))
LOADINGS[:3, 0], LOADINGS[3:, 1] = [0.9, 0.85, 0.8], [0.9, 0.85, 0.8]
UNIQUENESS = 1 - (LOADINGS ** 2).sum(axis=1)
REFERENCE = pd.DataFrame([{"benchmark": f"b{j}", "factor": f"C{k + 1}", "loading": LOADINGS[j, k]}
                          for j in range(6) for k in range(2) if LOADINGS[j, k]])
# True utilities of two contexts: U_g(x) = sigmoid(alpha_g + beta_g' x + e_m).
ALPHA, BETA = np.array([-1.0, -1.5]), np.array([[3.0, 1.0], [1.0, 3.0]])


@dataclass(frozen=True)
class World:
    """How the truth departs from the bootstrap's assumptions. `ceiling_share`: the share of the catalog whose
    true utility sits at a ceiling (per context, U_g is capped at its (1 - share) quantile over the catalog:
    the best models saturate the outcome sets); `outcome_pool`: "random" draws the outcome models from the
    whole catalog, "bottom" from the half with the lower mean true utility."""

    model_sd: float = 0.5
    ceiling_share: float = 0.0
    outcome_pool: str = "random"


# The three worlds of issue 42, item 8, and both departures at once. Model-effect sd 0.5: inside the 0.17-0.53
# of frontier_api's per-model logit residuals. A ceiling on the top 30 %: between the shares of frontier_api's
# models above the outcome models' range on some measure (49 % with the 2024 QA sets, 23 % with this branch's).
WORLDS: dict[str, World] = {
    "project": World(),
    "saturating": World(ceiling_share=0.3),
    "bottom_of_range": World(outcome_pool="bottom"),
    "saturating_bottom": World(ceiling_share=0.3, outcome_pool="bottom"),  # both at once, as issue 42 tried
}


# Coverage of the true top 5 by the 90 % interval, measured per world (scripts/mlcompass_rank_coverage.py --worlds,
# 40 catalogs, B = 60, the pipeline's bootstrap; se 0.017-0.027; docs/results/mlcompass.md). Target TARGET_TOP5.
MEASURED_TOP5: dict[str, float] = {"project": 0.845, "saturating": 0.925, "bottom_of_range": 0.860,
                                   "saturating_bottom": 0.890}
TARGET_TOP5 = 0.85


def interval_label(beyond: pd.Series) -> pd.DataFrame:
    """What the coverage study says about a learned utility's rank intervals, per row of a leaderboard (`beyond`:
    its distance beyond the outcome models' range, `case_utilities.beyond_outcome_range`, null for a given
    utility): `interval_coverage_top5`, the lowest top-5 coverage over the worlds (`MEASURED_TOP5`: which world a
    real case is in cannot be told from its data), and `interval_conditional`, True where that is below
    TARGET_TOP5: the interval holds only in the worlds that reach the target. Both null for a given utility."""
    worst = min(MEASURED_TOP5.values())
    value = pd.Series(np.where(beyond.isna(), np.nan, worst), index=beyond.index, dtype=float)
    conditional = (value < TARGET_TOP5).astype("boolean").mask(value.isna())
    return pd.DataFrame({"interval_coverage_top5": value, "interval_conditional": conditional})


def synthetic_case(source: str = "query_records", estimator: str = "logistic", **utility) -> CaseStudy:
    """The case the simulated catalogs are read with: two factors, a threshold label at 0.5."""
    spec = {"source": source, "datasets": ["synthetic"], "label": "threshold", "threshold": 0.5,
            "estimator": estimator, "min_rows_per_group": 50, **utility}
    return CaseStudy.from_dict({"case_id": "synthetic", "n_factors": 2, "benchmarks": {}, "utility": spec})


@dataclass(frozen=True)
class SimulatedCatalog:
    """x_raw (models x benchmarks, NaN = hidden), outcome rows, costs, the actual rank of every model, lam."""

    x_raw: pd.DataFrame
    rows: pd.DataFrame
    cost: pd.Series
    true_rank: pd.Series
    lam: float


def simulated_catalog(seed: int, n: int = 40, n_outcome_models: int = 8, n_prompts: int = 40, missing: float = 0.15,
                      rho: float = 0.5, lam: float = 0.2, model_sd: float = 0.0, ceiling_share: float = 0.0,
                      outcome_pool: str = "random") -> SimulatedCatalog:
    """A catalog with known truth. Models are draws from the factor model above; their true measures are the
    population Bartlett scores of their (complete) benchmark rows, min-max scaled over the catalog (§4.3).
    Each model has an effect e_m ~ N(0, model_sd^2), shared by both contexts; its actual utility is
    U_g(m) = sigmoid(alpha_g + beta_g' x(m) + e_m), its cost uniform, its actual rank by mean_g U_g - lam c
    (ties to the lower cost). A share `missing` of the cells is hidden. `n_outcome_models` models answer
    `n_prompts` prompts per context: y = 1 when u < U_g(m), with u uniform and correlated within a prompt
    (Gaussian copula, correlation rho^2), so P(y = 1) is exactly U_g(m). `ceiling_share` and `outcome_pool`:
    the departures of `World` (a ceiling ties the saturated models' utility, so among them the cheaper ranks
    higher)."""
    if outcome_pool not in ("random", "bottom"):
        raise ValueError(f"outcome_pool must be random | bottom, got {outcome_pool!r}")
    rng = np.random.default_rng(seed)
    f = rng.multivariate_normal([0, 0], [[1, 0.3], [0.3, 1]], n)
    x = f @ LOADINGS.T + rng.standard_normal((n, 6)) * np.sqrt(UNIQUENESS)
    weights = (LOADINGS / UNIQUENESS[:, None]) @ np.linalg.inv(LOADINGS.T @ (LOADINGS / UNIQUENESS[:, None]))
    scores = x @ weights
    truth = (scores - scores.min(axis=0)) / (scores.max(axis=0) - scores.min(axis=0))
    ids = np.array([f"m{i:03d}" for i in range(n)])
    hidden = rng.random((n, 6)) < missing
    hidden[np.arange(n), rng.integers(0, 6, n)] = False  # every model keeps a benchmark
    x_raw = pd.DataFrame(np.where(hidden, np.nan, 50 + 10 * x), index=pd.Index(ids, name="model_id"),
                         columns=[f"b{j}" for j in range(6)])
    cost = pd.Series(rng.uniform(0, 1, n), index=ids)
    answering = rng.choice(n, n_outcome_models, replace=False)
    # drawn after everything above, so model_sd = 0 gives the catalogs of issue 11's study
    effect = np.random.default_rng([seed, 29]).standard_normal(n) * model_sd
    utility = expit(ALPHA + truth @ BETA.T + effect[:, None])
    if ceiling_share > 0:
        utility = np.minimum(utility, np.quantile(utility, 1 - ceiling_share, axis=0))
    if outcome_pool == "bottom":  # the same draw, from the weaker half of the catalog
        weaker = np.argsort(utility.mean(axis=1), kind="stable")[: n // 2]
        answering = np.random.default_rng([seed, 42]).choice(weaker, n_outcome_models, replace=False)
    score = utility.mean(axis=1) - lam * cost.to_numpy()
    true_rank = pd.Series(0, index=ids)
    true_rank.iloc[np.lexsort((ids, cost.to_numpy(), -score))] = np.arange(1, n + 1)
    rows = []
    for g in range(2):
        u = norm.cdf(rho * rng.standard_normal((n_prompts, 1))
                     + np.sqrt(1 - rho ** 2) * rng.standard_normal((n_prompts, n_outcome_models)))
        rows.append(pd.DataFrame({
            "model_id": np.tile(ids[answering], n_prompts),
            "group": np.repeat([f"ctx{g}:q{q}" for q in range(n_prompts)], n_outcome_models),
            "context_group": f"ctx{g}",
            "outcome": (u < utility[answering, g]).astype(float).reshape(-1),
        }))
    return SimulatedCatalog(x_raw, pd.concat(rows, ignore_index=True), cost, true_rank, lam)


def coverage(seeds: range | list[int], n_boot: int, model_sd: float, n_outcome_models: int = 8,
             level: float = 0.9, ceiling_share: float = 0.0, outcome_pool: str = "random", **bootstrap) -> pd.DataFrame:
    """Per catalog (seed): the share of its models whose actual rank lies in the `level` rank interval
    (`coverage`) and the same share over the models whose actual rank is <= 5 (`coverage_top5`, where a decision
    is made), the mean interval width, whether the data support intervals (`Replicates.interval_supported`) and
    the estimated model-effect sd. `ceiling_share` / `outcome_pool`: the world (`World`). `bootstrap` goes to
    `bootstrap_replicates` (resample_models, model_effects, reach)."""
    out = []
    for seed in seeds:
        world = simulated_catalog(seed, n_outcome_models=n_outcome_models, model_sd=model_sd,
                                  ceiling_share=ceiling_share, outcome_pool=outcome_pool)
        reps = bootstrap_replicates(world.x_raw, world.rows, synthetic_case(), n_boot, seed=seed,
                                    reference_loadings=REFERENCE, **bootstrap)
        table = rank_intervals(reps, world.cost, Scenario("s", lam=world.lam), level=level).set_index("model_id")
        truth = world.true_rank.reindex(table.index)
        covered = (table["rank_lo"] <= truth) & (truth <= table["rank_hi"])
        out.append({"seed": seed, "model_sd": model_sd, "n_outcome_models": n_outcome_models,
                    "coverage": float(covered.mean()), "coverage_top5": float(covered[truth <= TOP].mean()),
                    "width": float((table["rank_hi"] - table["rank_lo"] + 1).mean()),
                    "supported": reps.interval_supported, "tau_hat": reps.model_effect_sd})
    return pd.DataFrame(out)
