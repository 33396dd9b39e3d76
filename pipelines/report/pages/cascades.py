"""The cascades page (seed 001, ch. 2-3): a computed verdict, per dataset the test error-cost curves of one chosen
cascade (the longest Llama prefix, one line per method) instead of every cascade at once, Rational Tuning vs the
baselines (Tables 2.7 / 2.8 shape) and the Markov-copula model's error out of sample, numbers formatted for people."""

from __future__ import annotations

import pandas as pd

from pipelines.formatting import number
from pipelines.report import charts
from pipelines.report.html import verdict
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse

METHOD_NAMES = {"rt": "Rational Tuning", "rt_aic": "Rational Tuning (AIC copula)", "grid": "grid search",
                "bo": "Bayesian optimization"}


def cascade_verdict(auc_summary: pd.DataFrame, markov: pd.DataFrame) -> str:
    """RT vs grid search on k >= 3 (full training set) and the model's test-split error, from the tables."""
    rows = auc_summary[(auc_summary["setting"] == "full") & (auc_summary["k_group"] == "k>=3")
                       & (auc_summary["method"] == "grid")]
    parts = []
    if len(rows):
        better = rows[rows["mean_pct_delta"] < 0]
        parts.append(f"Rational Tuning's test AUC is below grid search's on {len(better)} of {len(rows)} datasets for "
                     f"cascades of 3 or more models (mean change {number(rows['mean_pct_delta'].min(), 2)} to "
                     f"{number(rows['mean_pct_delta'].max(), 2)} %; negative favours Rational Tuning)")
    if "split" in markov and (markov["split"] == "test").any():
        gap = markov[markov["split"] == "test"].groupby("dataset")["accuracy_gap_points"].mean()
        parts.append(f"out of sample, its model over-predicts accuracy by {number(gap.max(), 2)} points on "
                     f"{gap.idxmax()} (smallest: {number(gap.min(), 2)} on {gap.idxmin()})")
    return ("; ".join(parts) + ".") if parts else "No cascade comparison in the warehouse yet."


def chosen_cascade(part: pd.DataFrame) -> str:
    """The longest cascade of the primary chain (else the longest cascade) of a dataset's curves."""
    ranked = part.assign(primary=part["chain"] == "llama").sort_values(["primary", "k"], ascending=False)
    return str(ranked["cascade"].iloc[0])


def auc_rows(summary: pd.DataFrame) -> pd.DataFrame:
    out = summary[summary["k_group"].isin(["k>=3", "all"])].sort_values(["setting", "dataset", "k_group", "method"])
    return pd.DataFrame({
        "training set": out["setting"].map({"full": "full (Table 2.7)", "low": "n ≤ 30 (Table 2.8)"}),
        "dataset": out["dataset"], "cascades": out["k_group"].map({"k>=3": "3+ models", "all": "all"}),
        "baseline": out["method"].map(METHOD_NAMES).fillna(out["method"]),
        "AUC, Rational Tuning": out["auc_reference"].map(lambda v: number(v, 3)),
        "AUC, baseline": out["auc"].map(lambda v: number(v, 3)),
        "mean change, %": out["mean_pct_delta"].map(lambda v: number(v, 2)),
        "one-sided p": out["p_value"].map(lambda v: number(v, 2))})


def markov_rows(markov: pd.DataFrame) -> pd.DataFrame:
    split = markov["split"] if "split" in markov else pd.Series("train", index=markov.index)
    cols = [c for c in ("accuracy_gap_points", "calibration_gap_points", "cost_gap_pct") if c in markov]
    g = markov.assign(split=split).groupby(["dataset", "k", "split"])[cols].mean().unstack("split")
    g.columns = [f"{c.replace('_', ' ')} ({s})" for c, s in g.columns]
    return g.map(lambda v: number(v, 2)).reset_index()


def cascades_body(wh: Warehouse) -> str:
    curves = readers.published(wh, "cascade.curves")
    auc = readers.published(wh, "cascade.auc_summary")
    markov = readers.published(wh, "cascade.markov_error")
    parts = [verdict(cascade_verdict(auc, markov))] if len(auc) else []
    full = curves[curves["sample"] == "full"] if len(curves) else curves
    for i, (dataset, part) in enumerate(full.groupby("dataset", sort=True) if len(full) else []):
        cascade = chosen_cascade(part)
        one = part[part["cascade"] == cascade]
        one = one.assign(method=one["method"].map(METHOD_NAMES).fillna(one["method"]))
        fig = charts.curves(one, "cost", "error", "method", f"{dataset}: {cascade.replace('>', ' → ')}, test split")
        fig.update_layout(xaxis_title="cost (USD per query)", yaxis_title="error rate (share of queries wrong)")
        parts.append(charts.figure_div(fig, f"chart-cascade-{i}"))
    maps = readers.published(wh, "cascade.optimal_model_map")
    maps = maps[maps["split"] == "test"] if "split" in maps else maps
    for i, (dataset, part) in enumerate(maps.groupby("dataset", sort=True) if len(maps) else []):
        fig = charts.points_with_intervals(part.assign(label=part["best_system"]), "lambda_error", "lambda_latency",
                                           "label", f"{dataset}: the best single model per price of error and of latency",
                                           group="best_system", log_x=True)
        fig.update_layout(xaxis_title="price of an error (USD per wrong answer)",
                          yaxis_title="price of latency (USD per second)")
        parts.append(charts.figure_div(fig, f"chart-economics-{i}"))
    if len(auc):
        parts.append(section("Rational Tuning vs the baselines: area under the test error-cost curve", auc_rows(auc),
                             "AUC: mean test error over the cost range both methods cover; change = 100 (AUC_RT − "
                             "AUC_baseline) / AUC_baseline, negative favours Rational Tuning."))
    if len(markov):
        parts.append(section("The Markov-copula model's own error, out of sample (test) and in sample (train)",
                             markov_rows(markov), "Mean over Rational Tuning's thresholds, model minus the cascade run "
                             "on that split; calibration gap: the part a perfect model would still make because the "
                             "calibrators miss on that split."))
    prices = readers.published(wh, "cascade.critical_prices")
    if len(prices):
        parts.append(section("Critical prices of error (economics)", prices.head(500)))
    return "".join(parts) or '<p class="note">No cascade results (cascades need datasets with confidences).</p>'


SLICE = Slice("cascades", "Cascades", "cascade.curves", cascades_body,
              ("cascade.curves", "cascade.optimal_model_map", "cascade.auc_summary", "cascade.critical_prices",
               "cascade.markov_error"))
