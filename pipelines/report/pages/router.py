"""The meta-router page (seed 003)."""

from __future__ import annotations

from pipelines.report import charts
from pipelines.report.sections import section
from pipelines.report.slice import Slice
from resources import readers
from resources.warehouse import Warehouse


def router_body(wh: Warehouse) -> str:
    """Seed 003: efficiency gain against primary-model usage per routing dataset (largest gold size), the mean gain
    per router and gold size, the overlap diagnostic and the dollar budgets."""
    evaluation = readers.published(wh, "router.evaluation")
    parts = []
    for i, (dataset, part) in enumerate(evaluation.groupby("dataset", sort=True)):
        part = part[part["n_gold"] == part["n_gold"].max()]
        parts.append(charts.figure_div(charts.curves(
            part, "pmur", "expected_gain", "router",
            f"{dataset}: gain over random routing vs share sent to the primary model (n_gold = {part['n_gold'].iloc[0]})"),
            f"chart-router-{i}"))
    mean = (evaluation.groupby(["dataset", "n_gold", "router"], as_index=False)
            .agg(mean_gain=("expected_gain", "mean"), mean_se=("se", "mean"), mc_rounds=("mc_rounds", "first")))
    overlap = readers.published(wh, "router.overlap")
    if len(overlap):
        overlap = overlap.groupby(["dataset", "label_kind"], as_index=False).agg(
            n=("n", "first"), share_inside=("share_inside", "first"), auc=("auc", "first"))
    policies = readers.published(wh, "router.policies")
    return ("".join(parts)
            + section("Mean gain over the PMUR grid (gold units per query; 0 = random routing)", mean)
            + (section("Overlap of gold and preference queries (AUC 0.5: same distribution)", overlap)
               if len(overlap) else "")
            + (section("Budgets: threshold w per share of queries to the primary model, in dollars and normalized",
                       policies.head(500)) if len(policies) else ""))


SLICE = Slice("router", "Router", "router.evaluation", router_body,
              ("router.evaluation", "router.overlap", "router.policies"))
