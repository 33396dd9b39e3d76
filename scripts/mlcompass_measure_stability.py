"""Do the measures keep their meaning across a refresh? (docs/results/mlcompass.md, issue 42 item 2.)

On the real catalog of a case (from a materialized warehouse), three refreshes are replayed with the code on
PYTHONPATH (run it once with main's code for "before", once with this branch's for "after"):

  (0) a normal refresh: the same catalog refitted against its own first fit;
  (a) the issue's release: a copy of the best LiveBench row, +3 on every LiveBench category, as a new model
      scored by LiveBench alone (`kimi-k4-max-effort`);
  (b) two more such releases (the second- and third-best LiveBench rows, +3), refitted against (a).

For each refit: Tucker's phi (signed) of every measure with its namesake in the previous loadings, over the shared
benchmarks; and on `pure_capability` (lam = 0) the rank of the previous top model and of the new models. The
utilities are the warehouse's fitted `compass.utility_models` (functions of the measures, not refitted), so a
rank moves only because the measures moved; "utility rank" orders by utility alone, "board rank" is the
scenario leaderboard (which applies this branch's dominance repair when it has one).

Usage: .venv/bin/python scripts/mlcompass_measure_stability.py [--case frontier_api] [--db var/warehouse.duckdb]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from compass.mlcompass.case_inputs import build_x_raw
from compass.mlcompass.factor_alignment import tucker_congruence
from compass.mlcompass.imputation import impute_low_rank
from compass.mlcompass.measures import extract_measures, factors_retained, standardize, standardized_input
from compass.mlcompass.recommend import model_scores
from compass.mlcompass.scenarios import Scenario, leaderboard
from compass.mlcompass.utility_models import utilities_from_rows
from resources import readers
from resources.configs import cases
from resources.warehouse import Warehouse

try:  # this branch: the leaderboard's dominance repair (main has none)
    from compass.mlcompass.dominance import strict_dominators
except ImportError:
    strict_dominators = None

BUMP = 0.03  # the release: +3 points on every LiveBench task (scores are fractions: 0.03)


def releases(x_raw: pd.DataFrame, ranks: list[int], names: list[str]) -> pd.DataFrame:
    """New models scored by LiveBench alone: the `ranks`-th best LiveBench rows (by mean category score), +BUMP."""
    live = [c for c in x_raw.columns if c.startswith("livebench_")]
    best = x_raw[live].dropna().mean(axis=1).sort_values(ascending=False).index
    rows = x_raw.loc[[best[r] for r in ranks]].copy()
    rows.loc[:, [c for c in x_raw.columns if c not in live]] = np.nan
    rows[live] += BUMP
    rows.index = pd.Index(names, name=x_raw.index.name)
    return rows.assign(_copy_of=[best[r] for r in ranks])


def phi(new: pd.DataFrame, old: pd.DataFrame) -> dict[str, float]:
    """Signed Tucker phi of each new measure with its namesake in `old` (long loadings frames)."""
    wide = [f.pivot(index="benchmark", columns="factor", values="loading").fillna(0.0) for f in (new, old)]
    shared = wide[0].index.intersection(wide[1].index)
    return {name: float(tucker_congruence(wide[0].loc[shared, [name]].to_numpy(), wide[1].loc[shared, [name]].to_numpy())[0, 0])
            if name in wide[1] else float("nan") for name in wide[0].columns}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="frontier_api")
    parser.add_argument("--db", default="var/warehouse.duckdb")
    args = parser.parse_args()
    wh, case = Warehouse(args.db), cases()[args.case]
    costs = wh.read("compass.costs", {"case_id": case.case_id}).set_index("model_id")["cost"]
    utilities = utilities_from_rows(wh.read("compass.utility_models", {"case_id": case.case_id}))
    x0 = build_x_raw(readers.case_scores(wh), case.benchmarks)
    print(f"case {case.case_id}: {x0.shape[0]} models x {x0.shape[1]} benchmarks\n")
    if any(c.startswith("livebench_") for c in x0.columns):
        release_tables(case, x0, costs, utilities)
    if strict_dominators:
        print("\n" + dominance_table(wh, case, costs, utilities))


def release_tables(case, x0: pd.DataFrame, costs: pd.Series, utilities) -> None:
    """The three refreshes of the module docstring, then five single releases (the 1st, 2nd, 3rd, median and last
    LiveBench row, +3) refitted against the first fit."""
    settings = dict(n_factors=case.n_factors, loading_threshold=case.loading_threshold,
                    max_factors_per_variable=case.max_factors_per_variable)
    if hasattr(case, "anchors"):  # this branch: the case's sign anchors (main has none)
        settings["anchors"] = case.anchors
    a = releases(x0, [0], ["kimi-k4-max-effort"])
    b = releases(x0, [1, 2], ["release-b1", "release-b2"])
    costs = pd.concat([costs, pd.concat([a, b])["_copy_of"].map(costs)])
    x_a = pd.concat([x0, a.drop(columns="_copy_of")])
    x_b = pd.concat([x_a, b.drop(columns="_copy_of")])

    first = extract_measures(x0, **settings)
    top = model_scores(first.measures.loc[first.measures.index.isin(costs.index)], costs, utilities, 0.0)["model_id"].iloc[0]
    steps = [("(0) normal refresh", x0), ("(a) one LiveBench release", x_a), ("(b) two more releases", x_b)]
    previous, rows = first, []
    for label, x in steps:
        fit = extract_measures(x, previous_loadings=previous.loadings, **settings)
        m = fit.measures.loc[fit.measures.index.isin(costs.index)]
        by_utility = model_scores(m, costs, utilities, 0.0)["model_id"].tolist()
        repair = {"observed": x.loc[m.index]} if strict_dominators else {}
        board = leaderboard(m, costs, utilities, Scenario("pure_capability", lam=0.0), **repair)["model_id"].tolist()
        new = [i for i in x.index if i not in x0.index]
        rows.append({
            "refresh": label,
            **{f"phi {k}": v for k, v in phi(fit.loadings, previous.loadings).items()},
            f"{top}: utility rank": by_utility.index(top) + 1, f"{top}: board rank": board.index(top) + 1,
            "new models: utility rank": ", ".join(str(by_utility.index(i) + 1) for i in new) or "-",
            "new models: board rank": ", ".join(str(board.index(i) + 1) for i in new) or "-",
            "top loadings": "; ".join(
                f"{f}: " + ", ".join(f"{r.benchmark} {r.loading:+.2f}" for r in g.reindex(g["loading"].abs()
                                     .sort_values(ascending=False).index).head(2).itertuples())
                for f, g in fit.loadings.groupby("factor")),
        })
        previous = fit
    print(f"previous top model on pure_capability: {top}; imputation rank of the first fit: {first.imputation_rank}\n")
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"))
    print("\nOne release at a time (the 1st, 2nd, 3rd, median and last LiveBench row, +3), refitted against the "
          "first fit:\n")
    single = []
    n_live = x0.filter(like="livebench_").dropna().shape[0]
    for r in (0, 1, 2, n_live // 2, n_live - 1):
        release = releases(x0, [r], [f"release-{r + 1}"])
        fit = extract_measures(pd.concat([x0, release.drop(columns="_copy_of")]), previous_loadings=first.loadings,
                               **settings)
        single.append({"copy of": release["_copy_of"].iloc[0],
                       **{f"phi {k}": v for k, v in phi(fit.loadings, first.loadings).items()},
                       "imputation rank": fit.imputation_rank})
    print(pd.DataFrame(single).to_markdown(index=False, floatfmt=".3f"))
    diagnostics(x0, x_a, first, settings)
    one = {**settings, "n_factors": 1}  # what parallel analysis supports on the catalog before the release
    base = extract_measures(x0, **one)
    fit = extract_measures(x_a, previous_loadings=base.loadings, **one)
    print(f"\nRelease (a) with one measure (parallel analysis supports {factors_retained(base.parallel_analysis)} "
          f"before the release, {factors_retained(fit.parallel_analysis)} after) instead of the case's "
          f"{case.n_factors}: phi " + ", ".join(f"{k} {v:.3f}" for k, v in phi(fit.loadings, base.loadings).items()))


def diagnostics(x0: pd.DataFrame, x_a: pd.DataFrame, first, settings: dict) -> None:
    """Why release (a) changes the structure: the imputation rank CV per seed, the leading eigenvalues of the
    completed correlation matrix, and phi of (a) with the imputation rank held at the first fit's."""
    print(f"\nimputation rank CV by seed 0-3: before the release {[impute_low_rank(x0, seed=s).rank for s in range(4)]}, "
          f"after {[impute_low_rank(x_a, seed=s).rank for s in range(4)]}")
    for label, x in (("before", x0), ("after", x_a)):
        imputation, z = standardized_input(x)
        top = np.sort(np.linalg.eigvalsh(np.corrcoef(z, rowvar=False)))[::-1][:3]
        print(f"leading eigenvalues {label} the release (rank-{imputation.rank} imputation, "
              f"{x.shape[1]} benchmarks): {', '.join(f'{v:.2f}' for v in top)}")
    held = impute_low_rank(x_a, rank=first.imputation_rank)
    fit = extract_measures(x_a, previous_loadings=first.loadings, standardized=(held, standardize(held.completed).to_numpy()),
                           **settings)
    print(f"release (a) with the imputation rank held at {first.imputation_rank}: phi " +
          ", ".join(f"{k} {v:.3f}" for k, v in phi(fit.loadings, first.loadings).items()))


