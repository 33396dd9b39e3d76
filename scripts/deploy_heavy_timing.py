"""One heavy study through the deploy stack with one and with two compute workers (deploy/README.md, "What it buys").

Starts the stack of `make deploy-check` (pipelines.stack) with COMPASS_HEAVY=1 and queues one run of
`oracle/synthetic_validation` (no upstream assets; the heavy grid of compass.oracle.validation, 1,000 prompts; with
`--reps N` N replicates per cell instead of the heavy 10, to fit a few minutes) with worker-compute alone, then
again with a second worker on the compute queue. Prints per run: wall time from queueing to the run's end, the CPU
time (user + sys) of every process of the stack over the run, and the load average before and after. Stops the
stack at the end, also on failure.

    python scripts/deploy_heavy_timing.py [--reps N]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import dagster as dg

CLOCK = os.sysconf("SC_CLK_TCK")
STUDY = dg.AssetKey(["oracle", "synthetic_validation"])


def stack_cpu_s(stack) -> float:
    """User + sys CPU seconds of every live process in the stack's process groups (with their reaped children)."""
    groups, total = set(stack.pids.values()), 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) in groups:  # after "pid (comm)": state ppid pgrp ... utime(11) stime(12) cutime cstime
            total += sum(int(f) for f in fields[11:15])
    return total / CLOCK


def timed_run(stack, queue, run_config: dict, label: str, timeout_s: float) -> None:
    load, cpu, started = os.getloadavg(), stack_cpu_s(stack), time.monotonic()
    run_id = queue.submit([STUDY], None, tags={"compass/study": "heavy", "compass/test": "heavy-timing"},
                          run_config=run_config)
    status = queue.wait([run_id], timeout_s)[run_id]
    wall, cpu = time.monotonic() - started, stack_cpu_s(stack) - cpu
    print(f"{label}: run {run_id} {status.value}, wall {wall:.0f} s, CPU of the stack {cpu:.0f} s (user+sys), "
          f"load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


def main(reps: int | None, timeout_s: float = 1800) -> None:
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import WorkspaceFileTarget

    from pipelines.queue_refresh import Queue
    from pipelines.stack import Stack

    os.environ["COMPASS_HEAVY"] = "1"  # Stack.env() passes it to every process of the stack
    stack = Stack(visibility_timeout_s=None)  # the profile's 7200 s: the check's 40 s would hand the study out twice
    try:
        stack.start()
        os.environ.update(stack.env())
        run_config = {"ops": {"oracle__synthetic_validation": {"config": {"n_reps": reps}}}} if reps else {}
        with dg.DagsterInstance.get() as instance, \
                WorkspaceProcessContext(instance, WorkspaceFileTarget(paths=[stack.workspace])) as workspace:
            queue = Queue(instance, workspace)
            timed_run(stack, queue, run_config, "one compute worker", timeout_s)
            stack.start_worker("worker-compute-2", "dagster")
            timed_run(stack, queue, run_config, "two compute workers", timeout_s)
    finally:
        stack.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, help="replicates per grid cell (the heavy grid: 10)")
    main(parser.parse_args().reps)
