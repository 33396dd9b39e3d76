"""Replay a cold refresh's recorded step durations on N workers over the real step graph (issue 44, item 4).

    .venv/bin/python scripts/deploy_replay.py DAGSTER_HOME --publish-share 0.12 [--workers 2 4 8 16]

Reads the first refresh of a local home (runs until the first gap of over 5 min; history/runs.db and each run's
event log, read-only): every asset step (its assets, its run's partition key, STEP_START to STEP_SUCCESS). A step
depends on the steps that materialized its assets' parents (pipelines.definitions): the parent step of the same
partition key, else of a dimension of it (case|scenario -> case), else every step of the parent asset. Asset checks
are left out (they run beside their asset and publish nothing).

Each step is compute, then its publish: the last `--publish-share` of its duration, under the warehouse's one
writer lock (a publish waits while another holds it; its worker stays busy). Steps are list-scheduled, the longest
remaining path first. Printed for the recorded graph and for a 10x catalog (10 copies of every partitioned step: ten
times the cases, scenarios and datasets; each unpartitioned step, which reads the whole catalog, ten times as long):
total step time, the critical path, and per worker count the makespan with the lock, without it, and the time the
lock was held. A replay of durations measured under the recording's load, not a measurement.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

GAP_S = 300


@dataclass
class Step:
    name: str
    seconds: float
    assets: frozenset[tuple[str, ...]]
    partition: str | None
    parents: list[int] = field(default_factory=list)


def _ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def recorded_steps(home: Path) -> list[Step]:
    """The asset steps of the home's first refresh, without dependencies."""
    with _ro(home / "history" / "runs.db") as con:
        runs = con.execute("select run_id, run_body, start_time, end_time from runs where start_time is not null "
                           "order by create_timestamp").fetchall()
    steps, previous_end = [], None
    for run_id, body, start, end in runs:
        if previous_end is not None and start - previous_end > GAP_S:
            break
        previous_end = max(previous_end or 0.0, end or start)
        partition = dict(json.loads(body).get("tags") or {}).get("dagster/partition")
        started, assets = {}, {}
        with _ro(home / "history" / "runs" / f"{run_id}.db") as con:
            rows = con.execute("select dagster_event_type, step_key, asset_key, timestamp from event_logs where "
                               "dagster_event_type in ('STEP_START', 'STEP_SUCCESS', 'ASSET_MATERIALIZATION') "
                               "order by id").fetchall()
        for kind, step_key, asset_key, stamp in rows:
            if kind == "ASSET_MATERIALIZATION":
                assets.setdefault(step_key, set()).add(tuple(json.loads(asset_key)))
            elif kind == "STEP_START":
                started[step_key] = _epoch(stamp)
            elif step_key in assets:  # STEP_SUCCESS of a step that materialized (checks materialize nothing)
                steps.append(Step(f"{step_key}[{partition}]" if partition else step_key,
                                  _epoch(stamp) - started[step_key], frozenset(assets[step_key]), partition))
    return steps


def link(steps: list[Step]) -> None:
    """Each step's parents: the steps that materialized its assets' parent assets (see the module docstring)."""
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    producers: dict[tuple[str, ...], list[int]] = {}
    for i, step in enumerate(steps):
        for asset in step.assets:
            producers.setdefault(asset, []).append(i)
    for i, step in enumerate(steps):
        parents = {tuple(p.path) for a in step.assets for p in graph.get(_key(a)).parent_keys} - step.assets
        found: set[int] = set()
        for parent in parents:
            candidates = producers.get(parent, [])
            same = [j for j in candidates if steps[j].partition == step.partition]
            parts = set((step.partition or "").split("|"))
            dimension = [j for j in candidates if steps[j].partition in parts]
            found.update(same or dimension or candidates)
        step.parents = sorted(found - {i})


def _key(path: tuple[str, ...]):
    import dagster as dg

    return dg.AssetKey(list(path))


def scaled(steps: list[Step], factor: int) -> list[Step]:
    """A `factor`x catalog: partitioned steps copied `factor` times (parents: the same copy, or the unpartitioned
    step), unpartitioned steps `factor` times as long."""
    out: list[Step] = []
    index: dict[tuple[int, int], int] = {}
    for copy in range(factor):
        for i, step in enumerate(steps):
            if step.partition is None and copy > 0:
                continue
            index[(i, copy)] = len(out)
            out.append(Step(f"{step.name}#{copy}" if step.partition else step.name,
                            step.seconds * (factor if step.partition is None else 1), step.assets,
                            f"{step.partition}#{copy}" if step.partition else None))
    for (i, copy), k in index.items():
        out[k].parents = [index[(j, 0 if steps[j].partition is None else copy)] for j in steps[i].parents]
    return out


