"""What changed on each case x scenario leaderboard since its previous version, and why (ML Compass §4.6).

The comparison is `compass.mlcompass.changes`; which version counts as
"previous" is `resources.readers.leaderboard_snapshots`.
"""

import dagster as dg

from assets.compass_decisions import DECISION_KEYS
from assets.partitions import decision_partitions
from compass.mlcompass.changes import CHANGES, no_change
from compass.mlcompass.changes import leaderboard_changes as changes_table
from compass.mlcompass.decisions import NotApplicable
from resources import readers, settings
from resources.configs import cases, scenario_for
from resources.publish import publish_many
from resources.warehouse import WarehouseResource

CODE_VERSION = "compass-changes-2"  # 2: the measurement screen named as what binds


@dg.asset(key=["compass", "leaderboard_changes"], deps=[DECISION_KEYS["leaderboards"], DECISION_KEYS["recommendations"]],
          partitions_def=decision_partitions, code_version=CODE_VERSION, group_name="compass",
          pool=settings.writer_pool())
def leaderboard_changes(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """New and dropped models, rank moves and a changed mlc_mean pick since the previous leaderboard, with reasons."""
    wh = warehouse.get()
    keys = context.partition_key.keys_by_dimension
    case = cases()[keys["case"]]
    try:
        inputs = readers.decision_inputs(wh, case, scenario_for(keys["scenario"], case))
        table = changes_table(inputs, *readers.leaderboard_snapshots(wh, case.case_id, keys["scenario"], context.instance))
    except NotApplicable as skip:
        table = no_change(str(skip))
    counts = table["change"].value_counts().to_dict() if len(table) else {}
    return publish_many(context, wh, {"compass.leaderboard_changes": table},
                        {"case_id": case.case_id, "scenario": keys["scenario"]},
                        metadata={c: int(counts.get(c, 0)) for c in CHANGES})
