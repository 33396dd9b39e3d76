"""ML Compass frontier at catalog scale: measures, Pareto tiers and CES fit on up to 20,000 models.

The catalog is SYNTHETIC (benchmarks/catalog.py: low-rank factor scores with a general
factor, 8 benchmark-like columns, about a third of the cells missing at random); no real
model or score is involved. For each size the script times, as `assets/compass_frontier.py`
calls them,
  * `extract_measures` (x_raw -> x, §4.3) with the settings of the case YAMLs (cases/*.yaml:
    n_factors, loading_threshold, max_factors_per_variable; no previous loadings),
  * `pareto_tiers` on the measures (§4.4 Step 1; eps = 0, n_tiers = 3),
  * `fit_ces` on measures + tiers (§4.4 Step 2),
and the previous O(n^2 I)-per-pass peeling (tests/compass/mlcompass/frontier/reference_pareto.py)
on the same measures in a subprocess with a 120 s limit and an address-space cap (half the
available memory, so that it fails with MemoryError rather than crowd the machine). The
reference runs for sizes <= 6,000 (not again after a timeout: "> 120 s") and always for
the largest size. When it finishes, its output is compared with the new one.

    .venv/bin/python benchmarks/bench_catalog_scale.py [--sizes 400,2000,6000,20000] [--quick]

The last line is `catalog scale N x 8: measures X s, tiers Y s, ces Z s, total T s
(reference tiers R s)` for the largest size. Wall times are single runs (the machine is
shared; expect some noise).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from catalog import synthetic_catalog

from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.ces_fit import fit_ces
from compass.mlcompass.measures import extract_measures
from compass.mlcompass.pareto import pareto_tiers

SIZES = (400, 2_000, 6_000, 20_000)
QUICK_SIZES = (400, 2_000)
N_BENCH = 8
EPS, N_TIERS = 0.0, 3
REFERENCE_TIMEOUT_S = 120.0
REFERENCE_MAX_SIZE = 6_000

# Child process: the old peeling on the measures in argv[1]; writes its tiers to argv[2].
REFERENCE_CHILD = """
import json, os, resource, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import pandas as pd
sys.path.insert(0, {root!r})
cap = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from tests.compass.mlcompass.frontier import reference_pareto
measures = pd.read_parquet(sys.argv[1])
t = time.perf_counter()
try:
    out = reference_pareto.pareto_tiers(measures, eps={eps!r}, n_tiers={n_tiers!r})
except MemoryError:
    print(json.dumps({{"status": "oom", "seconds": time.perf_counter() - t}}))
    sys.exit(0)
seconds = time.perf_counter() - t
out.to_parquet(sys.argv[2])
print(json.dumps({{"status": "ok", "seconds": seconds}}))
"""


def case_settings() -> dict:
    """extract_measures keyword arguments shared by the shipped case YAMLs."""
    cases = [CaseStudy.from_yaml(p) for p in sorted((ROOT / "cases").glob("*.yaml"))]
    settings = {(c.n_factors, c.loading_threshold, c.max_factors_per_variable) for c in cases}
    if len(settings) != 1:
        raise SystemExit(f"case YAMLs disagree on measure settings: {sorted(settings)}")
    n_factors, threshold, cap = settings.pop()
    return {"n_factors": n_factors, "loading_threshold": threshold, "max_factors_per_variable": cap}


def available_memory() -> int:
    """MemAvailable from /proc/meminfo in bytes (8 GB if unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 * 2**30


def run_reference(measures: pd.DataFrame, workdir: Path) -> tuple[str, float | None, pd.DataFrame | None]:
    """Old peeling in a subprocess: ("ok", seconds, tiers) | ("timeout" | "oom" | "error", seconds, None)."""
    src, dst = workdir / "measures.parquet", workdir / "reference_tiers.parquet"
    measures.to_parquet(src)
    dst.unlink(missing_ok=True)
    cap = available_memory() // 2
    code = REFERENCE_CHILD.format(root=str(ROOT), eps=EPS, n_tiers=N_TIERS)
    t = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", code, str(src), str(dst), str(cap)], check=False, capture_output=True,
                              text=True, timeout=REFERENCE_TIMEOUT_S, cwd=ROOT)
    except subprocess.TimeoutExpired:  # subprocess.run kills the child
        return "timeout", None, None
    if proc.returncode != 0 or not proc.stdout.strip():
        print(f"reference subprocess failed ({proc.returncode}): {proc.stderr.strip()[-500:]}", file=sys.stderr)
        return "error", time.perf_counter() - t, None
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if result["status"] == "oom":
        return f"oom {cap / 2**30:.0f} GB", result["seconds"], None
    return "ok", result["seconds"], pd.read_parquet(dst)


