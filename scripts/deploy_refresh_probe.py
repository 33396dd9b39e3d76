"""One cold refresh through a running deploy stack, timed as `make deploy-check` times its two (issue 44, item 3):
faster than a whole check for comparing driver variants on one stack, one after the other (docs/results/
operations.md, "Orchestration of the queued refresh, continued").

    python -m pipelines.stack up                  # once; `python -m pipelines.stack stop` after
    python scripts/deploy_refresh_probe.py LABEL  # wipes the stack's runs and warehouse, then refreshes

Prints the driver's output (its last line counts runs, materializations and ticks: a materialization more than the
graph's asset partitions is an asset run twice), where the wall time went, the step-execution share with and without
the driver's start-up, and the load average before and after.
"""

from __future__ import annotations

import os
import sys

from pipelines.stack import Stack, forget_refresh, refresh
from pipelines.stack_timing import describe, percent


def main(label: str) -> int:
    stack = Stack.load()
    os.environ.update(stack.env())  # the stack's Dagster instance for forget_refresh
    forget_refresh(stack)
    ok, wall, seconds = refresh(stack, label)
    if not seconds:
        return 1
    print(describe(seconds, wall))
    print(f"step-execution share {percent(seconds['step'] / wall)}; with the driver's start-up "
          f"{percent(seconds['step'] / (wall + seconds['driver ready']))}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "probe"))
