"""What to measure next (issue 49): the ranking of one case x scenario at 300 models x 40 benchmarks, as the
compass.next_evaluations asset computes it from its inputs. Target: < 20 s on 2 cores.

    .venv/bin/python benchmarks/bench_next_evaluations.py [--models 300] [--benchmarks 40] [--boot 60]

SYNTHETIC (benchmarks/catalog.py; no real model or score): a 300 x 40 catalog, a third of the cells missing; the
rank bootstrap's replicates (what compass.rank_bootstrap publishes upstream, not timed here) stand in as the point
measures of a 3-factor fit plus Gaussian noise, B = 60 (the light default), a structural utility over the measures
and a uniform cost. Timed, in the asset's order: the imputation with its predictive sd (`imputation_noise`, rank by
cross-validation), the replicate scores (`replicate_scores`), the gradient (`measure_slopes`, `score_gradient`),
the cell prices (`evaluation_costs`) and the ranking with both greedy batches of 20 (`next_evaluations_table`).
Single run on a shared machine (load average printed). The last line is
`next evaluations: <models> x <benchmarks>, <cells> cells, <t> s (imputation ..., ranking ...); target < 20 s:
met|MISSED`.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from catalog import synthetic_catalog

from compass.mlcompass.evaluation_costs import benchmark_profiles, cell_costs
from compass.mlcompass.measures import extract_measures
from compass.mlcompass.next_evaluations_decision import measure_slopes, next_evaluations_table, score_gradient
from compass.mlcompass.next_evaluations_outcome import outcome_noise_sd, outcome_values
from compass.mlcompass.rank_uncertainty import Replicates, imputation_noise, replicate_scores
from compass.mlcompass.scenarios import Scenario

TARGET_S = 20.0
N_FACTORS = 3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--benchmarks", type=int, default=40)
    parser.add_argument("--boot", type=int, default=60)
    args = parser.parse_args()
    x_raw = synthetic_catalog(args.models, n_bench=args.benchmarks, seed=0)
    point = extract_measures(x_raw, n_factors=N_FACTORS, pa_iterations=1).measures
    rng = np.random.default_rng(0)
    measures = np.clip(point.to_numpy()[None] + rng.normal(0, 0.03, (args.boot, *point.shape)), 0, 1)
    beta = np.array([0.5, 0.3, 0.2])
    reps = Replicates(pd.Index(x_raw.index, name="model_id"), tuple(point.columns), ("all",), measures,
                      (measures @ beta)[:, :, None])
    costs = pd.Series(rng.uniform(0, 1, len(x_raw)), index=x_raw.index)
    scenario = Scenario("cost_aware_low", lam=0.1)
    models = list(x_raw.index)

    start = time.perf_counter()
    completed, sd = imputation_noise(x_raw, 0)
    t_imp = time.perf_counter() - start
    draws, _ = replicate_scores(reps, costs, scenario, models)
    gradient = score_gradient(completed, point.set_axis(x_raw.index), measure_slopes(draws, measures))
    price = rng.uniform(0.1, 20.0, len(x_raw))  # USD per million input tokens, output at 4x
    prices = pd.DataFrame({"input_usd_per_mtok": price, "output_usd_per_mtok": 4 * price}, index=x_raw.index)
    usd = cell_costs(benchmark_profiles(x_raw.columns), prices)
    t_inputs = time.perf_counter() - start - t_imp
    t = time.perf_counter()
    outcome_usd = pd.Series(price / 100, index=x_raw.index)  # about 1,000 short queries at these prices
    outcomes = outcome_values(draws, pd.Index(models), outcome_usd, outcome_noise_sd(1000))
    table = next_evaluations_table(draws, completed, sd, gradient, usd, correlation=0.26,  # frontier_api's r
                                   outcomes=outcomes)
    t_rank = time.perf_counter() - t
    total = time.perf_counter() - start
    load = os.getloadavg()[0]
    print(f"SYNTHETIC {x_raw.shape[0]} models x {x_raw.shape[1]} benchmarks, {int(x_raw.isna().to_numpy().sum())} "
          f"unmeasured cells, B = {args.boot}; load average {load:.1f}")
    cells_with_value = int(((table["kind"] == "cell") & (table["expected_reduction"] > 0)).sum())
    print(pd.DataFrame([{"imputation_s": round(t_imp, 2), "scores_gradient_costs_s": round(t_inputs, 2),
                         "ranking_and_batches_s": round(t_rank, 2), "total_s": round(total, 2),
                         "cells_with_value": cells_with_value}]).to_string(index=False))
    verdict = "met" if total < TARGET_S else "MISSED"
    print(f"next evaluations: {x_raw.shape[0]} x {x_raw.shape[1]}, {len(table)} candidates (cells and outcome "
          f"evaluations), {total:.1f} s (imputation {t_imp:.1f} s, ranking {t_rank:.1f} s); target < {TARGET_S:.0f} s: "
          f"{verdict}")
    return 0 if total < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
