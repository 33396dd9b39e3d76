"""Efficiency gain at fixed primary-model usage (seed 003 §4.1; spec §3.2): for each usage ratio ρ, send the
top round(ρ·N) test queries by ψ̂ to M_p; TE = Σ 1{→M_p}·r; EG = (TE − TE_random)/N with the random router's
expected TE = ρ·Σ r in closed form. EG is 0 at ρ = 0 and ρ = 1 for every router."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from compass.resampling import corrected_se

PMUR_GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)


def efficiency_gain(psi_hat: np.ndarray, r_test: np.ndarray, grid: np.ndarray = PMUR_GRID,
                    seed: int = 0) -> np.ndarray:
    """EG(ρ) for each ρ in `grid`; ties in ψ̂ (trees make many) broken by a seeded random key."""
    psi, r = np.asarray(psi_hat, dtype=float), np.asarray(r_test, dtype=float)
    tie = np.random.default_rng(seed).random(len(psi))
    order = np.lexsort((tie, -psi))
    gains = np.concatenate([[0.0], np.cumsum(r[order])])
    n = len(r)
    k = np.round(grid * n).astype(int)
    return (gains[k] - grid * r.sum()) / n


def interior_mean(gains: np.ndarray, grid: np.ndarray = PMUR_GRID) -> np.ndarray:
    """The mean EG over the interior of the usage grid (0 < ρ < 1; EG is 0 at both ends): one number per round,
    the area under the gain curve, so comparing routers picks no share after seeing the data."""
    inner = (grid > 0) & (grid < 1)
    return np.asarray(gains)[..., inner].mean(axis=-1)


def paired_comparisons(rounds: pd.DataFrame, baselines: tuple[str, ...] = ("random", "gold_only", "preference_only"),
                       level: float = 0.95) -> pd.DataFrame:
    """Each router against each baseline, paired across Monte Carlo rounds (same split, same test queries).

    `rounds`: router, n_gold, round, mean_gain (interior_mean of that round's EG curve), and n_test, n_gold_total
    if the rounds re-split one set of gold rows. The difference per round is averaged; its interval is Student-t
    with rounds − 1 degrees of freedom. Re-splits of one data set overlap (two test sets share n_test/n_gold_total
    of their rows), so their differences are positively correlated and the plain variance s²/k shrinks to 0 as
    rounds grow while the data stay fixed: with n_test, the variance is Nadeau & Bengio's (2003) corrected
    resampled-t s²·(1/k + n_test/(n_gold_total − n_test)) (`resample_correction`; 0 for rounds on fresh data). "random" is the zero line (EG is already relative to random routing).
    `distinguishable` says whether the interval excludes 0."""
    rows = []
    for n_gold, part in rounds.groupby("n_gold", sort=True):
        correction = (float(part["n_test"].iloc[0]) / float(part["n_gold_total"].iloc[0] - part["n_test"].iloc[0])
                      if "n_test" in part else 0.0)
        wide = part.pivot(index="round", columns="router", values="mean_gain")
        for baseline in baselines:
            if baseline != "random" and baseline not in wide:
                continue
            base = 0.0 if baseline == "random" else wide[baseline]
            for router in wide.columns:
                if router == baseline:
                    continue
                diff = (wide[router] - base).to_numpy(float)
                k = len(diff)
                se = corrected_se(diff, correction)
                half = stats.t.ppf(0.5 + level / 2, k - 1) * se if k > 1 else np.nan
                mean = float(diff.mean())
                rows.append({"n_gold": n_gold, "router": router, "baseline": baseline, "mean_difference": mean,
                             "se": se, "lo": mean - half, "hi": mean + half, "level": level, "mc_rounds": k,
                             "resample_correction": correction,
                             "distinguishable": bool(k > 1 and (mean - half > 0 or mean + half < 0))})
    return pd.DataFrame(rows)


def calibration(psi_hat: np.ndarray, r_test: np.ndarray, bins: int = 5, level: float = 0.95) -> pd.DataFrame:
    """Is ψ̂ calibrated? Held-out queries binned by quantiles of ψ̂: the mean ψ̂ and the mean realized gold gain r
    per bin with a Student-t interval, and Spearman's ρ between ψ̂ and r over all queries (one value per table).
    ψ̂ is in the normalized units the router learned in; r on the gold label scale, so compare orderings."""
    psi, r = np.asarray(psi_hat, dtype=float), np.asarray(r_test, dtype=float)
    ranks = stats.rankdata(psi, method="ordinal")
    which = np.minimum((ranks - 1) * bins // len(psi), bins - 1).astype(int)
    rho = float(stats.spearmanr(psi, r).statistic) if len(psi) > 2 else np.nan
    rows = []
    for b in range(bins):
        part = r[which == b]
        k = len(part)
        half = stats.t.ppf(0.5 + level / 2, k - 1) * part.std(ddof=1) / np.sqrt(k) if k > 1 else np.nan
        rows.append({"bin": b + 1, "n": k, "psi_mean": float(psi[which == b].mean()), "gain_mean": float(part.mean()),
                     "gain_lo": float(part.mean() - half), "gain_hi": float(part.mean() + half), "spearman": rho})
    return pd.DataFrame(rows)
