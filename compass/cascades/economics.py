"""Economic evaluation of LLMs and LLM systems by expected reward under prices.

Thesis seed 001 (Zellinger), Chapter 3 "Economic Evaluation":

* per-query reward r = -(C + lambda_L L + lambda_E 1_E + lambda_A 1_A)  (eq 3.10)
* expected reward R(lambda; theta) = E_theta[r(lambda)]                  (eq 3.12)
* optimal system theta*(lambda) = argmax_theta R(lambda; theta)         (eq 3.13)
* cascade cost and latency accumulate up to the answering model         (eq 3.7)
* price of error by Bayes: lambda_E = E[Cost|M] P(E|M) P(M) / P(E)       (eq 3.17)
* cascade error identity (Theorem 5, eq 3.26) and the cascade error
  reduction CER = Cov(1_D, 1_err^small)                                 (eq 3.25)
* two-model cascade threshold tuned over the 2.5% quantiles of the train
  P(True) (Appendix 3D), evaluated on test.

Units: cost in dollars per query, latency in seconds, lambda_E in $ per error,
lambda_L in $ per second (the thesis plots $/minute; divide by 60), lambda_A
in $ per abstention.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

SUMMARY_COLUMNS = ["system", "n_queries", "mean_cost", "mean_latency_s", "error_rate", "abstain_rate"]


def _latency_seconds(records: pd.DataFrame) -> pd.Series:
    if "latency_s" in records:
        return records["latency_s"].astype(float)
    if "latency_ms" in records:
        return records["latency_ms"].astype(float) / 1000.0
    raise ValueError("records need a latency column: 'latency_s' or 'latency_ms'")


def summarize_systems(records: pd.DataFrame, system_col: str = "system") -> pd.DataFrame:
    """Per-system means that determine the expected reward (eq 3.12 is linear in them).

    ``records``: one row per (system, query) with columns <system_col>, correct
    (0/1), cost_usd, latency_s or latency_ms, and optionally abstained (0/1; an
    abstained query counts as an abstention, not an error).
    Returns columns: system, n_queries, mean_cost, mean_latency_s, error_rate, abstain_rate.
    """
    needed = {system_col, "correct", "cost_usd"}
    missing = needed - set(records.columns)
    if missing:
        raise ValueError(f"records are missing column(s) {sorted(missing)}")
    df = pd.DataFrame(
        {
            "system": records[system_col].astype(str),
            "cost": records["cost_usd"].astype(float),
            "lat": _latency_seconds(records),
            "abstain": records["abstained"].astype(float) if "abstained" in records else 0.0,
        }
    )
    df["err"] = (1.0 - records["correct"].astype(float)) * (1.0 - df["abstain"])
    bad = df[["cost", "lat", "err"]].isna().any(axis=1)
    if bad.any():
        raise ValueError(f"records have missing cost/latency/correct for system(s) {sorted(df.loc[bad, 'system'].unique())}")
    g = df.groupby("system", sort=True)
    return pd.DataFrame(
        {
            "system": list(g.groups),
            "n_queries": g.size().to_numpy(),
            "mean_cost": g["cost"].mean().to_numpy(),
            "mean_latency_s": g["lat"].mean().to_numpy(),
            "error_rate": g["err"].mean().to_numpy(),
            "abstain_rate": g["abstain"].mean().to_numpy(),
        }
    )


def _expected_reward(summary: pd.DataFrame, lambda_error, lambda_latency, lambda_abstain) -> np.ndarray:
    return -(
        summary["mean_cost"].to_numpy()
        + lambda_latency * summary["mean_latency_s"].to_numpy()
        + lambda_error * summary["error_rate"].to_numpy()
        + lambda_abstain * summary["abstain_rate"].to_numpy()
    )


def rewards(
    records: pd.DataFrame,
    lambda_error: float,
    lambda_latency: float = 0.0,
    lambda_abstain: float = 0.0,
    system_col: str = "system",
) -> pd.DataFrame:
    """Mean per-query reward of each system at one price vector (eqs 3.10, 3.12).

    Returns the :func:`summarize_systems` columns plus ``reward``.
    """
    if min(lambda_error, lambda_latency, lambda_abstain) < 0:
        raise ValueError("prices lambda_error, lambda_latency, lambda_abstain must be >= 0")
    s = summarize_systems(records, system_col)
    s["reward"] = _expected_reward(s, lambda_error, lambda_latency, lambda_abstain)
    return s


def _as_summary(systems: pd.DataFrame) -> pd.DataFrame:
    """Accept either a :func:`summarize_systems` table or per-query records with a ``system`` column."""
    if {"mean_cost", "mean_latency_s", "error_rate", "abstain_rate", "system"} <= set(systems.columns):
        return systems
    return summarize_systems(systems)


def reward_grid(
    summary: pd.DataFrame,
    lambda_errors: Sequence[float],
    lambda_latencies: Sequence[float] = (0.0,),
    lambda_abstain: float = 0.0,
) -> pd.DataFrame:
    """R(lambda; system) for every system on the lambda_E x lambda_L grid (eq 3.12).

    ``summary`` is the output of :func:`summarize_systems` (or per-query records
    with a ``system`` column). Returns columns: lambda_error, lambda_latency, system, reward.
    """
    summary = _as_summary(summary)
    le = np.asarray(lambda_errors, dtype=float)
    ll = np.asarray(lambda_latencies, dtype=float)
    if le.size == 0 or ll.size == 0 or np.any(le < 0) or np.any(ll < 0):
        raise ValueError("lambda grids must be non-empty and >= 0")
    LE, LL = (g.ravel()[:, None] for g in np.meshgrid(le, ll, indexing="ij"))
    r = _expected_reward(summary, LE, LL, lambda_abstain)  # (grid points, systems)
    n_sys = len(summary)
    return pd.DataFrame(
        {
            "lambda_error": np.repeat(LE[:, 0], n_sys),
            "lambda_latency": np.repeat(LL[:, 0], n_sys),
            "system": np.tile(summary["system"].to_numpy(), len(LE)),
            "reward": r.ravel(),
        }
    )


def optimal_model_map(
    summary: pd.DataFrame,
    lambda_errors: Sequence[float],
    lambda_latencies: Sequence[float] = (0.0,),
    lambda_abstain: float = 0.0,
) -> pd.DataFrame:
    """argmax_theta R(lambda; theta) on the lambda_E x lambda_L grid (eq 3.13, Figure 3.4).

    ``summary``: as for :func:`reward_grid`.
    Returns columns: lambda_error, lambda_latency, best_system, reward.
    """
    grid = reward_grid(summary, lambda_errors, lambda_latencies, lambda_abstain)
    best = grid.loc[grid.groupby(["lambda_error", "lambda_latency"], sort=True)["reward"].idxmax()]
    return best.rename(columns={"system": "best_system"})[["lambda_error", "lambda_latency", "best_system", "reward"]].reset_index(drop=True)


def critical_price_of_error(system_a: pd.Series, system_b: pd.Series, lambda_latency: float = 0.0) -> float:
    """lambda_E at which two fixed systems have equal expected reward (Chapter 3, Figs 3.3-3.5).

    Each system is a row of :func:`summarize_systems` (mean_cost,
    mean_latency_s, error_rate). Since R is linear in lambda_E, the crossover is
    lambda_E* = [(C_b - C_a) + lambda_L (L_b - L_a)] / (e_a - e_b): for
    lambda_E above it the lower-error system wins. Returns +inf when the
    lower-error system never wins at lambda_E >= 0 (never when errors tie and it
    costs more), and 0.0 when it already wins at lambda_E = 0.
    """
    de = float(system_a["error_rate"] - system_b["error_rate"])
    dcost = float(system_b["mean_cost"] - system_a["mean_cost"]) + lambda_latency * float(
        system_b["mean_latency_s"] - system_a["mean_latency_s"]
    )
    if de < 0:  # make b the lower-error system
        de, dcost = -de, -dcost
    if de == 0:
        return 0.0 if dcost <= 0 else float("inf")
    return max(0.0, dcost / de)


def crossover_lambda(lambda_grid: Sequence[float], reward_a: Sequence[float], reward_b: Sequence[float]) -> float:
    """First lambda at which reward_b - reward_a turns from negative to >= 0 (log-linear interpolation).

    For systems whose reward curves are not linear in lambda (e.g. cascades with
    a threshold re-tuned per lambda, Figure 3.5). ``lambda_grid`` must be
    increasing and positive. Returns NaN if b never overtakes a on the grid,
    and lambda_grid[0] if b is already at least as good there.
    """
    lam = np.asarray(lambda_grid, dtype=float)
    d = np.asarray(reward_b, dtype=float) - np.asarray(reward_a, dtype=float)
    if lam.shape != d.shape or lam.ndim != 1 or np.any(lam <= 0) or np.any(np.diff(lam) <= 0):
        raise ValueError("lambda_grid must be increasing, positive and as long as the reward curves")
    if d[0] >= 0:
        return float(lam[0])
    up = np.nonzero((d[:-1] < 0) & (d[1:] >= 0))[0]
    if up.size == 0:
        return float("nan")
    i = up[0]
    w = -d[i] / (d[i + 1] - d[i])
    return float(np.exp(np.log(lam[i]) + w * (np.log(lam[i + 1]) - np.log(lam[i]))))


def price_of_error_bayes(cost_given_mistake: float, p_error_given_mistake: float, p_mistake: float, p_error: float) -> float:
    """lambda_E = E[Cost|M] P(E|M) P(M) / P(E) (eq 3.17); medical example: 500000, 2/3, 1e-5, 1e-2 -> $333."""
    if not (0 < p_error <= 1 and 0 <= p_mistake <= 1 and 0 <= p_error_given_mistake <= 1):
        raise ValueError("probabilities must lie in [0, 1] and P(E) must be > 0")
    return cost_given_mistake * p_error_given_mistake * p_mistake / p_error


def cer_decomposition(defer: np.ndarray, error_small: np.ndarray, error_big: np.ndarray) -> dict[str, float]:
    """Theorem 5 (eq 3.26) terms for a cascade M_small -> M_big, with population covariances.

    Inputs are per-query 0/1 indicators: deferral 1_D, error of M_small, error of M_big.
    Returns p_defer, error_small, error_big, cov_defer_error_big,
    cer (= Cov(1_D, 1_err^small), eq 3.25), error_cascade (eq 3.27, computed
    directly) and error_identity (the right-hand side of eq 3.26); the last two
    agree exactly up to rounding.
    """
    d, es, eb = (np.asarray(a, dtype=float) for a in (defer, error_small, error_big))
    if not (d.shape == es.shape == eb.shape) or d.ndim != 1 or d.size == 0:
        raise ValueError("defer, error_small, error_big must be non-empty 1-D arrays of equal length")
    p_d, e_s, e_b = d.mean(), es.mean(), eb.mean()
    cov_b = (d * eb).mean() - p_d * e_b
    cer = (d * es).mean() - p_d * e_s
    return {
        "p_defer": p_d,
        "error_small": e_s,
        "error_big": e_b,
        "cov_defer_error_big": cov_b,
        "cer": cer,
        "error_cascade": ((1 - d) * es + d * eb).mean(),
        "error_identity": (1 - p_d) * e_s + p_d * e_b + cov_b - cer,
    }


def cascade_records(small: pd.DataFrame, big: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per-query outcome of M_small -> M_big deferring when P(True) <= threshold (Appendix 3D, eq 3.7).

    ``small`` and ``big`` are indexed by query id with columns correct, cost_usd,
    latency_s (``small`` also p_true). Whether the self-verification call's own
    tokens are charged is the caller's choice: include them in small's cost_usd
    and latency_s. Returns columns defer, correct, cost_usd, latency_s, indexed by query id.
    """
    for name, df, cols in (("small", small, ["correct", "cost_usd", "latency_s", "p_true"]), ("big", big, ["correct", "cost_usd", "latency_s"])):
        missing = set(cols) - set(df.columns)
        if missing:
            raise ValueError(f"{name} model records are missing column(s) {sorted(missing)}")
    if not small.index.equals(big.index):
        if set(small.index) != set(big.index):
            raise ValueError("small and big model records must cover the same query ids")
        big = big.loc[small.index]
    d = (small["p_true"].to_numpy(dtype=float) <= threshold).astype(float)
    return pd.DataFrame(
        {
            "defer": d,
            "correct": np.where(d == 1, big["correct"], small["correct"]).astype(float),
            "cost_usd": small["cost_usd"].to_numpy(dtype=float) + d * big["cost_usd"].to_numpy(dtype=float),
            "latency_s": small["latency_s"].to_numpy(dtype=float) + d * big["latency_s"].to_numpy(dtype=float),
        },
        index=small.index,
    )


