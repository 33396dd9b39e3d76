"""Benchmark: per-query rows at scale through the pipeline's own asset bodies (issue 45).

Synthetic canonical `query_records` (say so: not real traffic): one dataset `synthetic`, 10 models, N / 10
queries answered once by every model (generation 0), a 70/30 train/test split by query, `correct` drawn with a
per-model accuracy, a log-probability `confidence` that tracks it, a per-call `cost_usd`, a category. The rows are written by
DuckDB SQL straight to a Parquet file (the generator never holds them in Python), with raw.models naming the 10
models in a fresh warehouse under `--work`.

Stages, in pipeline order, each in a fresh interpreter (`subprocess`) that reads only the warehouse, so its peak
memory (VmHWM, the high-water mark of its own address space), wall time and CPU time (user + sys, DuckDB's threads
included: the measure that holds while other work shares the machine) are its own:

  ingest    the raw/query_records asset body: read, validate, coerce, resolve model names, duplicate check,
            publish raw.query_records with history
  extract   the datasets/records[synthetic] asset body: publish datasets.query_records
  oracle    `readers.oracle_dataset` (the records and prices the oracle assets share: built by the first, saved in
            `resources.prepared_store`; oracle_fit and oracle_estimates then load it, as sibling assets do)
  oracle_fit  the same, then the bodies of oracle/single_models, oracle/curve and oracle/posthoc (their tables)
  oracle_estimates  (only when named in --stages) the same, then oracle/estimates' `analysis_tables`: every
            estimator, the frontier sweeps, the bootstrap intervals at the pipeline's default n_boot
            (`settings.oracle_n_boot`)
  cascade   `readers.cascade_records` (the records the cascade assets share as (query x model) matrices built in
            DuckDB, `resources.cascade_matrix`; built once as the oracle's; cascade_fit loads them)
  cascade_fit  the same, then cascade/calibration's table (logistic calibrators on a sample, eqs. 2.16-2.17) and
            cascade/marginals' EM fit (eq. 2.7) on the calibrated train rows and its goodness of fit (eq. 2.20), each on
            its stated sample (`marginals.MARGINAL_SAMPLE`, `GOF_SAMPLE`)
  reject    the raw asset on the same records with one bad cell (`correct` = 7 at 60 % of the file): its error
            line, whether raw.query_records stayed as it was, time and peak memory

`--appends K` then measures storage: K daily deliveries of 1 % new rows (a second input file growing by
1 % of N each day), each one a re-ingest and re-extract; the warehouse file's size after the first refresh and
after the K-th append is printed (DuckDB file after a checkpoint).

Targets (issue 45, 2 cores / 24 GB): 10 M rows end to end < 300 s and < 3 GB peak in every stage. The exit status
is 1 when a target is missed at 10 M rows or more; smaller runs only report. Behind a flag: `make bench` runs it
only with COMPASS_BENCH_SCALE=1 (it takes minutes); `--rows` runs it directly.

Run: .venv/bin/python benchmarks/bench_query_scale.py --rows 1000000 [--rows 10000000] [--appends 10] [--work DIR]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATASET = "synthetic"
N_MODELS = 10
STAGES = ("ingest", "extract", "oracle", "oracle_fit", "cascade", "cascade_fit")
OPTIONAL = ("oracle_estimates",)  # run only when named in --stages
BAD_ROW = 0.6  # where in the file `reject`'s one bad cell lies (a fraction of the rows)
TIME_TARGET_S = 300.0
MEMORY_TARGET_GB = 3.0
TARGET_FROM_ROWS = 10_000_000
MEMORY_CAP_GB = 8.0  # a stage passing this resident size is stopped and reported (`in_child`)


def generate(work: Path, rows: int, appends: int) -> None:
    """The synthetic records (records.parquet) and their 1 % daily deliveries (day_k.parquet), raw.models."""
    import duckdb

    work.mkdir(parents=True, exist_ok=True)
    n_queries = rows // N_MODELS
    con = duckdb.connect()
    con.execute("set threads to 2")
    con.execute(f"""
        copy (
          with q as (select range as qi, hash(range) % 1000 as h from range({n_queries})),
               m as (select range as mi from range({N_MODELS})),
               r as (select qi, h, mi, random() as u, random() as v from q, m)
          select '{DATASET}' as dataset, case when h < 700 then 'train' else 'test' end as split,
                 'q' || qi as query_id, 'synth-model-' || mi as model_id, 0 as generation,
                 (u < 0.45 + 0.05 * mi)::int::double as correct, null::double as score,
                 ln(0.01 + 0.99 * ((u < 0.45 + 0.05 * mi)::int * 0.3 + 0.7 * v)) as confidence,
                 1e-5 * (mi + 1) * (1 + v) as cost_usd, 100.0 + 50 * v as latency_ms,
                 200.0 as tokens_in, 100.0 + round(100 * v) as tokens_out,
                 'cat' || (h % 20) as category, 'benchmark' as source, date '2026-01-01' as as_of
          from r
        ) to '{work / "records.parquet"}' (format parquet)""")
    for day in range(1, appends + 1):  # 1 % new queries per day, after the existing ones
        start, n_new = n_queries + (day - 1) * n_queries // 100, n_queries // 100
        con.execute(f"""
            copy (
              select '{DATASET}' as dataset, 'train' as split, 'q' || qi as query_id,
                     'synth-model-' || mi as model_id, 0 as generation, (random() < 0.5)::int::double as correct,
                     null::double as score, ln(0.01 + 0.99 * random()) as confidence, 1e-5 * (mi + 1) as cost_usd,
                     100.0 as latency_ms, 200.0 as tokens_in, 100.0 as tokens_out, 'cat0' as category,
                     'benchmark' as source, date '2026-01-{1 + day:02d}' as as_of
              from range({start}, {start + n_new}) t(qi), range({N_MODELS}) m(mi)
            ) to '{work / f"day_{day}.parquet"}' (format parquet)""")
    con.close()
    wh = duckdb.connect(str(work / "warehouse.duckdb"))
    wh.execute("create schema raw")
    wh.execute(f"create table raw.models as select 'synth-model-' || range as model_id from range({N_MODELS})")
    wh.execute("create table raw.model_aliases (alias varchar, model_id varchar)")
    wh.close()


def _context():
    return SimpleNamespace(run=SimpleNamespace(run_id="bench"), log=logging.getLogger("bench"), partition_key=DATASET)


class _Sources:
    """The SourcesResource surface the raw asset uses: the benchmark's files, no config."""

    def __init__(self, files):
        self._files = files

    def files(self, table=None):
        return [f for f in self._files if table is None or f.table == table]

    def input_digest(self, table):
        return "bench"


