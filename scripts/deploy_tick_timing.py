"""One automation tick of the refresh driver against the deploy stack's instance, done three ways, alternated
(docs/results/operations.md, "The tick's evaluation, cut", and deploy/README.md, "What it buys"):

1. the sensor's tick (`pipelines.refresh.tick`) on Dagster's connection per query;
2. the sensor's tick on kept connections pinged at every checkout (pipelines/pg_connections.py; the driver until
   the cut);
3. the driver's tick now (`pipelines.automation_ticks.AutomationTicks`) on kept connections pinged only after a
   pause (`pipelines.queue_refresh.PING_AFTER_IDLE_S`).

Needs an instance with a refresh in its history: a stack (`python -m pipelines.stack up`, a refresh through it with
`python -m pipelines.queue_refresh -w var/deploy/workspace.yaml`) or any Postgres-backed DAGSTER_HOME a refresh
used; then, in its environment,

    python scripts/deploy_tick_timing.py [--rounds N] [--cursor]

Prints each tick's wall time, the median of each kind and the load average before and after. A tick starts from an
empty cursor (it evaluates every asset's condition, as a cold refresh's first tick does), or with --cursor from the
one the last refresh saved. Every kind must request the same runs (checked).
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
    parser.add_argument("--cursor", action="store_true", help="start from the last refresh's cursor")
    args = parser.parse_args()
    from pipelines.automation_ticks import AutomationTicks
    from pipelines.definitions import defs
    from pipelines.pg_connections import keep_connections
    from pipelines.queue_refresh import PING_AFTER_IDLE_S
    from pipelines.refresh import _load_cursor, tick

    print(f"load average before: {os.getloadavg()[0]:.1f}")
    plain, kept = dg.DagsterInstance.get(), keep_connections(dg.DagsterInstance.get())
    idle = keep_connections(dg.DagsterInstance.get(), ping_after_idle_s=PING_AFTER_IDLE_S)
    cursor = _load_cursor(plain) if args.cursor else None

    def sensor(instance):
        return lambda: tick(defs, instance, cursor)[0]

    kinds = {"sensor tick, a connection per query": sensor(plain),
             "sensor tick, kept connections pinged at each checkout": sensor(kept),
             "driver tick, kept connections pinged after a pause": lambda: AutomationTicks(defs, idle, cursor).tick()}
    times: dict[str, list[float]] = {label: [] for label in kinds}
    requested: dict[str, set] = {}
    for _ in range(args.rounds):
        for label, evaluate in kinds.items():
            begin = time.monotonic()
            requests = evaluate()
            times[label].append(time.monotonic() - begin)
            requested.setdefault(label, {(r.partition_key, k) for r in requests for k in r.asset_selection or []})
            print(f"{label}: {times[label][-1]:.1f} s, {len(requests)} run requests", flush=True)
    for label, seconds in times.items():
        print(f"{label}: median {statistics.median(seconds):.1f} s of {len(seconds)} ticks")
    print(f"same run requests every way: {len({frozenset(r) for r in requested.values()}) == 1}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
