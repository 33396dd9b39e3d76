"""pipelines.queue_refresh without a stack: a tick that overlaps runs in flight does not request their asset
partitions again (issue 44, item 3)."""

import dagster as dg

from pipelines.queue_refresh import _not_in_flight

TARGETS, LEADERBOARDS, RECOMMENDATIONS = (dg.AssetKey(["compass", name]) for name in
                                          ("targets", "leaderboards", "recommendations"))
CHANGES = dg.AssetKey(["compass", "leaderboard_changes"])
LOW, ALL = "small_open|cost_aware_low", "small_open|constrained_all"


def test_a_tick_does_not_request_what_a_run_in_flight_plans():
    """A run in flight plans one decision partition, i.e. all five decision tables (a multi-asset that cannot run in
    part): a tick requesting any of them for that partition gets them dropped, their child and the other partition
    kept, and a request left empty goes. Red when nothing is dropped (the cold refresh ran 11 asset partitions
    twice, 73 materializations instead of 62, measured on the live stack) and when the run's inseparable siblings
    are not counted as planned (the leaderboards, only the targets named in the run's request, would run twice)."""
    in_flight = {"run-1": (LOW, [TARGETS])}
    runs = [(LOW, [LEADERBOARDS, CHANGES]), (ALL, [TARGETS]), (LOW, [RECOMMENDATIONS])]
    assert _not_in_flight(runs, in_flight) == [(LOW, [CHANGES]), (ALL, [TARGETS])]
    assert _not_in_flight(runs, {}) == runs
