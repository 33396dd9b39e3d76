"""Each run of a queued refresh on one line, from the deploy instance's event log (issue 44, item 3): where a run's
own time goes (queue, launch, run start to first step, steps, task starts between them, run end), and how long the
refresh had no run in flight before it was created (the driver's tick and submission).

    python -m pipelines.stack up                       # or a stack a check left (its Postgres started again)
    python scripts/deploy_run_timeline.py [RUN_ID ...]  # with the stack's environment; no ids: every run

Columns, in seconds: `created` from the first run's creation; `idle` with no run in flight before this one was
created; `queue` creation to RUN_STARTING (daemon dequeue); `launch` RUN_STARTING to RUN_START (run worker task
picked up); `to step 1` RUN_START to the first STEP_START; `steps` summed step execution; `task starts` summed
submission-to-STEP_START; `end` last step end to the run's end.

`idle` counts only time with no run in flight anywhere: a hop of one partition's chain while another partition's
run executes shows as 0, so it understates the waiting on one chain; and with no ids it reads every run in the
instance, so the gap between two refreshes in one home shows as idle too (pass the refresh's run ids).
"""

from __future__ import annotations

import sys

import dagster as dg


def run_row(instance: dg.DagsterInstance, run_id: str) -> dict:
    record = instance.get_run_records(dg.RunsFilter(run_ids=[run_id]))[0]
    run = record.dagster_run
    row = {"run": run_id[:8], "partition": run.tags.get("dagster/partition", "-"),
           "assets": len(run.asset_selection or ()), "created": record.create_timestamp.timestamp(),
           "end": record.end_time, "starting": None, "start": None, "first step": None, "last step end": None,
           "steps": 0.0, "task starts": 0.0, "n": 0}
    submitted, begun = {}, {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None:
            continue
        kind, t = event.event_type, entry.timestamp
        if kind == dg.DagsterEventType.RUN_STARTING:
            row["starting"] = t
        elif kind == dg.DagsterEventType.RUN_START:
            row["start"] = t
        elif event.step_key and "Submitting celery task" in (event.message or ""):
            submitted.setdefault(event.step_key, t)
        elif kind == dg.DagsterEventType.STEP_START:
            begun[event.step_key] = t
            row["first step"] = row["first step"] or t
            if event.step_key in submitted:
                row["task starts"] += t - submitted.pop(event.step_key)
        elif kind in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE) and event.step_key in begun:
            row["steps"] += t - begun.pop(event.step_key)
            row["n"] += 1
            row["last step end"] = t
    return row


def main(run_ids: list[str]) -> int:
    with dg.DagsterInstance.get() as instance:
        if not run_ids:
            run_ids = [r.run_id for r in instance.get_runs()]
        rows = sorted((run_row(instance, run_id) for run_id in run_ids), key=lambda r: r["created"])
    origin = rows[0]["created"]
    print(f"{'run':8} {'partition':32} {'assets':>6} {'steps#':>6} {'created':>7} {'idle':>5} {'queue':>5} "
          f"{'launch':>6} {'to step 1':>9} {'steps':>6} {'task starts':>11} {'end':>5}")
    ended: list[float] = []
    for row in rows:
        busy_until = max((e for e in ended), default=row["created"])
        idle = max(0.0, row["created"] - busy_until) if ended else 0.0
        ended.append(row["end"] or row["created"])

        def span(a, b):
            return f"{row[b] - row[a]:.1f}" if row[a] and row[b] else "-"

        print(f"{row['run']:8} {row['partition'][:32]:32} {row['assets']:>6} {row['n']:>6} "
              f"{row['created'] - origin:7.1f} {idle:5.1f} {span('created', 'starting'):>5} "
              f"{span('starting', 'start'):>6} {span('start', 'first step'):>9} {row['steps']:6.1f} "
              f"{row['task starts']:11.1f} {span('last step end', 'end'):>5}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
