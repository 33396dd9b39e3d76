"""A price-only refresh against a cold run of the default graph, both measured in this invocation (issue 17).

    .venv/bin/python benchmarks/bench_price_refresh.py

In a temporary DAGSTER_HOME and warehouse: a cold `compass run` on the embedded data (the baseline), then a
`compass run --config` whose only change is one model's price (the top model of frontier_api, gemini-3-pro at
google, halved). Prints both wall times and the ratio. Target: the price-only refresh under 10 % of the cold run.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_catalog_refresh import timed_run

TARGET = 0.10
PRICE = "model_id,provider,input_usd_per_mtok,output_usd_per_mtok,source\ngemini-3-pro,google,1.0,6.0,price_cut\n"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "DAGSTER_HOME": str(work / "home"), "COMPASS_DB": str(work / "warehouse.duckdb"),
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        env.pop("COMPASS_CONFIG", None)
        cold = timed_run(env, work)
        print(f"cold run: {cold:.1f} s", flush=True)
        (work / "price.csv").write_text(PRICE)
        (work / "price.yaml").write_text("sources:\n  - {table: model_costs, path: price.csv}\n")
        price = timed_run(env, work, "--config", str(work / "price.yaml"))
        ratio = price / cold
        verdict = "PASS" if ratio < TARGET else "FAIL"
        print(f"{verdict}: price-only refresh {price:.1f} s = {100 * ratio:.0f} % of the cold run "
              f"(target < {100 * TARGET:.0f} %)")
        return 0 if ratio < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
