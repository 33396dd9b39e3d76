"""Replay a serial refresh's measured run durations on N workers: what running a tick's runs side by side can win.

    .venv/bin/python scripts/tick_replay.py [DAGSTER_HOME] [--workers 2]

Reads the runs of the instance's run storage (history/runs.db, read-only) in creation order. A serial refresh
creates a tick's runs sorted by partition key (unpartitioned first), so a key not after the previous one starts
a new tick (the first group is the raw sources' run). Each tick is replayed on N workers in that order (each run to the first free worker) and, for
comparison, longest first; a tick ends when its last run does. Prints per tick and in total, with the time the
refresh spent outside runs (ticks, partition syncs), which stays serial. A replay of durations measured under
whatever load the refresh had, not a measurement of a parallel refresh (docs/results/operations.md, issue 33).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
from pathlib import Path


def runs_of(home: Path) -> list[tuple[str | None, float, float, float]]:
    """(partition key, duration, start, end) of every finished run, in creation order."""
    with sqlite3.connect(f"file:{home / 'history' / 'runs.db'}?mode=ro", uri=True) as con:
        rows = con.execute("select run_body, start_time, end_time from runs order by create_timestamp").fetchall()
    out = []
    for body, start, end in rows:
        if start and end:
            out.append((dict(json.loads(body).get("tags") or {}).get("dagster/partition"), end - start, start, end))
    return out


def ticks_of(runs: list[tuple[str | None, float, float, float]]) -> list[list[float]]:
    ticks, previous = [[]], None
    for partition, seconds, _, _ in runs:
        key = (partition is not None, partition or "")
        if previous is not None and key <= previous:
            ticks.append([])
        ticks[-1].append(seconds)
        previous = key
    return ticks


def makespan(durations: list[float], workers: int) -> float:
    """Each run to the first free worker, in the given order."""
    free = [0.0] * workers
    for seconds in durations:
        free[free.index(min(free))] += seconds
    return max(free)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", nargs="?", default=os.environ.get("DAGSTER_HOME", "var/dagster_home"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    runs = runs_of(Path(args.home))
    ticks, n = ticks_of(runs), args.workers
    for i, tick in enumerate(ticks, start=1):
        label = "sources" if i == 1 else f"tick {i - 1}"
        print(f"{label}: {len(tick)} runs, serial {sum(tick):.0f} s, {n} workers {makespan(tick, n):.0f} s "
              f"(longest first {makespan(sorted(tick, reverse=True), n):.0f} s), longest run {max(tick):.0f} s")
    serial = sum(map(sum, ticks))
    ordered, longest = (sum(makespan(sorted(t, reverse=o), n) if o else makespan(t, n) for t in ticks)
                        for o in (False, True))
    outside = runs[-1][3] - runs[0][2] - serial
    print(f"runs: serial {serial:.0f} s, {n} workers {ordered:.0f} s ({serial / ordered:.2f}x), longest first "
          f"{longest:.0f} s ({serial / longest:.2f}x); outside runs {outside:.0f} s; the whole "
          f"{serial + outside:.0f} s -> {ordered + outside:.0f} s ({(serial + outside) / (ordered + outside):.2f}x)")


if __name__ == "__main__":
    main()