def longest_remaining(steps: list[Step]) -> list[float]:
    """Per step, the longest path from its start to the end of the graph (its own duration included)."""
    children: list[list[int]] = [[] for _ in steps]
    for i, step in enumerate(steps):
        for j in step.parents:
            children[j].append(i)
    memo: dict[int, float] = {}
    for i in _topological(steps)[::-1]:
        memo[i] = steps[i].seconds + max((memo[c] for c in children[i]), default=0.0)
    return [memo[i] for i in range(len(steps))]


def _topological(steps: list[Step]) -> list[int]:
    order, seen = [], set()

    def visit(i: int) -> None:
        if i in seen:
            return
        seen.add(i)
        for j in steps[i].parents:
            visit(j)
        order.append(i)

    for i in range(len(steps)):
        visit(i)
    return order


def critical_path(steps: list[Step]) -> tuple[float, list[str]]:
    remaining = longest_remaining(steps)
    children: list[list[int]] = [[] for _ in steps]
    for i, step in enumerate(steps):
        for j in step.parents:
            children[j].append(i)
    roots = [i for i, s in enumerate(steps) if not s.parents]
    node = max(roots, key=lambda i: remaining[i])
    path = [steps[node].name]
    while children[node]:
        node = max(children[node], key=lambda i: remaining[i])
        path.append(steps[node].name)
    return max(remaining), path


def schedule(steps: list[Step], workers: int, publish_share: float) -> tuple[float, float]:
    """(makespan, seconds the writer lock was held) of list scheduling, longest remaining path first; each step
    computes, then publishes under the one writer lock (waiting for it on its worker)."""
    priority = longest_remaining(steps)
    waiting = [len(s.parents) for s in steps]
    children: list[list[int]] = [[] for _ in steps]
    for i, step in enumerate(steps):
        for j in step.parents:
            children[j].append(i)
    ready = [(-priority[i], i) for i in range(len(steps)) if waiting[i] == 0]
    heapq.heapify(ready)
    events: list[tuple[float, int, str]] = []  # (time, step, "computed" | "published")
    lock_free_at, held, free, now = 0.0, 0.0, workers, 0.0
    lock_queue: list[int] = []

    def start_ready() -> None:
        nonlocal free
        while free and ready:
            _, i = heapq.heappop(ready)
            free -= 1
            heapq.heappush(events, (now + steps[i].seconds * (1 - publish_share), i, "computed"))

    def start_publish() -> None:
        nonlocal lock_free_at, held
        while lock_queue and lock_free_at <= now:
            i = lock_queue.pop(0)
            lock_free_at = now + steps[i].seconds * publish_share
            held += steps[i].seconds * publish_share
            heapq.heappush(events, (lock_free_at, i, "published"))

    start_ready()
    while events:
        now, i, what = heapq.heappop(events)
        if what == "computed":
            lock_queue.append(i)
        else:
            free += 1
            for c in children[i]:
                waiting[c] -= 1
                if waiting[c] == 0:
                    heapq.heappush(ready, (-priority[c], c))
        start_publish()
        start_ready()
    return now, held


def report(label: str, steps: list[Step], workers: list[int], publish_share: float) -> None:
    total = sum(s.seconds for s in steps)
    length, path = critical_path(steps)
    print(f"\n{label}: {len(steps)} steps, {total:.0f} s of step time, critical path {length:.0f} s: "
          + " -> ".join(path))
    print("| workers | makespan, one writer lock | without the lock | lock held | lock busy | speed-up over 1 |")
    print("|---|---|---|---|---|---|")
    one = schedule(steps, 1, publish_share)[0]
    for n in workers:
        span, held = schedule(steps, n, publish_share)
        free_span = schedule(steps, n, 0.0)[0]
        print(f"| {n} | {span:.0f} s | {free_span:.0f} s | {held:.0f} s | {100 * held / span:.0f} % | "
              f"{one / span:.1f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--publish-share", type=float, required=True,
                        help="share of a step's time spent in its publish transaction (measured by the deploy check)")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8, 16])
    args = parser.parse_args()
    steps = recorded_steps(args.home)
    link(steps)
    report("recorded default graph", steps, args.workers, args.publish_share)
    report("10x catalog", scaled(steps, 10), args.workers, args.publish_share)


if __name__ == "__main__":
    main()
