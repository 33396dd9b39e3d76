"""Rank uncertainty (issue #11): what the bootstrap of `compass.mlcompass.rank_uncertainty` costs per case and per
replicate, against one point fit of the same case.

    .venv/bin/python benchmarks/bench_rank_uncertainty.py [--boot 20] [--budget 40] [--synthetic-only]

Two SYNTHETIC cases with the shapes of the real ones (benchmarks/catalog.py catalogs; outcomes drawn from a known
logistic utility of the point measures, prompts with a shared difficulty; no real model or score):
  * like frontier_api: 249 models x 31 benchmarks, 20 % missing; 9 models with outcomes on 5 contexts x 1,100
    prompts (49,500 rows); logistic utility, within-prompt-mean labels;
  * like open_mmlu_pro: 400 models x 5 benchmarks, complete; 23 models on 14 contexts x 1,080 prompts
    (347,760 rows); LightGBM utility, threshold labels.
Then the real cases, when var/warehouse.duckdb exists (read only): x_raw, outcome rows and the published
loadings, as the assets read them.

For each case, in the same run: the point fit (`extract_measures` as the measures asset calls it, plus
`fit_case_utilities` as the utilities asset does, with the case's repeated-split AUCs) and `bootstrap_replicates`
with B replicates, split into setup (imputation with its rank CV, outcome cells) and time per replicate; then
`rank_intervals` for the five paper scenarios. `max B` is the largest B whose bootstrap fits in `--budget`
seconds. Wall times are single runs on a shared machine. The last line is
`rank uncertainty: <case> R s/replicate (x point fit) ...; B=<b> adds ... s per case`.
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
from scipy.special import expit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from catalog import synthetic_catalog

from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.case_utilities import fit_case_utilities
from compass.mlcompass.decisions import numeric_lambda
from compass.mlcompass.measures import extract_measures
from compass.mlcompass.rank_uncertainty import bootstrap_replicates, rank_intervals
from compass.mlcompass.scenarios import paper_scenarios

DB = ROOT / "var" / "warehouse.duckdb"
REAL_CASES = ("frontier_api", "open_mmlu_pro")
# (name, models, benchmarks, missing, real case it mimics, outcome models, contexts, prompts per context)
SYNTHETIC = (
    ("synthetic_frontier_api", 249, 31, 0.2, "frontier_api", 9, 5, 1_100),
    ("synthetic_open_mmlu_pro", 400, 5, 0.0, "open_mmlu_pro", 23, 14, 1_080),
)


def synthetic_case(name: str, n: int, n_bench: int, missing: float, like: str, n_out: int, n_ctx: int,
                   n_prompts: int, seed: int = 0) -> tuple[CaseStudy, pd.DataFrame, pd.DataFrame, pd.Series]:
    """A SYNTHETIC case shaped like `like`: its YAML settings, a catalog, outcome rows and costs."""
    base = CaseStudy.from_yaml(ROOT / "cases" / f"{like}.yaml")
    case = CaseStudy.from_dict({
        "case_id": name, "n_factors": base.n_factors, "benchmarks": {}, "lambdas": base.lambdas,
        "utility": {k: getattr(base.utility, k) for k in ("source", "label", "threshold", "estimator", "n_repeats",
                                                          "test_size", "min_rows_per_group", "monotone")},
    })
    x_raw = synthetic_catalog(n, n_bench=n_bench, missing=missing, min_observed=min(5, n_bench), seed=seed)
    x = extract_measures(x_raw, n_factors=case.n_factors, pa_iterations=1).measures.to_numpy()
    rng = np.random.default_rng(seed)
    answering = rng.choice(n, n_out, replace=False)
    frames = []
    for g in range(n_ctx):
        beta = rng.uniform(0.5, 3.0, x.shape[1])
        difficulty = rng.normal(0.0, 1.0, (n_prompts, 1))
        p = expit(-1.0 + x[answering] @ beta + difficulty)
        frames.append(pd.DataFrame({
            "model_id": np.tile(x_raw.index[answering], n_prompts),
            "group": np.repeat([f"ctx{g}:q{q}" for q in range(n_prompts)], n_out),
            "context_group": f"ctx{g}",
            "outcome": (rng.random(p.shape) < p).astype(float).reshape(-1),
        }))
    costs = pd.Series(rng.uniform(0.0, 1.0, n), index=x_raw.index)
    return case, x_raw, pd.concat(frames, ignore_index=True), costs


def real_case(case_id: str) -> tuple[CaseStudy, pd.DataFrame, pd.DataFrame, pd.Series, pd.DataFrame]:
    """A real case's inputs from the warehouse, read as the assets read them."""
    from compass.mlcompass.case_inputs import build_x_raw, outcome_rows
    from resources import readers
    from resources.warehouse import Warehouse

    wh = Warehouse(DB)
    case = CaseStudy.from_yaml(ROOT / "cases" / f"{case_id}.yaml")
    x_raw = build_x_raw(readers.case_scores(wh), case.benchmarks)
    rows = outcome_rows(readers.outcome_records(wh, case.utility.datasets), wh.read("raw.interactions"), case.utility)
    costs = wh.read("compass.costs", {"case_id": case_id}).set_index("model_id")["cost"]
    return case, x_raw, rows, costs, wh.read("compass.loadings", {"case_id": case_id})


