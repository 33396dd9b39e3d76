"""Dynamic partitions: one per dataset of raw.query_records, one per case study, one per scenario YAML file.

`pipelines.partitions.sync_dynamic_partitions` registers and drops their keys.
"""

import dagster as dg

dataset_partitions = dg.DynamicPartitionsDefinition(name="dataset")
scenario_partitions = dg.DynamicPartitionsDefinition(name="scenario")
case_partitions = dg.DynamicPartitionsDefinition(name="case")
# Decisions (targets, recommendations, leaderboards, policy values): one partition per case x scenario.
decision_partitions = dg.MultiPartitionsDefinition({"case": case_partitions, "scenario": scenario_partitions})
