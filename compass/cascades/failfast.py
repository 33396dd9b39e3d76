"""Human-in-the-loop selective prediction: "Ask" and "Fail Fast, or Ask".

Thesis seed 001 (Zellinger), Chapter 4:

* "Ask" (M_r -> H): the reasoning model's uncertainty is its number of output
  tokens; rejecting a fraction r defers the queries above the (1-r)-quantile
  of tokens to the human H. Conditional accuracy A(r) = E[correct | kept] (eq 4.3).
* "Fail Fast, or Ask" ([M_nr -> M_r] -> H): the non-reasoning model M_nr acts by
  thresholding its P(True) p (eq 4.1): fail fast if p <= c_ff, pass if
  c_ff < p <= c_pass, respond if p > c_pass. With utilisation u = P(not pass)
  and the rule P(M_r -> H | pass) = r, the fail-fast rate is u r and the
  respond rate u (1 - r) (Section 4.3). c_ff and c_pass are the u r and
  u r + 1 - u quantiles of p; within the passed set M_r rejects its top r
  fraction by tokens, the quantile taken within the passed subset as the
  conditional rate P(M_r -> H | M_nr -> M_r) of Section 4.3 requires.
* AUARC = mean of A(r) over r in [0, 20%] (Section 4.3 "Metrics"); the thesis
  gives no grid, so 0.5% steps (41 points) are used (our choice).
* Latency drag (Section 4.4, eq 4.2): the naive E[L_nr] + (1-u) E[L_r] versus
  the actual E[L_nr] + (1-u) E[L_r | pass].

Quantile thresholds on integer token counts tie; to realise the configured
rates exactly, each quantile rule is applied as "take exactly round(rate * n)
queries from the top (or bottom) of the signal", with ties broken uniformly
at random by ``rng``. The realised rates are returned alongside.

The human is an instant oracle (Section 4.3): a rejected query is neither an
error nor charged latency, but M_r's latency and cost are paid whenever M_r ran.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

FAILFAST_COLUMNS = ["correct_r", "tokens_r", "latency_r", "cost_r", "correct_nr", "p_true_nr", "latency_nr", "cost_nr"]
RESPOND, PASS, FAIL_FAST = 0, 1, 2


def rejection_grid(max_rate: float = 0.2, step: float = 0.005) -> np.ndarray:
    """Rejection rates 0, step, ..., max_rate (41 points by default)."""
    if not (0 < step <= max_rate < 1):
        raise ValueError(f"need 0 < step <= max_rate < 1, got step={step}, max_rate={max_rate}")
    return np.linspace(0.0, max_rate, int(round(max_rate / step)) + 1)


def _rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(0 if rng is None else rng)


def _order(signal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices sorting ``signal`` ascending, ties in uniformly random order."""
    return np.lexsort((rng.random(signal.shape[0]), signal))


def top_fraction(signal: np.ndarray, rate: float, rng: np.random.Generator | int | None = None) -> np.ndarray:
    """Mask of the round(rate n) queries with the largest signal (the (1-rate)-quantile rule, ties random)."""
    s = np.asarray(signal, dtype=float)
    if s.ndim != 1 or np.any(np.isnan(s)):
        raise ValueError("signal must be a 1-D array without NaN")
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must be in [0, 1], got {rate}")
    m = int(np.rint(rate * s.size))
    mask = np.zeros(s.size, dtype=bool)
    if m:
        mask[_order(s, _rng(rng))[s.size - m :]] = True
    return mask