def run_stage(stage: str, work: Path, days: int) -> dict:
    """One stage in this (fresh) process (imports not timed); returns its wall and CPU time and this process' peak
    RSS."""
    os.environ["COMPASS_DB"] = str(work / "warehouse.duckdb")
    from assets.datasets import dataset_records
    from assets.sources import raw_assets
    from compass.ingest.load import SourceFile
    from resources import readers
    from resources.warehouse import Warehouse, WarehouseResource

    wh, wh_resource = Warehouse(work / "warehouse.duckdb"), WarehouseResource(path=str(work / "warehouse.duckdb"))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
    if stage == "ingest":
        files = [SourceFile("query_records", work / "records.parquet")]
        files += [SourceFile("query_records", work / f"day_{d}.parquet") for d in range(1, days + 1)]
        asset = next(a for a in raw_assets if a.key.path == ["raw", "query_records"])
        asset.op.compute_fn.decorated_fn(_context(), wh_resource, _Sources(files))
    elif stage == "extract":
        dataset_records.op.compute_fn.decorated_fn(_context(), wh_resource)
    elif stage == "oracle":
        readers.oracle_dataset(wh, DATASET)
    elif stage == "oracle_fit":
        _oracle_fit(readers.oracle_dataset(wh, DATASET))
    elif stage == "oracle_estimates":
        from compass.oracle.prepare import analysis_tables
        from resources import settings
        analysis_tables(readers.oracle_dataset(wh, DATASET), n_boot=settings.oracle_n_boot())
    elif stage == "cascade":
        readers.cascade_records(wh, DATASET)
    elif stage == "cascade_fit":
        _cascade_fit(readers.cascade_records(wh, DATASET))
    elif stage == "reject":
        extra = _reject(wh, wh_resource, work)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"stage": stage, "seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime - cpu0, "peak_gb": _peak_gb(),
            **(extra if stage == "reject" else {})}


