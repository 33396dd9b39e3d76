"""Dynamic partitions: one per dataset of raw.query_records, one per case study, one per scenario YAML file,
one per cluster archetype YAML file, one per routing dataset of raw.route_labels, one per simulated matchmaking user.

`pipelines.partitions.sync_dynamic_partitions` registers and drops their keys.
"""

import warnings

import dagster as dg

dataset_partitions = dg.DynamicPartitionsDefinition(name="dataset")
scenario_partitions = dg.DynamicPartitionsDefinition(name="scenario")
case_partitions = dg.DynamicPartitionsDefinition(name="case")
archetype_partitions = dg.DynamicPartitionsDefinition(name="archetype")  # one per archetypes/*.yaml (clusters)
route_dataset_partitions = dg.DynamicPartitionsDefinition(name="route_dataset")  # one per raw.route_labels dataset
user_partitions = dg.DynamicPartitionsDefinition(name="user")  # one per users/*.yaml (matching)
# Decisions (targets, recommendations, leaderboards, policy values): one partition per case x scenario.
decision_partitions = dg.MultiPartitionsDefinition({"case": case_partitions, "scenario": scenario_partitions})

# Blocking checks are partitioned like their assets (assets.compass_checks says why); Dagster 1.13 marks
# partitioned check specs as preview and would warn on every import of the definitions.
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec", category=dg.PreviewWarning)