def ask_curve(
    correct: np.ndarray,
    uncertainty: np.ndarray,
    rates: Sequence[float] | None = None,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Accuracy-rejection curve of "Ask": reject the most uncertain fraction r (eq 4.3).

    Returns columns: rejection_rate, realized_rejection_rate, accuracy, error.
    """
    y = np.asarray(correct, dtype=float)
    u = np.asarray(uncertainty, dtype=float)
    if y.shape != u.shape or y.ndim != 1 or y.size == 0:
        raise ValueError("correct and uncertainty must be non-empty 1-D arrays of equal length")
    grid = rejection_grid() if rates is None else np.asarray(rates, dtype=float)
    gen = _rng(rng)
    rows = []
    for r in grid:
        rej = top_fraction(u, r, gen)
        acc = y[~rej].mean() if (~rej).any() else np.nan
        rows.append({"rejection_rate": r, "realized_rejection_rate": rej.mean(), "accuracy": acc, "error": 1 - acc})
    return pd.DataFrame(rows)


def auarc(
    correct: np.ndarray,
    uncertainty: np.ndarray,
    max_rate: float = 0.2,
    step: float = 0.005,
    rng: np.random.Generator | int | None = None,
) -> float:
    """Area under the accuracy-rejection curve: mean A(r) over r in [0, max_rate] (Section 4.3)."""
    return float(ask_curve(correct, uncertainty, rejection_grid(max_rate, step), rng)["accuracy"].mean())


def failfast_policy(
    p_true_nr: np.ndarray,
    tokens_r: np.ndarray,
    utilization: float,
    rejection_rate: float,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Actions of M_nr (eq 4.1) and M_r's rejections for utilisation u and rejection rate r.

    Returns (action, rejected_by_r): action in {RESPOND=0, PASS=1, FAIL_FAST=2}
    per query; rejected_by_r marks passed queries that M_r defers to H.
    Fail fast on the round(u r n) lowest p_true, respond on the round(u (1-r) n)
    highest, pass the rest; M_r rejects round(r n_pass) of the passed queries
    with the most output tokens.
    """
    p = np.asarray(p_true_nr, dtype=float)
    t = np.asarray(tokens_r, dtype=float)
    if p.shape != t.shape or p.ndim != 1:
        raise ValueError("p_true_nr and tokens_r must be 1-D arrays of equal length")
    if not (0 <= utilization <= 1 and 0 <= rejection_rate <= 1):
        raise ValueError(f"utilization and rejection_rate must be in [0, 1], got {utilization}, {rejection_rate}")
    gen = _rng(rng)
    n = p.size
    order = _order(p, gen)
    n_ff = int(np.rint(utilization * rejection_rate * n))
    n_resp = int(np.rint(utilization * (1 - rejection_rate) * n))
    action = np.full(n, PASS)
    action[order[:n_ff]] = FAIL_FAST
    if n_resp:
        action[order[n - n_resp :]] = RESPOND
    passed = np.nonzero(action == PASS)[0]
    rejected = np.zeros(n, dtype=bool)
    rejected[passed[top_fraction(t[passed], rejection_rate, gen)]] = True
    return action, rejected


def _check_records(records: pd.DataFrame) -> None:
    missing = set(FAILFAST_COLUMNS) - set(records.columns)
    if missing:
        raise ValueError(f"fail-fast records are missing column(s) {sorted(missing)}; expected {FAILFAST_COLUMNS}")
    if records[FAILFAST_COLUMNS].isna().any().any():
        bad = records[FAILFAST_COLUMNS].columns[records[FAILFAST_COLUMNS].isna().any()].tolist()
        raise ValueError(f"fail-fast records have missing values in {bad}")


def failfast_curve(
    records: pd.DataFrame,
    utilization: float,
    rates: Sequence[float] | None = None,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Accuracy, latency and cost of "Fail Fast, or Ask" across rejection rates (Section 4.3, Fig 4.5).

    ``records``: one row per query with FAILFAST_COLUMNS (latencies in seconds,
    costs in dollars). u = 0 reproduces "Ask" (M_nr is not called, so its
    latency and cost are not charged).
    Returns columns: utilization, rejection_rate, fail_fast_rate, respond_rate,
    pass_rate, realized_rejection_rate, accuracy, error, mean_latency_s, mean_cost.
    """
    _check_records(records)
    grid = rejection_grid() if rates is None else np.asarray(rates, dtype=float)
    gen = _rng(rng)
    y_r, y_nr = records["correct_r"].to_numpy(float), records["correct_nr"].to_numpy(float)
    l_r, l_nr = records["latency_r"].to_numpy(float), records["latency_nr"].to_numpy(float)
    c_r, c_nr = records["cost_r"].to_numpy(float), records["cost_nr"].to_numpy(float)
    nr_used = float(utilization > 0)
    rows = []
    for r in grid:
        action, rej_r = failfast_policy(records["p_true_nr"].to_numpy(float), records["tokens_r"].to_numpy(float), utilization, r, gen)
        passed = action == PASS
        rejected = rej_r | (action == FAIL_FAST)
        kept_correct = np.where(action == RESPOND, y_nr, y_r)[~rejected]
        acc = kept_correct.mean() if kept_correct.size else np.nan
        rows.append(
            {
                "utilization": utilization,
                "rejection_rate": r,
                "fail_fast_rate": np.mean(action == FAIL_FAST),
                "respond_rate": np.mean(action == RESPOND),
                "pass_rate": passed.mean(),
                "realized_rejection_rate": rejected.mean(),
                "accuracy": acc,
                "error": 1 - acc,
                "mean_latency_s": np.mean(nr_used * l_nr + passed * l_r),
                "mean_cost": np.mean(nr_used * c_nr + passed * c_r),
            }
        )
    return pd.DataFrame(rows)


def latency_drag(latency_r: np.ndarray, latency_nr: np.ndarray, passed: np.ndarray) -> dict[str, float]:
    """Naive (eq 4.2) versus actual system latency, and the drag E[L_r | pass] / E[L_r] (Section 4.4).

    Returns naive_latency = E[L_nr] + (1-u) E[L_r], actual_latency =
    E[L_nr] + (1-u) E[L_r | pass], drag = actual - naive, drag_ratio =
    E[L_r | pass] / E[L_r], where 1 - u is the pass rate.
    """
    lr, lnr, ps = np.asarray(latency_r, float), np.asarray(latency_nr, float), np.asarray(passed, bool)
    if not (lr.shape == lnr.shape == ps.shape) or not ps.any():
        raise ValueError("latency_r, latency_nr, passed must have equal shape and at least one passed query")
    pass_rate = ps.mean()
    naive = lnr.mean() + pass_rate * lr.mean()
    actual = lnr.mean() + pass_rate * lr[ps].mean()
    return {"naive_latency": naive, "actual_latency": actual, "drag": actual - naive, "drag_ratio": lr[ps].mean() / lr.mean()}


def failfast_table(
    records: pd.DataFrame,
    utilizations: Sequence[float] = (0.5, 0.6, 0.75),
    max_rate: float = 0.2,
    step: float = 0.005,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Table 4.2: AUARC, its % drop from "Ask", and % change in latency and cost per utilisation.

    Latency and cost are averaged over the same rejection grid as AUARC
    (our choice: the thesis does not say at which r Table 4.2's ΔL, ΔC are taken;
    they depend on r only through the small fail-fast band). The baseline is
    "Ask", which pays E[L_r] and E[C_r] on every query. Latency drag is
    reported at r = 0.
    Returns columns: utilization, auarc, base_auarc, pct_delta_auarc,
    latency_pct_change, cost_pct_change, naive_latency_s, actual_latency_s, drag_ratio.
    """
    _check_records(records)
    gen = _rng(rng)
    grid = rejection_grid(max_rate, step)
    base = failfast_curve(records, 0.0, grid, gen)
    base_auarc, base_lat, base_cost = base["accuracy"].mean(), records["latency_r"].mean(), records["cost_r"].mean()
    rows = []
    for u in utilizations:
        cur = failfast_curve(records, u, grid, gen)
        action, _ = failfast_policy(records["p_true_nr"].to_numpy(float), records["tokens_r"].to_numpy(float), u, 0.0, gen)
        drag = latency_drag(records["latency_r"].to_numpy(float), records["latency_nr"].to_numpy(float), action == PASS)
        a = cur["accuracy"].mean()
        rows.append(
            {
                "utilization": u,
                "auarc": a,
                "base_auarc": base_auarc,
                "pct_delta_auarc": 100 * (a - base_auarc) / base_auarc,
                "latency_pct_change": 100 * (cur["mean_latency_s"].mean() - base_lat) / base_lat,
                "cost_pct_change": 100 * (cur["mean_cost"].mean() - base_cost) / base_cost,
                "naive_latency_s": drag["naive_latency"],
                "actual_latency_s": drag["actual_latency"],
                "drag_ratio": drag["drag_ratio"],
            }
        )
    return pd.DataFrame(rows)


def join_failfast_records(
    records: pd.DataFrame,
    reasoning_model: str,
    nonreasoning_model: str,
    confidence_col: str = "confidence",
) -> pd.DataFrame:
    """Join canonical long records (query_id, model_id, correct, <confidence_col>, tokens_out,
    latency_ms, cost_usd) into one row per query with FAILFAST_COLUMNS, on shared query ids."""
    needed = {"query_id", "model_id", "correct", "tokens_out", "latency_ms", "cost_usd", confidence_col}
    missing = needed - set(records.columns)
    if missing:
        raise ValueError(f"records are missing column(s) {sorted(missing)}")
    parts = {}
    for role, model in (("r", reasoning_model), ("nr", nonreasoning_model)):
        g = records[records["model_id"] == model]
        if g.empty:
            raise ValueError(f"no records for model {model!r}")
        if g["query_id"].duplicated().any():
            raise ValueError(f"model {model!r} has duplicate query_id rows; pass one split/generation")
        parts[role] = g.set_index("query_id")
    r, nr = parts["r"], parts["nr"]
    common = r.index.intersection(nr.index)
    if common.empty:
        raise ValueError(f"models {reasoning_model!r} and {nonreasoning_model!r} share no query ids")
    r, nr = r.loc[common], nr.loc[common]
    return pd.DataFrame(
        {
            "correct_r": r["correct"].astype(float),
            "tokens_r": r["tokens_out"].astype(float),
            "latency_r": r["latency_ms"].astype(float) / 1000.0,
            "cost_r": r["cost_usd"].astype(float),
            "correct_nr": nr["correct"].astype(float),
            "p_true_nr": nr[confidence_col].astype(float),
            "latency_nr": nr["latency_ms"].astype(float) / 1000.0,
            "cost_nr": nr["cost_usd"].astype(float),
        },
        index=common,
    )