def _oracle_fit(prep) -> None:
    """What oracle/single_models, oracle/curve and oracle/posthoc compute from the prepared dataset."""
    from compass.oracle import prepare as op
    from compass.oracle.naive import naive_curve
    from compass.oracle.posthoc import posthoc_curve

    op.single_models_table(prep)
    op.per_set_table(prep, naive_curve)
    op.per_set_table(prep, posthoc_curve)


def _cascade_fit(records) -> None:
    """What cascade/calibration computes, then cascade/marginals' fit and goodness of fit (the light study's
    bootstrap draws, on the test split)."""
    from compass.cascades import study as cs
    from compass.cascades.marginals import fit_marginals, marginal_gof_table

    cs.calibration_table(records, DATASET)
    cal, _ = cs.calibrated_records(records, DATASET)
    marginal_gof_table(cal, fit_marginals(cal), n_boot=cs.LIGHT.gof_boot, split="test")


def _reject(wh, wh_resource, work: Path) -> dict:
    """The raw asset on bad.parquet (the records with one bad cell): the error line, and whether raw.query_records
    is as it was."""
    from assets.sources import raw_assets
    from compass.ingest.errors import IngestError
    from compass.ingest.load import SourceFile

    before = wh.data_versions("raw.query_records")
    asset = next(a for a in raw_assets if a.key.path == ["raw", "query_records"])
    try:
        asset.op.compute_fn.decorated_fn(_context(), wh_resource, _Sources([SourceFile("query_records",
                                                                                        work / "bad.parquet")]))
        message = "accepted"
    except IngestError as exc:
        message = str(exc).replace(str(work) + "/", "")
    return {"message": message, "unchanged": wh.data_versions("raw.query_records") == before}


def write_bad_file(work: Path, rows: int) -> int:
    """bad.parquet: records.parquet with `correct` = 7 in one row (1-based row number returned)."""
    import duckdb

    row = int(rows * BAD_ROW)
    with duckdb.connect() as con:
        con.execute(f"copy (select * exclude (file_row_number) replace (case when file_row_number = {row - 1} then 7.0 "
                    f"else correct end as correct) from read_parquet('{work / 'records.parquet'}', "
                    f"file_row_number = true) order by file_row_number) to '{work / 'bad.parquet'}' (format parquet)")
    return row


def _peak_gb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024**2
    raise RuntimeError("no VmHWM in /proc/self/status")


