"""A public-catalog-sized refresh: a SYNTHETIC catalog of N models (default 6,000) x 8 benchmarks, with given
weights, added to the default graph through `compass run --config`, end to end.

    .venv/bin/python benchmarks/bench_catalog_refresh.py [--models 6000]

Works on a private copy of the materialized default (var/warehouse.duckdb and var/dagster_home; a cold
`compass run` first when there is none). Times, in the same run: a refresh with no change (the baseline), then
the refresh that adds the catalog and its case study. Checks that the catalog's leaderboard holds every model
that has the case's benchmarks. Target (issue: catalog scale): under 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from catalog import synthetic_catalog  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMPASS = Path(sys.executable).with_name("compass")
CASE = """# SYNTHETIC catalog case (benchmarks/bench_catalog_refresh.py): given weights, no outcome data.
case_id: synthetic_catalog
description: SYNTHETIC catalog of {n} models x 8 benchmarks (benchmarks/catalog.py), given weights
benchmarks: {{include: ["synthetic_*"], min_models_per_benchmark: 10, min_benchmarks_per_model: 3}}
cost: {{table: model_costs, column: blended_usd_per_mtok, provider_aggregate: min, scaling: max}}
utility: {{source: weights, weights: {{C1: 0.5, C2: 0.3, C3: 0.2}}}}
lambdas: {{zero: 0.0, low: 0.1, high: 1.0}}
"""


def write_catalog(folder: Path, n: int) -> int:
    """Canonical CSVs of the SYNTHETIC catalog and a config adding them to the defaults; returns the number of
    models with at least 3 benchmarks (all of them, by construction of the catalog)."""
    wide = synthetic_catalog(n, seed=7)
    long = wide.rename_axis("model_id").reset_index().melt("model_id", var_name="benchmark", value_name="score")
    long = long.dropna(subset=["score"])
    long["score_scale"] = ["index" if b.startswith("synthetic_arena") else "percent" for b in long["benchmark"]]
    long.assign(source="synthetic", as_of="2026-11-23").to_csv(folder / "benchmark_scores.csv", index=False)
    models = wide.index.to_series(name="model_id").reset_index(drop=True)
    models.to_frame().assign(display_name=models, organization="synthetic", source="synthetic",
                             as_of="2026-11-23").to_csv(folder / "models.csv", index=False)
    price = 10 ** (-1 + 2 * (wide.rank(pct=True).mean(axis=1).to_numpy()))  # pricier for stronger models
    models.to_frame().assign(provider="synthetic", input_usd_per_mtok=price, output_usd_per_mtok=4 * price,
                             source="synthetic", as_of="2026-11-23").to_csv(folder / "model_costs.csv", index=False)
    (folder / "config.yaml").write_text("replace_defaults: false\nsources:\n" + "".join(
        f"  - {{table: {t}, path: {t}.csv}}\n" for t in ("models", "benchmark_scores", "model_costs")))
    (folder / "cases").mkdir()
    (folder / "cases" / "synthetic_catalog.yaml").write_text(CASE.format(n=n))
    return int((wide.notna().sum(axis=1) >= 3).sum())


def timed_run(env: dict[str, str], cwd: Path, *args: str) -> float:
    start = time.monotonic()
    done = subprocess.run([str(COMPASS), *args, "run"], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"compass run failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=6000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "DAGSTER_HOME": str(work / "home"), "COMPASS_DB": str(work / "warehouse.duckdb"),
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        env.pop("COMPASS_CONFIG", None)
        if (ROOT / "var" / "warehouse.duckdb").exists() and (ROOT / "var" / "dagster_home").is_dir():
            shutil.copy(ROOT / "var" / "warehouse.duckdb", work / "warehouse.duckdb")
            shutil.copytree(ROOT / "var" / "dagster_home", work / "home")
            print("default graph: copied from var/")
        else:
            print(f"default graph: cold run {timed_run(env, work):.0f} s")
        baseline = timed_run(env, work)
        print(f"refresh with no change: {baseline:.1f} s")
        data = work / "catalog"
        data.mkdir()
        eligible = write_catalog(data, args.models)
        env["COMPASS_CASES"] = os.pathsep.join([str(ROOT / "cases"), str(data / "cases")])
        seconds = timed_run(env, work, "--config", str(data / "config.yaml"))
        with duckdb.connect(str(work / "warehouse.duckdb"), read_only=True) as con:
            rows = con.execute("select count(*) from compass.leaderboards where case_id = 'synthetic_catalog' "
                               "and scenario = 'pure_capability'").fetchone()[0]
        print(f"catalog refresh {args.models} models x 8: {seconds:.1f} s end to end "
              f"({seconds / baseline:.1f}x a no-change refresh of {baseline:.1f} s; target < 300 s); "
              f"leaderboard pure_capability holds {rows} of {eligible} models with the case's benchmarks")
        if rows != eligible:
            sys.exit("FAIL: the leaderboard misses models that have the case's benchmarks")


if __name__ == "__main__":
    main()
