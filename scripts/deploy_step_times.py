"""Where a refresh through the deploy stack spends its time, from the instance's event log (deploy/README.md,
"What it buys"): per Celery queue, the steps' summed execution time, and the runs' wall time from creation to end.

    python scripts/deploy_step_times.py RUN_ID ...      # with the stack's environment (DAGSTER_HOME, DAGSTER_PG_*)
"""

from __future__ import annotations

import sys

import dagster as dg


def main(run_ids: list[str]) -> None:
    busy: dict[str, float] = {}
    count: dict[str, int] = {}
    first, last = float("inf"), 0.0
    with dg.DagsterInstance.get() as instance:
        for record in instance.get_run_records(dg.RunsFilter(run_ids=run_ids)):
            first = min(first, record.create_timestamp.timestamp())
            last = max(last, record.end_time or 0.0)
            queue, start = {}, {}
            for entry in instance.all_logs(record.dagster_run.run_id):
                event = entry.dagster_event
                if event is None or event.step_key is None:
                    continue
                if "Submitting celery task" in (event.message or ""):
                    queue[event.step_key] = event.message.rsplit('"', 2)[-2]
                elif event.event_type == dg.DagsterEventType.STEP_START:
                    start[event.step_key] = entry.timestamp
                elif event.event_type == dg.DagsterEventType.STEP_SUCCESS and event.step_key in start:
                    q = queue.get(event.step_key, "?")
                    busy[q] = busy.get(q, 0.0) + entry.timestamp - start[event.step_key]
                    count[q] = count.get(q, 0) + 1
    print(f"{len(run_ids)} runs, wall time {last - first:.0f} s from the first run's creation to the last run's end")
    for q in sorted(busy):
        print(f"queue {q}: {count[q]} steps, {busy[q]:.0f} s of step execution")


if __name__ == "__main__":
    main(sys.argv[1:])