def in_child(stage: str, work: Path, days: int = 0) -> dict:
    """`stage` in a fresh interpreter; one passing MEMORY_CAP_GB of resident memory is stopped (the machine is shared)
    and reported as such."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen([sys.executable, __file__, "--stage", stage, "--work", str(work), "--days", str(days)],
                                 stdout=out, stderr=err, text=True)
        capped = False
        while child.poll() is None:
            capped = _rss_gb(child.pid) > MEMORY_CAP_GB
            if capped:
                child.kill()
                child.wait()
            time.sleep(0.2)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if capped:
        return {"stage": stage, "seconds": time.perf_counter() - start, "cpu": float("nan"), "peak_gb": float("nan"),
                "error": f"stopped at {MEMORY_CAP_GB:g} GB resident"}
    if child.returncode != 0:
        return {"stage": stage, "seconds": float("nan"), "cpu": float("nan"), "peak_gb": float("nan"),
                "error": (stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(stdout.strip().splitlines()[-1])


def _rss_gb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # ended
        return 0.0
    return next((int(line.split()[1]) / 1024**2 for line in status.splitlines() if line.startswith("VmRSS:")), 0.0)


def _size_mb(path: Path) -> float:
    return path.stat().st_size / 1024**2


def bench(rows: int, appends: int, work: Path, stages: tuple[str, ...] = STAGES) -> bool:
    """All stages at `rows`; True when the targets hold (or do not apply)."""
    if work.exists():
        shutil.rmtree(work)
    t0 = time.perf_counter()
    generate(work, rows, appends)
    parquet_mb = _size_mb(work / "records.parquet")
    print(f"\n{rows:,} synthetic rows ({parquet_mb:,.0f} MB Parquet) generated in {time.perf_counter() - t0:.0f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| stage | wall s | CPU s | peak RSS GB |\n|---|---|---|---|")
    results = []
    for stage in stages:
        r = in_child(stage, work)
        results.append(r)
        print(f"| {stage} | {r['seconds']:.1f} | {r['cpu']:.1f} | {r['peak_gb']:.2f} |" + (f" {r['error']}" if "error" in r else ""),
              flush=True)
        if "error" in r:
            break
    total = sum(r["seconds"] for r in results)
    cpu = sum(r["cpu"] for r in results)
    peak = max(r["peak_gb"] for r in results)
    size = _size_mb(work / "warehouse.duckdb")
    print(f"| **end to end** | **{total:.1f}** | **{cpu:.1f}** | **{peak:.2f}** |")
    bad_row = write_bad_file(work, rows)
    r = in_child("reject", work)
    print(f"one bad cell (row {bad_row:,}): {r.get('message', r.get('error'))}; raw.query_records unchanged: "
          f"{r.get('unchanged')}; {r['seconds']:.1f} s wall, {r['cpu']:.1f} s CPU, {r['peak_gb']:.2f} GB peak")
    print(f"warehouse after one refresh: {size:,.0f} MB ({size / parquet_mb:.1f}x the input Parquet); "
          f"load average {os.getloadavg()[0]:.1f}")
    for day in range(1, appends + 1):
        for stage in ("ingest", "extract"):
            r = in_child(stage, work, day)
            if "error" in r:
                print(f"day {day} {stage}: {r['error']}")
                return False
        size_day = _size_mb(work / "warehouse.duckdb")
        print(f"after day {day} (+1 % rows): warehouse {size_day:,.0f} MB ({size_day / size:.2f}x the first refresh)",
              flush=True)
    ok = all("error" not in r for r in results) and total < TIME_TARGET_S and peak < MEMORY_TARGET_GB
    return ok or rows < TARGET_FROM_ROWS or stages != STAGES  # a partial run does not judge the target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, action="append", help="rows per run (repeatable)")
    parser.add_argument("--appends", type=int, default=0, help="daily 1 %% appends to measure storage")
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: a temporary one)")
    parser.add_argument("--stages", default=",".join(STAGES), help="comma-separated stages, in order (default: all)")
    parser.add_argument("--stage", choices=(*STAGES, *OPTIONAL, "reject"), help=argparse.SUPPRESS)
    parser.add_argument("--days", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        print(json.dumps(run_stage(args.stage, args.work, args.days)))
        return 0
    if not args.rows and os.environ.get("COMPASS_BENCH_SCALE") != "1":
        print("bench_query_scale: skipped (takes minutes); run with COMPASS_BENCH_SCALE=1 or --rows N")
        return 0
    base = args.work or Path(tempfile.mkdtemp(prefix="compass-scale-"))
    ok = True
    for rows in args.rows or [1_000_000, 10_000_000]:
        ok &= bench(rows, args.appends, base / f"rows_{rows}", tuple(args.stages.split(",")))
    if args.work is None:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
