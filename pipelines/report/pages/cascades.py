"""The cascades page (seed 001, ch. 2-3)."""

from __future__ import annotations

from pipelines.report import charts
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse


def cascades_body(wh: Warehouse) -> str:
    curves = readers.published(wh, "cascade.curves")
    parts = []
    for i, (dataset, part) in enumerate(curves.groupby("dataset", sort=True) if len(curves) else []):
        x, y = ("cost", "error") if {"cost", "error"} <= set(part.columns) else part.columns[:2]
        group = [c for c in ("cascade", "method") if c in part.columns]
        part = part.assign(curve=part[group].astype(str).agg(" ".join, axis=1)) if group else part.assign(curve="")
        parts.append(charts.figure_div(charts.curves(part, x, y, "curve", f"{dataset}: test error vs cost"),
                                       f"chart-cascade-{i}"))
    maps = readers.published(wh, "cascade.optimal_model_map")
    maps = maps[maps["split"] == "test"] if "split" in maps else maps
    for i, (dataset, part) in enumerate(maps.groupby("dataset", sort=True) if len(maps) else []):
        fig = charts.points_with_intervals(part.assign(label=part["best_system"]), "lambda_error", "lambda_latency",
                                           "label", f"{dataset}: the best system per price of error and of latency",
                                           group="best_system", log_x=True)
        parts.append(charts.figure_div(fig, f"chart-economics-{i}"))
    for table_name, title in (("cascade.auc_summary", "Area under the error-cost curves"),
                              ("cascade.critical_prices", "Critical prices (economics)")):
        frame = readers.published(wh, table_name)
        if len(frame):
            parts.append(section(title, frame.head(500)))
    return "".join(parts) or '<p class="note">No cascade results (cascades need datasets with confidences).</p>'


SLICE = Slice("cascades", "Cascades", "cascade.curves", cascades_body,
              ("cascade.curves", "cascade.optimal_model_map", "cascade.auc_summary", "cascade.critical_prices"))
