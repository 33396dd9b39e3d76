"""One automation tick of the refresh driver against the deploy stack, on Dagster's connection per query and on kept
connections (pipelines/pg_connections.py), alternated (deploy/README.md, "What it buys").

Needs a stack with a refreshed instance: `python -m pipelines.stack up`, a refresh through it
(`python -m pipelines.queue_refresh -w var/deploy/workspace.yaml`), then, in the stack's environment,

    python scripts/deploy_tick_timing.py [--rounds N]

Prints each tick's wall time, the median of each kind and the load average before and after. A tick here is the
driver's `pipelines.refresh.tick` from an empty cursor: it evaluates every asset's condition, as the refresh's first
tick does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import dagster as dg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from pipelines.definitions import defs
    from pipelines.pg_connections import keep_connections
    from pipelines.refresh import tick

    print(f"load average before: {os.getloadavg()[0]:.1f}")
    plain, kept = dg.DagsterInstance.get(), keep_connections(dg.DagsterInstance.get())
    times: dict[str, list[float]] = {"a connection per query": [], "kept connections": []}
    for _ in range(args.rounds):
        for label, instance in (("a connection per query", plain), ("kept connections", kept)):
            begin = time.monotonic()
            tick(defs, instance, None)
            times[label].append(time.monotonic() - begin)
            print(f"{label}: {times[label][-1]:.1f} s", flush=True)
    for label, seconds in times.items():
        print(f"{label}: median {statistics.median(seconds):.1f} s of {len(seconds)} ticks")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
