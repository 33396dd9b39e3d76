"""One dataset's oracle analysis: the tables of seed paper 002 (minus `dataset`).

single_models  [model_id, quality, cost, reliability]                 Table 3 / eq. 24
curve          [generations, quality, cost]                           O_biased(G′), Figs. 2–3
estimates      [estimator, quality, quality_lo, quality_hi, cost, recommended, identified]   Table 6
frontier       [estimator, alpha, quality, cost]                      §4.4, Figs. 6–11
summary        {sota_model, sota_quality, sota_cost, oracle_quality, oracle_estimate,
                headline_lo, headline_hi, headline_ci_lo, headline_ci_hi, headline_ci_flag, headline_flag,
                headline_note,
                error_rate_reduction, error_rate_reduction_lo, error_rate_reduction_hi,
                cost_saving_at_sota_quality, aiq, cost_saving_flag, aiq_flag}  Tables 1–2 (`headline`)
posthoc        [k, quality, cost]                                     §4.5, Tables 4–5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from compass.oracle.bias_correction import bias_corrected_frontier
from compass.oracle.estimators import RECOMMENDED, Estimator, get_estimator, quality_interval
from compass.oracle.frontier import aiq, cost_saving, default_alphas, error_rate_reduction, pareto, sweep
from compass.oracle.headline import headline, interval_flag, range_interval
from compass.oracle.naive import naive_curve
from compass.oracle.posthoc import posthoc_curve
from compass.oracle.records import OracleArrays
from compass.oracle.shrinkage import NotIdentified, posterior_means
from compass.oracle.single_models import single_models, sota
from compass.oracle.split_sample import split_sample_folds

FRONTIER_ESTIMATORS = ("naive", "split_sample", "shrinkage_plugin", "bias_corrected")
DEFAULT_ESTIMATORS = (
    "naive", "extrapolation_power", "extrapolation_smooth", "split_sample",
    "shrinkage_plugin", "shrinkage_posterior_max", "bias_corrected", "bias_corrected_posterior", "pgm",
)


@dataclass(frozen=True)
class OracleReport:
    single_models: pd.DataFrame
    curve: pd.DataFrame
    estimates: pd.DataFrame
    frontier: pd.DataFrame
    summary: dict
    posthoc: pd.DataFrame


def frontier_points(arrays: OracleArrays, estimator: str, alphas: np.ndarray | None = None, seed: int = 0) -> pd.DataFrame:
    """α-sweep for one estimator: DataFrame[alpha, quality, cost] (not yet Pareto-filtered)."""
    alphas = default_alphas() if alphas is None else alphas
    cost = arrays.cell_cost
    if estimator == "naive":
        return sweep([(arrays.p_hat, cost, arrays.p_hat, cost)], alphas)
    if estimator == "split_sample":
        return sweep(split_sample_folds(arrays, seed), alphas)
    if estimator == "shrinkage_plugin":
        post = posterior_means(arrays)
        return sweep([(post, cost, post, cost)], alphas)
    if estimator == "bias_corrected":
        return bias_corrected_frontier(arrays, alphas, seed=seed)
    raise ValueError(f"no frontier for estimator {estimator!r}; available: {FRONTIER_ESTIMATORS}")


def identified_estimate(fn: Estimator, arrays: OracleArrays) -> tuple[float, float]:
    """(quality, cost) from `fn`, or (NaN, NaN) when the data do not identify it."""
    try:
        q, c = fn(arrays)
    except NotIdentified:
        return float("nan"), float("nan")
    return float(q), float(c)


def analyze(
    arrays: OracleArrays,
    estimators: Sequence[str] = DEFAULT_ESTIMATORS,
    recommended: str = RECOMMENDED,
    n_boot: int = 100,
    alphas: np.ndarray | None = None,
    seed: int = 0,
) -> OracleReport:
    """Run every estimator, the frontier sweeps, post-hoc curve and headline numbers.

    `n_boot=0` skips the bootstrap (intervals are NaN). An estimator the data
    cannot identify (`NotIdentified`, e.g. empirical Bayes at G = 1) gets NaN and
    identified=False. The summary's oracle, error-rate reduction (Table 1), cost
    saving at SOTA quality (Table 2) and AIQ come from the `recommended`
    estimator through `compass.oracle.headline` (a range when it is not identified).
    """
    if recommended not in estimators:
        raise ValueError(f"recommended estimator {recommended!r} is not among {list(estimators)}")
    single = single_models(arrays)
    best = sota(single)
    rows = []
    for name in estimators:
        fn = get_estimator(name)
        q, c = identified_estimate(fn, arrays)
        lo = hi = float("nan")
        if n_boot > 0 and np.isfinite(q):
            lo, hi = quality_interval(arrays, name, n_boot, seed)
        rows.append((name, q, lo, hi, c, name == recommended, bool(np.isfinite(q))))
    estimates = pd.DataFrame(rows, columns=["estimator", "quality", "quality_lo", "quality_hi", "cost", "recommended",
                                            "identified"])

    fronts = []
    for name in (e for e in estimators if e in FRONTIER_ESTIMATORS):
        try:
            pts = pareto(frontier_points(arrays, name, alphas, seed))
        except NotIdentified:
            continue
        fronts.append(pts.assign(estimator=name)[["estimator", "alpha", "quality", "cost"]])
    frontier = pd.concat(fronts, ignore_index=True)

    quality = estimates.set_index("estimator")["quality"]
    sota_q = float(best["quality"])
    split = float(quality["split_sample"]) if "split_sample" in quality else get_estimator("split_sample")(arrays)[0]
    naive = float(quality["naive"]) if "naive" in quality else get_estimator("naive")(arrays)[0]
    head = headline(float(quality[recommended]), sota_q, naive, split)
    ci_lo, ci_hi = range_interval(arrays.p_hat)
    rec_front = frontier[frontier["estimator"] == recommended]
    summary = {
        "sota_model": str(best["model_id"]),
        "sota_quality": sota_q,
        "sota_cost": float(best["cost"]),
        "oracle_quality": head.quality,
        "oracle_estimate": float(quality[recommended]),
        "headline_lo": head.lo,
        "headline_hi": head.hi,
        "headline_ci_lo": ci_lo,  # 95 % confidence interval around the range (`range_interval`)
        "headline_ci_hi": ci_hi,
        "headline_ci_flag": interval_flag(arrays.p_hat),  # all_correct / all_wrong: the models cannot be told apart
        "headline_flag": head.flag,
        "headline_note": head.note,
        "error_rate_reduction": error_rate_reduction(head.quality, sota_q),
        "error_rate_reduction_lo": error_rate_reduction(head.lo, sota_q),
        "error_rate_reduction_hi": error_rate_reduction(head.hi, sota_q),
        "cost_saving_at_sota_quality": (
            cost_saving(rec_front, float(best["quality"]), float(best["cost"]))
            if len(rec_front) and best["cost"] > 0 else float("nan")
        ),
        "aiq": aiq(rec_front) if len(rec_front) else float("nan"),
        # The cost saving and AIQ come from the same estimator's frontier: its quality's flag follows them.
        "cost_saving_flag": head.flag,
        "aiq_flag": head.flag,
    }
    return OracleReport(single, naive_curve(arrays), estimates, frontier, summary, posthoc_curve(arrays))