def _ptrue_candidates(p_true: pd.Series, resolution: float) -> np.ndarray:
    """Train P(True) quantiles at levels 0, h, ..., 1 (Appendix 3D), plus -inf (never defer) and +inf
    (always defer), our addition."""
    if not 0 < resolution <= 0.5:
        raise ValueError(f"resolution must be in (0, 0.5], got {resolution}")
    levels = np.linspace(0.0, 1.0, int(round(1.0 / resolution)) + 1)
    return np.concatenate([[-np.inf], np.unique(np.quantile(p_true.astype(float), levels)), [np.inf]])


def cer_curve(small: pd.DataFrame, big: pd.DataFrame, resolution: float = 0.025) -> pd.DataFrame:
    """CER, error, cost and latency of M_small -> M_big across deferral thresholds (Figure 3.6).

    Thresholds are the P(True) quantiles of ``small`` (see :func:`cascade_records`
    for the inputs). Returns columns: threshold, defer_rate, cer,
    cov_defer_error_big, error_rate, mean_cost, mean_latency_s.
    """
    rows = []
    for t in _ptrue_candidates(small["p_true"], resolution):
        r = cascade_records(small, big, t)
        dec = cer_decomposition(r["defer"].to_numpy(), 1 - small["correct"].to_numpy(float), 1 - big.loc[small.index, "correct"].to_numpy(float))
        rows.append(
            {
                "threshold": t,
                "defer_rate": dec["p_defer"],
                "cer": dec["cer"],
                "cov_defer_error_big": dec["cov_defer_error_big"],
                "error_rate": dec["error_cascade"],
                "mean_cost": r["cost_usd"].mean(),
                "mean_latency_s": r["latency_s"].mean(),
            }
        )
    return pd.DataFrame(rows)


