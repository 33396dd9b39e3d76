"""The report/site asset at the end of the graph: every refresh that changes a table it shows rewrites the pages
that show it (pipelines.report.site.SiteWriter keeps the others).

Defined here rather than in assets/ because the site builder is application code (pipelines/) and assets
may not import it; pipelines/definitions.py registers it with assets.automation.REPORT_CONDITION.
"""

import dagster as dg

from pipelines.report.site import build_site, recommendations
from resources.settings import site_dir, writer_pool
from resources.warehouse import WarehouseResource

# The tables the site shows (router/ and matching/ pages appear when their tables exist, without a dependency).
SHOWN = [["compass", "leaderboard_changes"], ["compass", "leaderboards"], ["compass", "rank_uncertainty"],
         ["compass", "lambda_path"], ["compass", "cost_side"], ["oracle", "summary"], ["oracle", "estimates"],
         ["oracle", "single_models"], ["cascade", "curves"], ["cascade", "auc"], ["cascade", "economics"],
         ["clusters", "benchmark"], ["clusters", "segmentation"],
         ["clusters", "contexts"], ["clusters", "figures"], ["router", "evaluation"], ["router", "policies"],
         ["router", "overlap"], ["matching", "summary"], ["compass", "next_evaluations"]]


@dg.asset(key=["report", "site"], deps=[dg.AssetKey(k) for k in SHOWN], group_name="report", code_version="report-site-1",
          pool=writer_pool())
def report_site(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The static report site (var/reports/site/index.html): recommendations, sortable leaderboards, capability-cost
    charts, changes, one page per study, provenance. Opens from disk with no network."""
    root = site_dir()
    wh = warehouse.get()
    site = build_site(wh, root)
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    top = recommendations(site.boards)
    return dg.MaterializeResult(metadata={
        "pages": len(site.pages), "rewritten": len(site.rewritten), "size_mb": round(size / 2**20, 2),
        "index": dg.MetadataValue.path(str((root / "index.html").resolve())),
        "recommendations": dg.MetadataValue.md(top.to_markdown(index=False) if len(top) else "no leaderboards")})
