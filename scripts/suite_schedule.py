"""How the suite's test files spread over pytest-xdist's workers (`make test`: --dist loadfile), from a timeline, and a
replay of the measured test durations in another file order.

    COMPASS_SUITE_TIMELINE=/tmp/timeline.tsv make test
    .venv/bin/python scripts/suite_schedule.py /tmp/timeline.tsv [--workers 2] [--top 15]

The timeline (tests/conftest.py) has one line per test: worker, test id, start, end. Printed: each worker's busy time
and when it finished, the longest files, and replays of xdist's loadfile scheduler (a worker is handed the next file
of the queue whenever at most two of its tests are still pending: xdist.scheduler.loadscope) with the measured
per-test durations, in the order tests/conftest.py gives now (SLOW_FIRST, then collection order) and longest file first.
A replay ignores what the order changes besides the queue: which module builds a shared `built_once` baseline (and
which waits for it) and how much two heavy modules slow each other on two cores.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.conftest import SLOW_FIRST  # noqa: E402


def read_timeline(path: Path) -> list[tuple[str, str, float, float]]:
    """(worker, test id, start, end) per test, by start."""
    rows = [line.rstrip("\n").split("\t") for line in path.read_text().splitlines() if line.strip()]
    return sorted(((w, test, float(a), float(b)) for w, test, a, b in rows), key=lambda r: r[2])


def replay(files: list[tuple[str, list[float]]], workers: int) -> list[float]:
    """Finish time of each worker when xdist's loadfile scheduler hands out `files` ((file, its tests' durations), in
    queue order): one file each to start, then (at the start and after each of its tests) the next one to a worker
    left with at most two pending tests."""
    queue = collections.deque(files)
    pending: list[collections.deque[float]] = [collections.deque() for _ in range(workers)]
    clock = [0.0] * workers

    def top_up(w: int) -> None:  # at most one file per event, as xdist's `_reschedule`
        if queue and len(pending[w]) <= 2:
            pending[w].extend(queue.popleft()[1])

    for w in range(workers):
        if queue:
            pending[w].extend(queue.popleft()[1])
    for w in range(workers):
        top_up(w)
    while any(pending):
        w = min((w for w in range(workers) if pending[w]), key=lambda w: clock[w] + pending[w][0])
        clock[w] += pending[w].popleft()
        top_up(w)
    return clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("timeline", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    rows = read_timeline(args.timeline)
    t0 = rows[0][2]
    print(f"{len(rows)} tests, {max(r[3] for r in rows) - t0:.0f} s from the first test's start to the last one's end")
    for worker in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == worker]
        busy = sum(end - start for _, _, start, end in mine)
        print(f"  {worker}: busy {busy:.0f} s, done at {max(r[3] for r in mine) - t0:.0f} s")
    by_file: dict[str, list[float]] = collections.defaultdict(list)
    span: dict[str, tuple[str, float, float]] = {}
    for worker, test, start, end in rows:
        name = test.partition("::")[0]
        by_file[name].append(end - start)
        first = span.get(name, (worker, start, end))
        span[name] = (worker, min(first[1], start), max(first[2], end))
    print("\nlongest files (sum of their tests; worker, start-end from the first start):")
    for name in sorted(by_file, key=lambda f: -sum(by_file[f]))[:args.top]:
        worker, start, end = span[name]
        print(f"  {sum(by_file[name]):6.0f} s  {len(by_file[name]):3d} tests  {worker} "
              f"{start - t0:5.0f}-{end - t0:5.0f} s  {name}")
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    collected = sorted(by_file, key=lambda f: (rank.get(f, len(rank)), f))  # approximates pytest's collection order
    for label, order in (("tests/conftest.py order", collected),
                         ("longest file first", sorted(by_file, key=lambda f: -sum(by_file[f])))):
        ends = replay([(f, by_file[f]) for f in order], args.workers)
        print(f"\nreplay, {label}: workers done at " + ", ".join(f"{e:.0f} s" for e in ends)
              + f" (wall {max(ends):.0f} s, the lower bound {sum(map(sum, by_file.values())) / args.workers:.0f} s)")


if __name__ == "__main__":
    main()