def tuned_cascade_rewards(
    small_train: pd.DataFrame,
    big_train: pd.DataFrame,
    small_test: pd.DataFrame,
    big_test: pd.DataFrame,
    lambda_errors: Sequence[float],
    lambda_latencies: Sequence[float] = (0.0,),
    resolution: float = 0.025,
) -> pd.DataFrame:
    """Test reward of M_small -> M_big with the threshold re-tuned on train for each lambda (App. 3D).

    Candidate thresholds: train quantiles of P(True) at levels 0, h, ..., 1,
    plus -inf (never defer) and +inf (always defer) (our addition). For each
    (lambda_E, lambda_L) the train-reward-maximising threshold is applied to test.
    Returns columns: lambda_error, lambda_latency, threshold, train_reward,
    reward (test), defer_rate, error_rate, mean_cost, mean_latency_s (test).
    """
    cands = _ptrue_candidates(small_train["p_true"], resolution)

    def stats(small: pd.DataFrame, big: pd.DataFrame) -> np.ndarray:
        rows = []
        for t in cands:
            r = cascade_records(small, big, t)
            rows.append([r["cost_usd"].mean(), r["latency_s"].mean(), 1 - r["correct"].mean(), r["defer"].mean()])
        return np.array(rows)  # (n_cands, 4)

    tr, te = stats(small_train, big_train), stats(small_test, big_test)
    out = []
    for le in lambda_errors:
        for ll in lambda_latencies:
            r_tr = -(tr[:, 0] + ll * tr[:, 1] + le * tr[:, 2])
            i = int(np.argmax(r_tr))
            out.append(
                {
                    "lambda_error": le,
                    "lambda_latency": ll,
                    "threshold": cands[i],
                    "train_reward": r_tr[i],
                    "reward": -(te[i, 0] + ll * te[i, 1] + le * te[i, 2]),
                    "defer_rate": te[i, 3],
                    "error_rate": te[i, 2],
                    "mean_cost": te[i, 0],
                    "mean_latency_s": te[i, 1],
                }
            )
    return pd.DataFrame(out)
