"""Coverage of the leaderboard's rank intervals on simulated catalogs with known truth (issues 11, 29).

Synthetic data, for tests and the coverage study (scripts/mlcompass_rank_coverage.py). A catalog
(`simulated_catalog`) is drawn from a two-factor model of six benchmarks, as real catalogs are read
(§4.3); a few models answer prompts in two contexts, and the truth has the nuisance the real data show:
each model has its own effect on the logit scale of its success probability (real per-model logit
residuals around the fitted utilities have sd 0.17-0.53 per context on frontier_api), on top of what its
measures predict. `coverage` is the share of (model, catalog) pairs whose actual rank lies in the
bootstrap's 90 % interval (`rank_uncertainty`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.rank_uncertainty import bootstrap_replicates, rank_intervals
from compass.mlcompass.scenarios import Scenario

__all__ = ["LOADINGS", "REFERENCE", "SimulatedCatalog", "coverage", "simulated_catalog", "synthetic_case"]

# Two-factor world: benchmarks b0-b2 measure factor 1, b3-b5 factor 2 (unit variance, uniqueness 1 - l^2).
LOADINGS = np.zeros((6, 2))
LOADINGS[:3, 0], LOADINGS[3:, 1] = [0.9, 0.85, 0.8], [0.9, 0.85, 0.8]
UNIQUENESS = 1 - (LOADINGS ** 2).sum(axis=1)
REFERENCE = pd.DataFrame([{"benchmark": f"b{j}", "factor": f"C{k + 1}", "loading": LOADINGS[j, k]}
                          for j in range(6) for k in range(2) if LOADINGS[j, k]])
# True utilities of two contexts: U_g(x) = sigmoid(alpha_g + beta_g' x + e_m).
ALPHA, BETA = np.array([-1.0, -1.5]), np.array([[3.0, 1.0], [1.0, 3.0]])


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
                      rho: float = 0.5, lam: float = 0.2, model_sd: float = 0.0) -> SimulatedCatalog:
    """A catalog with known truth. Models are draws from the factor model above; their true measures are the
    population Bartlett scores of their (complete) benchmark rows, min-max scaled over the catalog (§4.3).
    Each model has an effect e_m ~ N(0, model_sd^2), shared by both contexts; its actual utility is
    U_g(m) = sigmoid(alpha_g + beta_g' x(m) + e_m), its cost uniform, its actual rank by mean_g U_g - lam c
    (ties to the lower cost). A share `missing` of the cells is hidden. `n_outcome_models` models answer
    `n_prompts` prompts per context: y = 1 when u < U_g(m), with u uniform and correlated within a prompt
    (Gaussian copula, correlation rho^2), so P(y = 1) is exactly U_g(m)."""
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
             level: float = 0.9, **bootstrap) -> pd.DataFrame:
    """Per catalog (seed): the share of its models whose actual rank lies in the `level` rank interval, the mean
    interval width, whether the data support intervals (`Replicates.interval_supported`) and the estimated
    model-effect sd. `bootstrap` goes to `bootstrap_replicates` (resample_models, model_effects)."""
    out = []
    for seed in seeds:
        world = simulated_catalog(seed, n_outcome_models=n_outcome_models, model_sd=model_sd)
        reps = bootstrap_replicates(world.x_raw, world.rows, synthetic_case(), n_boot, seed=seed,
                                    reference_loadings=REFERENCE, **bootstrap)
        table = rank_intervals(reps, world.cost, Scenario("s", lam=world.lam), level=level).set_index("model_id")
        truth = world.true_rank.reindex(table.index)
        out.append({"seed": seed, "model_sd": model_sd, "n_outcome_models": n_outcome_models,
                    "coverage": float(((table["rank_lo"] <= truth) & (truth <= table["rank_hi"])).mean()),
                    "width": float((table["rank_hi"] - table["rank_lo"] + 1).mean()),
                    "supported": reps.interval_supported, "tau_hat": reps.model_effect_sd})
    return pd.DataFrame(out)
