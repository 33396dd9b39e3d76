"""Where a queued refresh's wall time goes, from the deploy instance's event log (issue 44, items 1 and 3).

Every instant of the refresh's wall time is given to the first of these that is in progress for some run:

1. `step`: a step executes (STEP_START to its success or failure, on a Celery worker);
2. `task start`: a step's Celery task was submitted and its step has not started (broker, worker picks it up,
   opens the instance and builds the step's plan);
3. `run worker`: a run worker runs and none of its steps is in 1 or 2 (planning, the executor's 1 s poll of
   finished tasks, waiting for a pool slot, run start and end);
4. `launch`: the daemon launched the run (RUN_STARTING) and its run worker has not started (RUN_START);
5. `queue`: the run was created and the daemon has not launched it (its dequeue interval);
6. `driver`: no run in flight (the refresh driver evaluates the automation, submits the next tick, starts up);
   `driver start-up`, a part of it: before the first run was created (the driver's process starts, imports the
   definitions, loads the code location from the code server, reads the sources' state).

    python -m pipelines.stack_timing START END RUN_ID ...   # with the stack's environment; START/END epoch seconds
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

import dagster as dg
import numpy as np

CATEGORIES = ("step", "task start", "run worker", "launch", "queue", "driver")
RESOLUTION_S = 0.05


@dataclass
class RunTimes:
    """Intervals (epoch seconds) of one run, by category (the first five of CATEGORIES)."""

    intervals: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: {c: [] for c in CATEGORIES})
    step_seconds: float = 0.0  # summed over steps (overlapping steps count each)
    steps: int = 0


def run_times(instance: dg.DagsterInstance, run_id: str) -> RunTimes:
    record = instance.get_run_records(dg.RunsFilter(run_ids=[run_id]))[0]
    created, end = record.create_timestamp.timestamp(), record.end_time or record.create_timestamp.timestamp()
    starting = started = None
    submitted: dict[str, float] = {}
    step_start: dict[str, float] = {}
    times = RunTimes()
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None:
            continue
        kind = event.event_type
        if kind == dg.DagsterEventType.RUN_STARTING:
            starting = entry.timestamp
        elif kind == dg.DagsterEventType.RUN_START:
            started = entry.timestamp
        elif event.step_key and "Submitting celery task" in (event.message or ""):
            submitted.setdefault(event.step_key, entry.timestamp)
        elif kind == dg.DagsterEventType.STEP_START:
            step_start[event.step_key] = entry.timestamp
            if event.step_key in submitted:
                times.intervals["task start"].append((submitted.pop(event.step_key), entry.timestamp))
        elif kind in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE) \
                and event.step_key in step_start:
            begin = step_start.pop(event.step_key)
            times.intervals["step"].append((begin, entry.timestamp))
            times.step_seconds += entry.timestamp - begin
            times.steps += 1
    starting = starting or started or end
    started = started or end
    times.intervals["queue"].append((created, starting))
    times.intervals["launch"].append((starting, started))
    times.intervals["run worker"].append((started, end))
    return times


def breakdown(runs: list[RunTimes], start: float, end: float) -> dict[str, float]:
    """Seconds of [start, end] in each of CATEGORIES (they add up to end - start), plus `driver start-up` (the
    driver's seconds before the first run was created), `steps summed` (every step's execution time added, > `step`
    when steps overlap) and `steps`."""
    grid = np.arange(start, end, RESOLUTION_S) + RESOLUTION_S / 2
    owner = np.full(len(grid), len(CATEGORIES) - 1)  # driver
    for rank in reversed(range(len(CATEGORIES) - 1)):  # the lowest rank (step) is written last and wins
        for run in runs:
            for begin, finish in run.intervals[CATEGORIES[rank]]:
                owner[(grid >= begin) & (grid < finish)] = rank
    seconds = {c: float(np.sum(owner == i)) * RESOLUTION_S for i, c in enumerate(CATEGORIES)}
    first_run = min((begin for run in runs for begin, _ in run.intervals["queue"]), default=end)
    seconds["driver start-up"] = float(np.sum((owner == len(CATEGORIES) - 1) & (grid < first_run))) * RESOLUTION_S
    seconds["steps summed"] = sum(r.step_seconds for r in runs)
    seconds["steps"] = sum(r.steps for r in runs)
    return seconds


def percent(share: float) -> str:
    return f"{100 * share:.0f} %"


def describe(seconds: dict[str, float], wall: float) -> str:
    """One line: each category's seconds and share of the wall time."""
    parts = [f"{c} {seconds[c]:.0f} s ({percent(seconds[c] / wall)})" for c in CATEGORIES]
    parts[-1] += f", of which start-up {seconds['driver start-up']:.0f} s"
    return (f"{wall:.0f} s: " + ", ".join(parts) + f"; {seconds['steps']:.0f} steps, "
            f"{seconds['steps summed']:.0f} s of step execution summed")


def main(argv: list[str]) -> int:
    start, end, run_ids = float(argv[0]), float(argv[1]), argv[2:]
    with dg.DagsterInstance.get() as instance:
        seconds = breakdown([run_times(instance, run_id) for run_id in run_ids], start, end)
    print(json.dumps(seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
