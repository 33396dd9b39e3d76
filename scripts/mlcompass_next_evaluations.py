"""What to measure next, proven by simulation (issue 49 item 5; `compass.mlcompass.next_evaluations_simulation`).

SEMI-SYNTHETIC: the real catalog matrix (data/benchmark_scores.parquet, models with a real blended price in
data/model_costs.parquet, benchmarks with >= MIN_MODELS of them that cases/frontier_api.yaml's benchmark rules
admit: its exclude list drops composites and filtered copies), its real missingness pattern and real prices; the
missing cells' truth is drawn (imputation + predictive noise) per seed. Cell prices: `evaluation_costs` with
LiveBench's per-task questions and tokens (data/benchmark_scores.parquet) at each model's cheapest token prices;
vote tallies and agentic / long-context columns are not for sale (NaN cost: they inform the imputation, no strategy
can buy them). The score is the mean z-score minus lam log10(price) (a cost-aware scenario).
Strategies reveal k cells (k = 5, 10, 20) or spend a USD budget; the table gives mean regret and spend per
strategy, on how many seeds the reveals changed the pick (n_changed), and the paired difference against VOI
(beyond 2 SE = a verdict) in regret and in regret drop per USD.

Light (default, < 1 min): LIGHT_MODELS random priced models x LIGHT_BENCHMARKS random benchmarks, 4 seeds,
k = 5, 10 and one budget.
COMPASS_HEAVY=1: every benchmark with >= MIN_MODELS priced models, 30 seeds, k = 5, 10, 20 and the budget.

--correlation r: the world's within-model correlation of the missing cells' deviations from the imputation (the agent
knows it; default 0, independent cells; frontier_api's leave-pattern-out estimate is 0.26); clipped to
[0, MAX_CORRELATION] here, once. Misspecified worlds: --agent-correlation r' (the agent assumes r' instead),
--sd-scale s (the truth's deviations s times the agent's predictive sd).
--hide-leaders N: the harder world, the true top N models' rows 82 % unobserved (as frontier_api's leaders), their
hidden cells' truth the real scores (`next_evaluations_simulation`, "Hidden leaders").

Usage: PYTHONPATH=. .venv/bin/python scripts/mlcompass_next_evaluations.py [--seeds N] [--lam 0.1] [--ks 5 10 20]
       [--correlation 0.26] [--agent-correlation 0] [--sd-scale 1.5] [--sell-all] [--hide-leaders 10]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from compass.mlcompass.case_study import CaseStudy
from compass.mlcompass.evaluation_costs import NOT_PURCHASABLE, benchmark_profiles, cell_costs, token_prices
from compass.mlcompass.next_evaluations import clip_correlation
from compass.mlcompass.next_evaluations_simulation import compare, run_seed

ROOT = Path(__file__).resolve().parents[1]
MIN_MODELS = 60
LIGHT_BENCHMARKS = 16
LIGHT_MODELS = 80
RANK = 3  # fixed: the rank CV costs minutes on this catalog on 2 shared cores
MAX_ITER = 100


def catalog(heavy: bool, sell_all: bool = False) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame]:
    """(x_raw of priced models, blended price per model, USD per cell); sell_all: the ablation pricing vote and
    agentic columns as typical questions (the rule before the second review of issue 49)."""
    scores = pd.read_parquet(ROOT / "data" / "benchmark_scores.parquet")
    costs = pd.read_parquet(ROOT / "data" / "model_costs.parquet")
    price = costs.groupby("model_id")["blended_usd_per_mtok"].median()
    price = price[price > 0]
    x = scores.pivot_table(index="model_id", columns="benchmark", values="score", aggfunc="mean")
    x = x.loc[x.index.intersection(price.index)]
    rules = CaseStudy.from_yaml(ROOT / "cases" / "frontier_api.yaml").benchmarks
    x = x[[b for b in x.columns if rules.selects(b)]]
    x = x.loc[:, x.notna().sum() >= MIN_MODELS]
    if not heavy:  # a random subset of the benchmarks (seeded; the best-covered would be the near-complete Arena block)
        x = x[np.sort(np.random.default_rng(1).choice(x.columns.to_numpy(), LIGHT_BENCHMARKS, replace=False))]
    x = x[x.notna().sum(axis=1) >= 3]
    if not heavy:  # a uniform random subset of the models (seeded): keeps the real sparsity
        x = x.loc[np.sort(np.random.default_rng(0).choice(x.index.to_numpy(), LIGHT_MODELS, replace=False))]
        x = x.loc[:, x.notna().sum() >= 5]
    profiles = benchmark_profiles(x.columns, scores, not_purchasable=() if sell_all else NOT_PURCHASABLE)
    usd = cell_costs(profiles, token_prices(costs, x.index))
    return x, price.reindex(x.index), usd


def main() -> None:
    heavy = os.environ.get("COMPASS_HEAVY") == "1"
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=30 if heavy else 4)
    parser.add_argument("--lam", type=float, default=0.1)
    parser.add_argument("--ks", type=int, nargs="+", default=None, help="k values (default 5 10 20 heavy, 5 10 light)")
    parser.add_argument("--correlation", type=float, default=0.0, help="within-model correlation r of the world")
    parser.add_argument("--agent-correlation", type=float, default=None, help="the r the agent assumes (misspecified)")
    parser.add_argument("--sd-scale", type=float, default=1.0, help="truth's deviations / agent's sd (misspecified)")
    parser.add_argument("--sell-all", action="store_true",
                        help="ablation: price vote and agentic columns as typical questions (the earlier rule)")
    parser.add_argument("--hide-leaders", type=int, default=0,
                        help="the true top N models' rows 82 %% unobserved (the harder world; default 0: none)")
    args = parser.parse_args()
    if args.hide_leaders < 0:
        parser.error(f"--hide-leaders must be >= 0, got {args.hide_leaders}")
    r = clip_correlation(args.correlation)
    agent_r = None if args.agent_correlation is None else clip_correlation(args.agent_correlation)
    start = time.time()
    x, price, usd = catalog(heavy, args.sell_all)
    rank = RANK
    for_sale = x.isna().to_numpy() & np.isfinite(usd.to_numpy())
    budget = float(np.round(10 * np.median(usd.to_numpy()[for_sale]), -1))
    ks = tuple(args.ks) if args.ks else (5, 10, 20) if heavy else (5, 10)
    print(f"SEMI-SYNTHETIC world: {x.shape[0]} priced models x {x.shape[1]} benchmarks, "
          f"{x.isna().to_numpy().mean():.0%} missing ({for_sale.sum()} cells for sale), "
          f"imputation rank {rank} (fixed), {MAX_ITER} PCA-EM passes, lam {args.lam}, r {r:g} (agent {r if agent_r is None else agent_r:g}), "
          f"sd scale {args.sd_scale:g}, hidden leaders {args.hide_leaders}, budget ${budget:g} (10 median cells); "
          f"{args.seeds} seeds; "
          f"{'heavy' if heavy else 'light'}{'; ABLATION: every column for sale' if args.sell_all else ''}; "
          f"columns {', '.join(x.columns)}")
    runs = pd.concat([run_seed(x, usd, np.log10(price), args.lam, rank, seed, ks=ks, budgets=(budget,),
                               max_iter=MAX_ITER, correlation=r, sd_scale=args.sd_scale,
                               agent_correlation=agent_r, hide_leaders=args.hide_leaders)
                      for seed in range(args.seeds)], ignore_index=True)
    table = compare(runs)
    none = runs.groupby("seed")["regret_none"].first()
    print(f"seeds whose pick with nothing measured is not the true best: {int((none > 0).sum())} of {args.seeds}; "
          f"regret with nothing measured {none.mean():.4g} (SE {none.std(ddof=1) / np.sqrt(len(none)):.2g})")
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    print(f"{time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