def dominance_table(wh: Warehouse, case, costs: pd.Series, utilities) -> str:
    """On the published measures of the case, per scenario lam: strictly dominating pairs (on the case's observed
    benchmarks, at no higher normalized cost) that the score order ranks the wrong way round, before (score order,
    main's leaderboard) and after the repair, and whether rank 1 changes."""
    m = wh.read("compass.measures", {"case_id": case.case_id}).pivot(index="model_id", columns="factor", values="value")
    m = m.loc[m.index.isin(costs.index)]
    observed = build_x_raw(readers.case_scores(wh), case.benchmarks).reindex(m.index)
    dominators = strict_dominators(observed, costs.reindex(m.index))
    pairs = sum(len(v) for v in dominators.values())
    rows = []
    for name, lam in case.lambdas.items():
        before = model_scores(m, costs, utilities, lam)["model_id"].tolist()
        after = leaderboard(m, costs, utilities, Scenario(name, lam=lam), observed=observed)
        rank_after = after.set_index("model_id")["rank"]
        inverted = [sum(before.index(a) > before.index(b) for a in dom) for b, dom in dominators.items()]
        rows.append({"lam": f"{name} ({lam})", "strictly dominating pairs": pairs,
                     "inverted before": sum(inverted),
                     "inverted after": sum(rank_after[a] > rank_after[b] for b, dom in dominators.items() for a in dom),
                     "rows lifted": int(after["dominates"].notna().sum()),
                     "rank 1 before": before[0], "rank 1 after": after["model_id"].iloc[0]})
    return pd.DataFrame(rows).to_markdown(index=False)


if __name__ == "__main__":
    main()
