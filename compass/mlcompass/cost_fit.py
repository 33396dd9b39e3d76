"""Cost side of the frontier, F_C(c) = c0 c^d (ML Compass §4.4 Step 3; EC §8.4, Tables 9-10).

  1. Costs are normalized to [0, 1] by min-max scaling across the models (§3 Assumption
     "Lifecycle cost c in [0,1]"; §5.7 "normalized cost proxy in [0,1]"). The paper does
     not print the formula; min-max is what its Table 6 numbers imply (HealthBench
     parameter counts: gpt-oss-120B -> 1.00, Qwen3 30B -> 0.23, Gemma 3 12B -> 0.07).
     `cost_scaling="max"` (c / max c) and `"none"` (raw units) are the alternatives. The
     paper's PRISM frontier is only consistent with raw prices: c0 = 0.49 < lambda_3 = 0.79
     with d = 0.21 needs c_3 ~ 10, and §5.7 says PRISM uses the unnormalized blended price.
  2. Tier cost c_t = median (or mean / geometric mean, EC §8.4) of the raw costs of all
     models in tier t, then normalized with the model-level scaling and made monotone,
     c_1 <= ... <= c_T, by isotonic regression (sklearn IsotonicRegression).
  3. d from OLS of log lambda_t on log c_t (scipy.stats.linregress), and the upper
     envelope c0 = max_t lambda_t / c_t^d so that F_C(c_t) >= lambda_t for all tiers.
     Min-max scaling maps the cheapest model to 0; tier costs are floored at `cost_floor`
     before taking logs (our guard, the paper does not discuss it).
     Where d is not identified (fewer than two tiers, or tier costs constant after the monotone
     adjustment, e.g. a release that puts every tier at the same price), a caller that passes
     `fallback_d` gets d fixed at that stated value (the pipeline: the previous fit's d, else
     `DEFAULT_D`) with c0 the same upper envelope, and `CostFit.fallback` says why (our guard: the
     paper's catalogs always identify d). Without it the fit raises, as the sensitivity grid wants.
  4. Diagnostics (EC §8.4): Pearson and Spearman correlations between each model's
     normalized cost and its tier-implied cost c_t(m), and the envelope's fitting error.

Only this module takes prices: the capability side (measures, tiers, CES) never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.isotonic import IsotonicRegression

from compass.mlcompass.ces_fit import CESFit
from compass.mlcompass.frontier import CESFrontier

Aggregation = Literal["median", "mean", "geometric_mean"]
_AGGREGATORS = {
    "median": np.median,
    "mean": np.mean,
    "geometric_mean": lambda v: float(stats.gmean(v)),
}


# d where the data do not identify it and no previous fit exists: the order of the paper's sensitivity tables'
# geometric-mean rows (EC Tables 9-10: PRISM 0.34, HealthBench 0.48).
DEFAULT_D = 0.5


@dataclass(frozen=True)
class CostFit:
    """Fitted cost side.

    tier_costs: DataFrame [tier, n_models, raw_cost, cost, level, frontier_level]
      (raw_cost = within-tier aggregate in raw units; cost = normalized, monotone c_t;
      level = lambda_t; frontier_level = c0 c_t^d).
    model_costs: DataFrame [model_id, tier, raw_cost, cost, tier_cost].
    cost_scale: {"method", "min", "max"} mapping raw -> normalized cost.
    fit_error: mean over tiers of (c0 c_t^d - lambda_t)^2.
    fallback: "" for a fitted d, else why d is not identified and the value it was fixed at.
    """

    c0: float
    d: float
    intercept: float
    fit_error: float
    pearson: float
    spearman: float
    tier_costs: pd.DataFrame
    model_costs: pd.DataFrame
    cost_scale: dict
    fallback: str = ""


def normalize_costs(raw: np.ndarray, method: str, lo: float, hi: float) -> np.ndarray:
    """Map raw costs with the fitted scale: min-max to [0, 1], divide by max, or keep ("none")."""
    if method == "minmax":
        return (raw - lo) / (hi - lo)
    if method == "max":
        return raw / hi
    return raw


def _validate_costs(tiers: pd.DataFrame, costs: pd.Series) -> np.ndarray:
    need = {"model_id", "tier"}
    if not need <= set(tiers.columns):
        raise ValueError(f"tiers is missing columns {sorted(need - set(tiers.columns))}")
    if not isinstance(costs, pd.Series):
        raise ValueError("costs must be a pandas Series indexed by model_id")
    if costs.index.has_duplicates:
        raise ValueError(f"duplicate model_id in costs: {costs.index[costs.index.duplicated()].unique().tolist()}")
    missing = sorted(set(tiers["model_id"]) - set(costs.index))
    if missing:
        raise ValueError(f"no cost for tiered models: {missing}")
    raw = costs.loc[tiers["model_id"]].to_numpy(dtype=float)
    bad = tiers["model_id"][~(np.isfinite(raw) & (raw > 0))].tolist()
    if bad:
        raise ValueError(f"costs must be finite and > 0; bad for models {bad}")
    return raw


def fit_cost_side(
    tiers: pd.DataFrame,
    tier_levels: np.ndarray,
    costs: pd.Series,
    aggregation: Aggregation = "median",
    cost_scaling: Literal["minmax", "max", "none"] = "minmax",
    cost_floor: float = 1e-3,
    fallback_d: float | None = None,
) -> CostFit:
    """Fit F_C(c) = c0 c^d linking tier levels lambda_t to tier costs (§4.4 Step 3).

    `tiers`: output of `pareto_tiers` (all models, not only efficient ones, enter c_t);
    `tier_levels`: lambda_1..lambda_T from `fit_ces`; `costs`: raw cost by model_id. `fallback_d`: the d to
    use, flagged in `CostFit.fallback`, where the data do not identify it (module docstring); None raises.
    """
    if aggregation not in _AGGREGATORS:
        raise ValueError(f"aggregation must be one of {sorted(_AGGREGATORS)}, got {aggregation!r}")
    if cost_scaling not in ("minmax", "max", "none"):
        raise ValueError(f"cost_scaling must be 'minmax', 'max' or 'none', got {cost_scaling!r}")
    raw = _validate_costs(tiers, costs)
    levels = np.asarray(tier_levels, dtype=float)
    tier = tiers["tier"].to_numpy(dtype=int)
    n_tiers = levels.size
    if n_tiers < (1 if fallback_d is not None else 2):
        raise ValueError("need at least 2 tiers to estimate d")
    if set(tier) != set(range(1, n_tiers + 1)):
        raise ValueError(f"tiers must be 1..{n_tiers} to match tier_levels; got {sorted(set(tier))}")
    if not (np.isfinite(levels).all() and (levels > 0).all()):
        raise ValueError(f"tier levels must be finite and > 0 for the log fit, got {levels}")
    lo, hi = float(raw.min()), float(raw.max())
    if hi <= lo:
        raise ValueError("all models have the same cost; the cost side is not identified")
    scale = {"method": cost_scaling, "min": lo, "max": hi}

    agg = _AGGREGATORS[aggregation]
    raw_tier = np.array([agg(raw[tier == t]) for t in range(1, n_tiers + 1)])
    counts = np.array([(tier == t).sum() for t in range(1, n_tiers + 1)])
    tiers_axis = np.arange(1, n_tiers + 1, dtype=float)
    c_t = IsotonicRegression(increasing=True).fit_transform(tiers_axis, normalize_costs(raw_tier, cost_scaling, lo, hi))
    c_log = np.maximum(c_t, cost_floor)
    unidentified = ("need at least 2 tiers to estimate d" if n_tiers < 2 else
                    "tier costs are constant after the monotone adjustment; d is not identified"
                    if np.ptp(np.log(c_log)) == 0 else "")
    if unidentified and fallback_d is None:
        raise ValueError(unidentified)
    if unidentified:
        d, intercept = float(fallback_d), float("nan")
        fallback = f"{unidentified}: d fixed at {d:g}"
    else:
        reg = stats.linregress(np.log(c_log), np.log(levels))
        d, intercept, fallback = float(reg.slope), float(reg.intercept), ""
    c0 = float(np.max(levels / c_log ** d))
    frontier_level = c0 * c_log ** d

    model_cost = normalize_costs(raw, cost_scaling, lo, hi)
    tier_cost = c_t[tier - 1]
    pearson = float(stats.pearsonr(model_cost, tier_cost).statistic) if np.ptp(tier_cost) > 0 else float("nan")
    spearman = float(stats.spearmanr(model_cost, tier_cost).statistic) if np.ptp(tier_cost) > 0 else float("nan")
    return CostFit(
        c0=c0,
        d=d,
        intercept=intercept,
        fit_error=float(np.mean((frontier_level - levels) ** 2)),
        pearson=pearson,
        spearman=spearman,
        tier_costs=pd.DataFrame(
            {
                "tier": np.arange(1, n_tiers + 1),
                "n_models": counts,
                "raw_cost": raw_tier,
                "cost": c_t,
                "level": levels,
                "frontier_level": frontier_level,
            }
        ),
        model_costs=pd.DataFrame(
            {
                "model_id": tiers["model_id"].to_numpy(),
                "tier": tier,
                "raw_cost": raw,
                "cost": model_cost,
                "tier_cost": tier_cost,
            }
        ),
        cost_scale=scale,
        fallback=fallback,
    )


def build_frontier(ces_fit: CESFit, cost_fit: CostFit) -> CESFrontier:
    """Assemble the shared `CESFrontier(a, b, c0, d, tier_levels)` from both sides."""
    return CESFrontier(
        a=np.asarray(ces_fit.a, dtype=float),
        b=float(ces_fit.b),
        c0=float(cost_fit.c0),
        d=float(cost_fit.d),
        tier_levels=np.asarray(ces_fit.tier_levels, dtype=float),
    )


def frontier_parameters(frontier: CESFrontier, cost_fit: CostFit, ces_fit: CESFit) -> pd.DataFrame:
    """Long table [parameter, value]: a_C1.., b, c0, d, lambda_1.., fit_error, pearson,
    spearman, cost_fit_error (the published compass.frontier table minus case_id).

    `fit_error` is the capability-side normalized fitting error of EC §8.4 (Tables 9-10);
    `cost_fit_error` is the cost envelope's error at the tier points (our addition).
    """
    rows = [(f"a_{name}", float(v)) for name, v in zip(ces_fit.factors, frontier.a)]
    rows += [("b", frontier.b), ("c0", frontier.c0), ("d", frontier.d)]
    rows += [(f"lambda_{t + 1}", float(v)) for t, v in enumerate(frontier.tier_levels)]
    rows += [
        ("fit_error", ces_fit.fit_error),
        ("pearson", cost_fit.pearson),
        ("spearman", cost_fit.spearman),
        ("cost_fit_error", cost_fit.fit_error),
    ]
    return pd.DataFrame(rows, columns=["parameter", "value"])


def cost_parameter_rows(fit: CostFit, n_priced_models: int) -> pd.DataFrame:
    """The cost stage of compass.frontier: c0, d, fit_error, pearson, spearman, n_priced_models, each with
    `fallback` ("" for a fitted d, else why d was fixed and at what)."""
    rows = [("c0", fit.c0), ("d", fit.d), ("fit_error", fit.fit_error), ("pearson", fit.pearson),
            ("spearman", fit.spearman), ("n_priced_models", float(n_priced_models))]
    return pd.DataFrame(rows, columns=["parameter", "value"]).assign(stage="cost", fallback=fit.fallback)
