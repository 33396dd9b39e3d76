"""CPU seconds of a running deploy stack, by service, and the machine's busy cores (docs/results/operations.md,
"The ratio on the default graph"): every 2 s, each process's CPU (its own and its reaped children's, /proc/<pid>/stat)
summed by the process group `var/deploy/stack.json` names it under (the refresh driver by its command line; every other
process on the machine is "other"), the machine's busy time (/proc/stat) and the Postgres connections to `dagster`.

    python scripts/deploy_cpu_sample.py record var/deploy/stack.json samples.jsonl   # beside `pipelines.stack ratio`
    python scripts/deploy_cpu_sample.py summary samples.jsonl                         # cores by service, per refresh

A process that exits takes its CPU out of the sums unless a process of its group reaped it; a service's cores are
differences between samples in which that service was alive (the driver runs once per refresh).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
EVERY_S = 2.0


def _by_service(groups: dict[int, str]) -> dict[str, float]:
    by: dict[str, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            name = groups.get(int(fields[2]))
            if name is None and b"\0-m\0pipelines.queue_refresh\0" in (stat.parent / "cmdline").read_bytes():
                name = "driver"
        except (OSError, IndexError):
            continue
        by[name or "other"] = by.get(name or "other", 0.0) + sum(int(f) for f in fields[11:15]) / TICK
    return by


def _connections(port: int) -> int | None:
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    try:
        done = subprocess.run([psql[-1], "-h", "127.0.0.1", "-p", str(port), "-U", "dagster", "-d", "postgres", "-tAc",
                               "select count(*) from pg_stat_activity where datname = 'dagster'"],
                              capture_output=True, text=True, timeout=5)
        return int(done.stdout.strip())
    except (IndexError, OSError, ValueError, subprocess.TimeoutExpired):
        return None


def record(state: Path, out: Path) -> None:
    with out.open("w") as sink:
        while True:
            try:
                stack = json.loads(state.read_text())
            except (OSError, ValueError):
                stack = {"pids": {}, "ports": {}}
            cpu = list(map(int, Path("/proc/stat").read_text().splitlines()[0].split()[1:]))
            sink.write(json.dumps({"t": time.time(), "total": sum(cpu) / TICK, "idle": (cpu[3] + cpu[4]) / TICK,
                                   "by": _by_service({pid: name for name, pid in stack["pids"].items()}),
                                   "pg": _connections(stack["ports"]["postgres"]) if "postgres" in stack["ports"]
                                   else None}) + "\n")
            sink.flush()
            time.sleep(EVERY_S)


def summary(samples: Path) -> None:
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    refreshing = [r for r in rows if {"driver", "worker-duckdb"} <= set(r["by"])]
    for label, phase in (("1 worker", [r for r in refreshing if "worker-duckdb-2" not in r["by"]]),
                         ("2 workers", [r for r in refreshing if "worker-duckdb-2" in r["by"]])):
        if len(phase) < 2:
            continue
        first, last = phase[0], phase[-1]
        span = last["t"] - first["t"]
        busy = (last["total"] - first["total"]) - (last["idle"] - first["idle"])
        cores = {name: (last["by"].get(name, 0.0) - first["by"].get(name, 0.0)) / span
                 for name in sorted(set(first["by"]) & set(last["by"]))}
        print(f"{label}: {span:.0f} s, machine {busy / span:.2f} cores busy; " +
              ", ".join(f"{name} {value:.2f}" for name, value in sorted(cores.items(), key=lambda kv: -kv[1])) +
              f"; Postgres connections at most {max((r.get('pg') or 0) for r in phase)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"] and len(sys.argv) == 4:
        record(Path(sys.argv[2]), Path(sys.argv[3]))
    elif sys.argv[1:2] == ["summary"] and len(sys.argv) == 3:
        summary(Path(sys.argv[2]))
    else:
        print("usage: python scripts/deploy_cpu_sample.py record STACK_JSON OUT.jsonl | summary OUT.jsonl",
              file=sys.stderr)
        sys.exit(2)
