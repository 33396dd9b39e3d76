"""What the stage costs the warehouse host and a remote step (issue 44 item 2; deploy/README.md, "Steps without the
warehouse file (built)"), on a refreshed warehouse (e.g. a compass_small refresh):

* a publish in place with and without COMPASS_PUBLISH_FROM (the export of the changed table under the lock),
  alternated, REPS times each;
* the first read of a step in stage mode (views over the snapshot) against the same read of the warehouse file.

    python scripts/deploy_stage_timing.py <folder holding warehouse.duckdb>

Prints medians in milliseconds and the load average (a shared machine: ratios measured in one run)."""

from __future__ import annotations

import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from resources.publish import publish_many
from resources.stage import Stage, StagedWarehouse
from resources.warehouse import Warehouse

REPS = 7
TABLE = "compass.case_benchmarks"
CONTEXT = SimpleNamespace(run=SimpleNamespace(run_id="timing"), log=logging.getLogger("timing"))


def _ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main(folder: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="stage-timing-"))
    shutil.copy(folder / "warehouse.duckdb", work / "warehouse.duckdb")
    stage = work / "stage"
    stage.mkdir()
    os.environ["COMPASS_DB"] = str(work / "warehouse.duckdb")  # the only file a stage publishes to and exports from
    wh = Warehouse(work / "warehouse.duckdb")
    rows = wh.read(TABLE).drop(columns=["data_version", "run_id", "refreshed_at"])
    with wh.connect() as con:
        tables = [t for (t,) in con.execute("select table_schema || '.' || table_name from information_schema.tables "
                                            "where table_catalog = 'warehouse'").fetchall()]
        export_all = _ms(lambda: Stage(str(stage)).export(con, tables))
    timings: dict[str, list[float]] = {"in place": [], "in place + export": []}
    for i in range(REPS):
        for label in timings:
            if label.endswith("export"):
                os.environ["COMPASS_PUBLISH_FROM"] = str(stage)
            else:
                os.environ.pop("COMPASS_PUBLISH_FROM", None)
            changed = rows.assign(rep=f"{label}{i}")  # a new data version each time: a real write
            timings[label].append(_ms(lambda: publish_many(CONTEXT, wh, {TABLE: changed}, history=False)))
    os.environ.pop("COMPASS_PUBLISH_FROM", None)
    reads = {"warehouse file": [], "stage mode": []}
    for _ in range(REPS):
        reads["warehouse file"].append(_ms(lambda: Warehouse(work / "warehouse.duckdb").read("raw.benchmark_scores")))
        reads["stage mode"].append(_ms(lambda: StagedWarehouse(str(stage)).read("raw.benchmark_scores")))
    print(f"{len(tables)} tables; export of all of them once: {export_all:.0f} ms; load average "
          + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    for label, values in {**timings, **reads}.items():
        print(f"{label}: median {statistics.median(values):.0f} ms over {REPS}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
