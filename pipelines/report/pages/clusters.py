"""The cluster benchmark page (thesis ch. 5)."""

from __future__ import annotations

from pipelines.report.sections import tables_body
from pipelines.report.slice import Slice

SLICE = Slice("clusters", "Cluster benchmark", "clusters.benchmark",
              tables_body(("clusters.benchmark", "Clustering benchmark (§5.3)"),
                          ("clusters.segmentation", "User segmentation")),
              ("clusters.benchmark", "clusters.segmentation"))
