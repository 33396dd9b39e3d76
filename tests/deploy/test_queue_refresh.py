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


class _InstantQueue:
    """Runs that finish as soon as they are submitted (no stack): the driver's loop alone."""

    instance = None

    def __init__(self):
        self.submitted: list[tuple[str | None, list[dg.AssetKey]]] = []

    def submit(self, keys, partition):
        self.submitted.append((partition, keys))
        return f"run-{len(self.submitted)}"

    def finished(self, run_ids):
        return dict.fromkeys(run_ids, dg.DagsterRunStatus.SUCCESS)

    def wait(self, run_ids, timeout_s, any_of=False):
        return self.finished(run_ids)


def test_a_refresh_that_does_not_settle_stops(monkeypatch):
    """A tick that requests the same decision partition again after every run (as a data version that changed on
    every run would) stops the refresh after MAX_TICKS runs of that partition key, with an error naming it, instead
    of ticking for ever; a tick that requests nothing ends it after the runs it started. Red when the bound is
    removed (the loop never ends: seen, this test killed by `timeout 90`, no output) and when the runs are not
    counted (`unsettled` always empty: the same)."""
    import pytest

    import pipelines.queue_refresh as qr
    from pipelines.refresh import MAX_TICKS, RefreshReport

    requests = [dg.RunRequest(partition_key=LOW, asset_selection=[LEADERBOARDS])]  # it has children
    monkeypatch.setattr(qr, "tick", lambda defs, instance, cursor: (requests, cursor))
    monkeypatch.setattr(qr, "sync_dynamic_partitions", lambda instance: None)
    monkeypatch.setattr(RefreshReport, "add", lambda self, *args: None)
    queue = _InstantQueue()
    with pytest.raises(RuntimeError, match=f"more than {MAX_TICKS} runs of partition key.*{LOW}"):
        qr.tick_as_runs_finish(queue, RefreshReport(), 1, lambda line: None)
    assert len(queue.submitted) == MAX_TICKS

    answers = iter([requests, requests, []])
    monkeypatch.setattr(qr, "tick", lambda defs, instance, cursor: (next(answers), cursor))
    queue, report = _InstantQueue(), RefreshReport()
    qr.tick_as_runs_finish(queue, report, 1, lambda line: None)
    assert len(queue.submitted) == 2 and report.ticks == 3