def measure(case: CaseStudy, x_raw: pd.DataFrame, rows: pd.DataFrame, costs: pd.Series, n_boot: int,
            budget: float, reference: pd.DataFrame | None = None) -> dict:
    """Point fit, bootstrap setup (B = 1) and B replicates of one case; rank intervals of the paper scenarios."""
    t = time.perf_counter()
    point = extract_measures(x_raw, n_factors=case.n_factors, loading_threshold=case.loading_threshold,
                             max_factors_per_variable=case.max_factors_per_variable, previous_loadings=reference)
    fit_case_utilities(rows, point.measures, case.utility)
    t_point = time.perf_counter() - t
    reference = point.loadings if reference is None else reference
    t = time.perf_counter()
    bootstrap_replicates(x_raw, rows, case, 1, reference_loadings=reference)
    t_one = time.perf_counter() - t
    t = time.perf_counter()
    reps = bootstrap_replicates(x_raw, rows, case, n_boot, reference_loadings=reference)
    t_boot = time.perf_counter() - t
    per_rep = (t_boot - t_one) / max(n_boot - 1, 1)
    setup = max(t_one - per_rep, 0.0)
    priced = costs[costs.index.isin(reps.model_ids)]
    t = time.perf_counter()
    tops = [rank_intervals(reps, priced, numeric_lambda(s, case)).sort_values("p_rank1").iloc[-1]
            for s in paper_scenarios()]
    t_rank = time.perf_counter() - t
    return {
        "case": case.case_id, "models": x_raw.shape[0], "benchmarks": x_raw.shape[1], "outcome_rows": len(rows),
        "point_s": round(t_point, 2), "setup_s": round(setup, 2), "per_replicate_s": round(per_rep, 3),
        "replicate/point": round(per_rep / t_point, 3), "B": n_boot, "bootstrap_s": round(t_boot, 2),
        "ranks_5_scenarios_s": round(t_rank, 3), "max_B": int((budget - setup) // per_rep),
        "top_p_rank1": round(float(np.mean([r["p_rank1"] for r in tops])), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boot", type=int, default=20, help="replicates per case (default 20)")
    parser.add_argument("--budget", type=float, default=40.0, help="seconds per case for max_B (default 40)")
    parser.add_argument("--synthetic-only", action="store_true", help="skip the real cases")
    args = parser.parse_args()
    rows = []
    for spec in SYNTHETIC:
        case, x_raw, outcomes, costs = synthetic_case(*spec)
        rows.append(measure(case, x_raw, outcomes, costs, args.boot, args.budget))
        print(f"  {spec[0]} done", file=sys.stderr, flush=True)
    if DB.exists() and not args.synthetic_only:
        for case_id in REAL_CASES:
            case, x_raw, outcomes, costs, loadings = real_case(case_id)
            rows.append(measure(case, x_raw, outcomes, costs, args.boot, args.budget, loadings))
            print(f"  {case_id} done", file=sys.stderr, flush=True)
    else:
        print(f"{DB} not found (or --synthetic-only): real cases skipped", file=sys.stderr)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 250):
        print(table.to_string(index=False))
    last = table[table["case"].isin(REAL_CASES)] if table["case"].isin(REAL_CASES).any() else table
    parts = [f"{r['case']} {r['per_replicate_s']:.3f} s/replicate ({r['replicate/point']:.3f} x point fit, "
             f"setup {r['setup_s']:.1f} s)" for r in last.to_dict("records")]
    adds = ", ".join(f"{r['setup_s'] + args.boot * r['per_replicate_s']:.0f} s" for r in last.to_dict("records"))
    print(f"rank uncertainty: {'; '.join(parts)}; B={args.boot} adds {adds} per case")
    return 0


if __name__ == "__main__":
    sys.exit(main())
