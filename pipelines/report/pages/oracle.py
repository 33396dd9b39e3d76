"""The oracle frontier page (seed 002)."""

from __future__ import annotations

from pipelines.report import charts
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse


def oracle_body(wh: Warehouse) -> str:
    summary = readers.published(wh, "oracle.summary")
    estimates = readers.published(wh, "oracle.estimates")
    singles = readers.published(wh, "oracle.single_models")
    parts = [section("Per dataset: best single model vs the oracle", summary)]
    for i, (dataset, est) in enumerate(estimates.groupby("dataset", sort=True)):
        label = est["estimator"] + " (" + est["model_set"] + ")"
        fig = charts.points_with_intervals(est.assign(label=label), "cost", "quality", "label",
                                           f"{dataset}: oracle estimators with intervals", "quality_lo", "quality_hi",
                                           group="model_set")
        single = singles[singles["dataset"] == dataset]
        if len(single):
            fig.add_scatter(x=single["cost"], y=single["quality"], mode="markers", name="single models",
                            text=single["model_id"], hovertemplate="%{text}<extra></extra>",
                            marker=dict(symbol="x", size=8, color="#777"))
        parts.append(charts.figure_div(fig, f"chart-oracle-{i}"))
    return "".join(parts) + section("Estimates", estimates)


SLICE = Slice("oracle", "Oracle frontier", "oracle.estimates", oracle_body,
              ("oracle.summary", "oracle.estimates", "oracle.single_models"))
