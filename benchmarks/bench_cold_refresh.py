"""The cold refresh of the default graph, serial and parallel in the same invocation, then a price-only refresh
(issues 17 and 33).

    .venv/bin/python benchmarks/bench_cold_refresh.py [--jobs N] [--config F]

Each in a fresh temporary DAGSTER_HOME and warehouse, on the embedded data (or `--config F` with the cases,
scenarios and settings of the environment, without step 3: a quick check of the benchmark on a small fixture):
1. `compass run --jobs 1`: the serial refresh (the baseline: what `compass run` did before issue 33, each run of
   a tick after the other in one process);
2. `compass run --jobs N` (default: one worker per core): a tick's runs side by side (pipelines/run_pool.py);
3. on the home of 2, a `compass run --config` whose only change is one model's price (the top model of
   frontier_api, gemini-3-pro at google, halved); PRICE_RUNS times, each on a fresh copy of that home, and the
   median counts (one sample moved by seconds with the machine's speed).

For each: wall time, and CPU time = user + system of the whole process tree (`compass` and every process under
it). This process is made a child subreaper (Linux PR_SET_CHILD_SUBREAPER), so a descendant orphaned by its
parent is re-parented here, reaped here and counted in getrusage(RUSAGE_CHILDREN), like the ones reaped by their
own parents. CPU / wall is how many cores a run kept busy on average; the load average (1 min) before and after
each run says how much of the machine others took.

Targets (issue 33): CPU / wall >= 1.6 for the parallel run on 2 cores; the cold pipeline <= 240 s on a quiet 2-core
machine (wall time is only meaningful on a quiet one); the price-only refresh <= 10 % of the parallel cold run.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from pipelines.run_pool import default_jobs  # noqa: E402

COMPASS = Path(sys.executable).with_name("compass")
PRICE = "model_id,provider,input_usd_per_mtok,output_usd_per_mtok,source\ngemini-3-pro,google,1.0,6.0,price_cut\n"
CPU_PER_WALL, COLD_S, PRICE_SHARE = 1.6, 240.0, 0.10
PRICE_RUNS = 3
PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Timing:
    wall: float
    cpu: float  # user + system of the process tree
    load: tuple[float, float]  # 1-min load average before, after

    def __str__(self) -> str:
        return (f"{self.wall:.1f} s wall, {self.cpu:.1f} s CPU, CPU/wall {self.cpu / self.wall:.2f} "
                f"(load {self.load[0]:.1f}->{self.load[1]:.1f})")


def become_subreaper() -> None:
    """Orphaned descendants are re-parented to this process instead of init, so their CPU time is counted here."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())} (Linux only)")


def _reap_all() -> None:
    """Wait for every remaining descendant (orphans re-parented here), adding its usage to RUSAGE_CHILDREN."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(env: dict[str, str], cwd: Path, *args: str) -> Timing:
    """`compass [args] run`, timed; exits with its output when it fails."""
    load, cpu, start = os.getloadavg()[0], _cpu_of_children(), time.monotonic()
    done = subprocess.run([str(COMPASS), *args], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    _reap_all()
    if done.returncode != 0:
        sys.exit(f"compass {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return Timing(wall, _cpu_of_children() - cpu, (load, os.getloadavg()[0]))


def fresh_env(work: Path, config: str | None) -> dict[str, str]:
    env = {**os.environ, "DAGSTER_HOME": str(work / "home"), "COMPASS_DB": str(work / "warehouse.duckdb"),
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    env.pop("COMPASS_CONFIG", None)
    if config:
        env["COMPASS_CONFIG"] = str(Path(config).resolve())
    return env


def _replace(source: Path, target: Path) -> None:
    if target.is_dir():
        shutil.rmtree(target)
    target.unlink(missing_ok=True)
    (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)


def price_only_runs(env: dict[str, str], work: Path) -> list[Timing]:
    """Step 3: the price cut refreshed PRICE_RUNS times, each from a copy of the cold run's home and warehouse."""
    (work / "price.csv").write_text(PRICE)
    (work / "price.yaml").write_text("sources:\n  - {table: model_costs, path: price.csv}\n")
    state = {path: path.with_name(path.name + ".cold") for path in (work / "home", work / "warehouse.duckdb")}
    for path, cold in state.items():
        _replace(path, cold)
    runs = []
    for _ in range(PRICE_RUNS):
        for path, cold in state.items():
            _replace(cold, path)
        runs.append(timed_run(env, work, "run", "--config", str(work / "price.yaml")))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=default_jobs(), help="jobs of the parallel run (default: cores)")
    parser.add_argument("--config", help="source config instead of the embedded data (a quick check)")
    args = parser.parse_args()
    become_subreaper()
    with tempfile.TemporaryDirectory() as serial_dir, tempfile.TemporaryDirectory() as parallel_dir:
        serial = timed_run(fresh_env(Path(serial_dir), args.config), Path(serial_dir), "run", "--jobs", "1")
        print(f"cold refresh, serial (--jobs 1): {serial}", flush=True)
        work = Path(parallel_dir)
        env = fresh_env(work, args.config)
        parallel = timed_run(env, work, "run", "--jobs", str(args.jobs))
        print(f"cold refresh, parallel (--jobs {args.jobs}): {parallel}", flush=True)
        prices = [] if args.config else price_only_runs(env, work)
    ratio = parallel.cpu / parallel.wall
    print(f"cold refresh: serial {serial.wall:.1f} s wall / {serial.cpu:.1f} s CPU (CPU/wall "
          f"{serial.cpu / serial.wall:.2f}), parallel --jobs {args.jobs} {parallel.wall:.1f} s wall / {parallel.cpu:.1f} s "
          f"CPU (CPU/wall {ratio:.2f}), {serial.wall / parallel.wall:.2f}x faster; load {serial.load[0]:.1f}-"
          f"{parallel.load[1]:.1f} on {os.cpu_count()} cores")
    checks = [(f"parallel CPU/wall {ratio:.2f} (target >= {CPU_PER_WALL})", ratio >= CPU_PER_WALL),
              (f"parallel cold run {parallel.wall:.0f} s (target <= {COLD_S:.0f} s on a quiet machine)",
               parallel.wall <= COLD_S)]
    if prices:
        for i, price in enumerate(prices, 1):
            print(f"price-only refresh {i} of {len(prices)}: {price}")
        median = statistics.median(price.wall for price in prices)
        share = median / parallel.wall
        checks.append((f"price-only refresh {median:.1f} s (median of {len(prices)}) = {100 * share:.1f} % of the "
                       f"parallel cold run (target <= {100 * PRICE_SHARE:.0f} %)", share <= PRICE_SHARE))
    for text, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}: {text}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
