"""The oracle frontier page (seed 002): a computed verdict, one headline row per dataset and model set with its
flag carried to the cost saving and AIQ, the flags explained once, and per dataset a chart of a chosen subset of
estimators beside the single models."""

from __future__ import annotations

import pandas as pd

from pipelines.formatting import flagged, number, pct
from pipelines.report import charts
from pipelines.report.html import esc, verdict
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse

CHART_ESTIMATORS = ("naive", "split_sample", "bias_corrected", "pgm")  # bounds, the recommended one, the paper's
FLAG_MEANING = {
    "range": "not identified (one generation per prompt and model): the oracle lies in the range shown; the 95 % "
             "interval around it allows for sampling noise",
    "below_split_sample": "the recommended estimate fell below the split-sample lower bound and is published at the "
                          "bound; the cost saving and AIQ come from the same estimator and carry the flag",
    "clipped": "the recommended estimate fell outside the identified range and is published clipped into it",
    "all_correct": "every model answers every prompt right: nothing tells the models apart, and the 95 % interval "
                   "comes from the prompt count alone",
    "all_wrong": "every model answers every prompt wrong: nothing tells the models apart, and the 95 % interval "
                 "comes from the prompt count alone",
}


def oracle_verdict(summary: pd.DataFrame) -> str:
    """How many datasets have an identified oracle, a flagged one, or only a range (computed from oracle.summary)."""
    widest = summary.sort_values("n_models", ascending=False).groupby("dataset", sort=True).head(1) \
        if "n_models" in summary else summary.groupby("dataset", sort=True).head(1)
    point = widest[widest["headline_flag"] == ""]
    ranged = widest[widest["headline_flag"] == "range"]
    with_flags = widest[~widest["headline_flag"].isin(["", "range"])]
    parts = [f"Of {len(widest)} datasets, the oracle is a clean point estimate on {len(point)}"]
    if len(with_flags):
        parts.append(f"a flagged estimate on {len(with_flags)} ({', '.join(with_flags['dataset'])})")
    if len(ranged):
        uplift = 100 * (ranged["headline_hi"] - ranged["sota_quality"])
        parts.append(f"only a range on {len(ranged)} (one generation per prompt), whose top lies "
                     f"{number(uplift.min(), 2)}–{number(uplift.max(), 2)} points above the best single model")
    return "; ".join(parts) + "."


def headline_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset and model set, numbers formatted for people, the flag beside every headline number."""
    rows = []
    for r in summary.sort_values(["dataset", "model_set"]).itertuples():
        oracle = (f"{pct(r.headline_lo)} to {pct(r.headline_hi)}" if r.headline_flag == "range"
                  else pct(r.oracle_quality))
        ci = getattr(r, "headline_ci_lo", float("nan")), getattr(r, "headline_ci_hi", float("nan"))
        rows.append({"dataset": r.dataset, "model_set": r.model_set, "best single model": r.sota_model,
                     "its quality": pct(r.sota_quality), "oracle": flagged(oracle, r.headline_flag),
                     "95 % interval of the range": flagged(f"{pct(ci[0])} to {pct(ci[1])}",
                                                           getattr(r, "headline_ci_flag", "")),
                     "cost saving at SOTA quality": flagged(pct(r.cost_saving_at_sota_quality),
                                                              getattr(r, "cost_saving_flag", r.headline_flag)),
                     "AIQ": flagged(number(r.aiq, 3), getattr(r, "aiq_flag", r.headline_flag))})
    return pd.DataFrame(rows)


def flag_notes(summary: pd.DataFrame) -> str:
    shown = set(summary["headline_flag"]) | set(summary.get("headline_ci_flag", pd.Series(dtype=object)))
    flags = [f for f in FLAG_MEANING if f in shown]
    items = "".join(f"<li><b>[{esc(f)}]</b>: {esc(FLAG_MEANING[f])}</li>" for f in flags)
    return f'<ul class="note">{items}</ul>' if items else ""


def oracle_body(wh: Warehouse) -> str:
    summary = readers.published(wh, "oracle.summary")
    estimates = readers.published(wh, "oracle.estimates")
    singles = readers.published(wh, "oracle.single_models")
    if summary.empty:
        return '<p class="note">No oracle results.</p>'
    parts = [verdict(oracle_verdict(summary)),
             section("Per dataset: best single model vs the oracle", headline_rows(summary)), flag_notes(summary)]
    chosen = estimates[estimates["estimator"].isin(CHART_ESTIMATORS)]
    for i, (dataset, est) in enumerate(chosen.groupby("dataset", sort=True)):
        est = est[est["model_set"] == est.sort_values("n_models", ascending=False)["model_set"].iloc[0]] \
            if "n_models" in est else est
        basis = str(est["cost_basis"].iloc[0]) if "cost_basis" in est else ""
        x_title = "cost per query (USD)" if basis == "per_query_usd" else "relative price (blended USD per million tokens)"
        fig = charts.points_with_intervals(est.assign(label=est["estimator"]), "cost", "quality", "label",
                                           f"{dataset}: oracle estimators (95 % bootstrap intervals where drawn)",
                                           "quality_lo", "quality_hi", group="estimator")
        single = singles[singles["dataset"] == dataset]
        if len(single):
            fig.add_scatter(x=single["cost"], y=single["quality"], mode="markers", name="single models",
                            text=single["model_id"], hovertemplate="%{text}<extra></extra>",
                            marker=dict(symbol="x", size=8, color="#777"))
        fig.update_layout(xaxis_title=x_title, yaxis_title="quality (share of prompts answered correctly)")
        parts.append(charts.figure_div(fig, f"chart-oracle-{i}"))
    return "".join(parts) + section("Every estimator", estimates)


SLICE = Slice("oracle", "Oracle frontier", "oracle.estimates", oracle_body,
              ("oracle.summary", "oracle.estimates", "oracle.single_models"))