def describe_reference(status: str, seconds: float | None) -> str:
    if status == "ok":
        return f"{seconds:.2f} s"
    if status in ("timeout", "skipped-after-timeout"):
        return f"> {REFERENCE_TIMEOUT_S:.0f} s"
    if status.startswith("oom"):
        return f"out of memory ({status[4:]} cap) after {seconds:.1f} s"
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", help="comma-separated catalog sizes (default 400,2000,6000,20000)")
    parser.add_argument("--quick", action="store_true", help="sizes 400,2000 only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = QUICK_SIZES if args.quick else SIZES
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    sizes = tuple(sorted(sizes))
    settings = case_settings()
    print(f"SYNTHETIC catalogs (benchmarks/catalog.py), {N_BENCH} benchmarks, ~1/3 cells missing; "
          f"extract_measures{settings}; pareto_tiers(eps={EPS}, n_tiers={N_TIERS}); fit_ces")

    rows, reference_timed_out = [], False
    with tempfile.TemporaryDirectory(prefix="bench_catalog_scale_") as tmp:
        for n in sizes:
            x_raw = synthetic_catalog(n, n_bench=N_BENCH, seed=args.seed)
            t = time.perf_counter()
            measures = extract_measures(x_raw, **settings).measures
            t_measures = time.perf_counter() - t
            t = time.perf_counter()
            tiers = pareto_tiers(measures, eps=EPS, n_tiers=N_TIERS)
            t_tiers = time.perf_counter() - t
            t = time.perf_counter()
            fit_ces(measures, tiers)
            t_ces = time.perf_counter() - t

            identical = ""
            if n != sizes[-1] and n > REFERENCE_MAX_SIZE:
                status, ref_s = "skipped", None
            elif n != sizes[-1] and reference_timed_out:
                status, ref_s = "skipped-after-timeout", None
            else:
                status, ref_s, ref_tiers = run_reference(measures, Path(tmp))
                reference_timed_out = status == "timeout"
                if ref_tiers is not None:
                    identical = "yes" if tiers.reset_index(drop=True).equals(ref_tiers) else "NO"
            rows.append({
                "models": n, "I": measures.shape[1], "layers": int(tiers["peel_layer"].max()),
                "efficient": int(tiers["pareto_efficient"].sum()),
                "tiers_new_s": round(t_tiers, 3), "tiers_reference": describe_reference(status, ref_s),
                "identical": identical, "measures_s": round(t_measures, 3), "ces_s": round(t_ces, 3),
                "total_s": round(t_measures + t_tiers + t_ces, 3),
                "_line": (t_measures, t_tiers, t_ces, describe_reference(status, ref_s)),
            })
            print(f"  {n} models done", file=sys.stderr, flush=True)

    table = pd.DataFrame(rows).drop(columns="_line")
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory (ru_maxrss): benchmark process {own:.0f} MB, reference subprocesses {children:.0f} MB")
    last = rows[-1]
    t_measures, t_tiers, t_ces, reference = last["_line"]
    print(f"catalog scale {last['models']} x {N_BENCH}: measures {t_measures:.2f} s, tiers {t_tiers:.2f} s, "
          f"ces {t_ces:.2f} s, total {t_measures + t_tiers + t_ces:.2f} s (reference tiers {reference})")
    return 0 if all(r["identical"] in ("", "yes") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
