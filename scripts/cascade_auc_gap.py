"""Where does the AUC level gap to Tables 2.7 / 2.8 come from? (issue 28 item 3; thesis seed 001, Sec. 2.4)

The thesis defines the AUC as the integral of test error over the expected cost in $/query, "normalized to lie
between 0 and 1" (Sec. 2.4, Fig. 2.5b); the authors' code integrates scipy's linear `interp1d` (extrapolated) with
`quad` over the cost interval shared by the two methods and divides by its length (spec-001, "Metric"). It does
not say which cascades a table row averages. This script recomputes the AUC levels of RT and grid search under
each alternative reading, from the embedded records in the warehouse, so every hypothesis is tested both ways:

* cascade set: the k >= 3 cascades (16 Llama subsets, what our tables compared) or all 26 (k >= 2);
* cost range: the interval shared by RT and grid search (ours and the authors') or each curve's own range;
* integration rule: our exact trapezoid of the piecewise-linear curve or `quad` over `interp1d` (the authors');
* protocol: ours (thesis-text grid, per-query costs, pattern search) or the authors' (`compass.cascades.protocols`).

It also measures the seed-to-seed standard deviation of the Table 2.8 %Delta (n <= 30 subsamples, seeds 0..4),
the justification of that table's tolerance in `scripts/cascade_thesis_tables.py`.

    .venv/bin/python scripts/cascade_auc_gap.py [warehouse.duckdb] [seeds]   (~2 min CPU for 4 datasets, 5 seeds)
"""

import os
import sys
import warnings
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy: BLAS threads 1, as
    os.environ.setdefault(_var, "1")  # `make run` sets them (multi-threaded BLAS costs ~8x the CPU here)

import duckdb
import numpy as np
import pandas as pd
from scipy.integrate import IntegrationWarning, quad
from scipy.interpolate import interp1d

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compass.cascades import protocols as cp  # noqa: E402
from compass.cascades import study as cs  # noqa: E402
from compass.cascades.curves import curve_auc  # noqa: E402
from resources import settings  # noqa: E402
from scripts.cascade_thesis_tables import THESIS  # noqa: E402

DATASETS = ("mmlu", "medmcqa", "triviaqa", "truthfulqa")


def quad_auc(cost: np.ndarray, error: np.ndarray, lo: float, hi: float) -> float:
    """The authors' rule: quad over interp1d (linear, extrapolated) of the curve, divided by hi - lo (quad's
    subdivision limit of 200 is theirs; its warnings on curves with more kinks are silenced, its answer kept)."""
    order = np.lexsort((error, cost))
    c, e = cost[order], error[order]
    first = np.concatenate([[True], np.diff(c) > 0])
    f = interp1d(c[first], e[first], kind="linear", fill_value="extrapolate")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntegrationWarning)
        return quad(lambda x: float(f(x)), lo, hi, limit=200)[0] / (hi - lo)


def cascade_aucs(curves: pd.DataFrame) -> pd.DataFrame:
    """Per (protocol, sample, cascade, method): AUC on the shared interval (trapezoid and quad) and on the
    curve's own cost range."""
    rows = []
    for (protocol, sample, cascade), g in curves.groupby(["protocol", "sample", "cascade"], sort=True):
        pair = {m: (h["cost"].to_numpy(float), h["error"].to_numpy(float)) for m, h in g.groupby("method")}
        lo = max(c.min() for c, _ in pair.values())
        hi = min(c.max() for c, _ in pair.values())
        if not hi > lo:  # no shared cost interval: auc_comparisons leaves the pair out (NaN) too
            continue
        for method, (c, e) in pair.items():
            own = curve_auc(c, e, c.min(), c.max()) if c.max() > c.min() else float(e[0])
            rows.append({"protocol": protocol, "sample": sample, "cascade": cascade, "k": cascade.count(">") + 1,
                         "method": method, "shared": curve_auc(c, e, lo, hi), "shared_quad": quad_auc(c, e, lo, hi),
                         "own_range": own})
    return pd.DataFrame(rows)


def level_table(aucs: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Mean AUC levels per protocol, setting, cascade set and rule, beside the thesis (RT, GS)."""
    out = []
    for (protocol, setting), g in aucs.assign(setting=np.where(aucs["sample"] == "full", "full", "low")
                                              ).groupby(["protocol", "setting"]):
        for label, part in (("k>=3", g[g["k"] >= 3]), ("all 26", g)):
            means = part.groupby("method")[["shared", "shared_quad", "own_range"]].mean()
            rt, gs = THESIS[setting][dataset][:2]
            out.append({"dataset": dataset, "setting": setting, "protocol": protocol.split(",")[0], "cascades": label,
                        "RT shared": means.loc["rt", "shared"], "RT quad": means.loc["rt", "shared_quad"],
                        "RT own range": means.loc["rt", "own_range"], "thesis RT": rt,
                        "GS shared": means.loc["grid", "shared"], "GS own range": means.loc["grid", "own_range"],
                        "thesis GS": gs})
    return pd.DataFrame(out)


def seed_spread(aucs: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Table 2.8 %Delta (all 26 cascades, shared interval) per seed and its seed-to-seed SD, per protocol."""
    low = aucs[aucs["sample"] != "full"].pivot_table(index=["protocol", "sample", "cascade"], columns="method",
                                                     values="shared")
    pct = (100 * (low["rt"] - low["grid"]) / low["grid"]).groupby(["protocol", "sample"]).mean()
    return pct.groupby("protocol").agg(["mean", "std", "count"]).reset_index().assign(dataset=dataset)


def main() -> int:
    db = sys.argv[1] if len(sys.argv) > 1 else settings.db_path()
    n_seeds = sys.argv[2] if len(sys.argv) > 2 else "5"
    if not Path(db).is_file() or not n_seeds.isdigit() or int(n_seeds) < 1:
        print(f"cascade_auc_gap: needs an existing warehouse and seeds >= 1 (got {db!r}, {n_seeds!r})", file=sys.stderr)
        return 2
    seeds = tuple(range(int(n_seeds)))
    levels, spreads = [], []
    with duckdb.connect(db, read_only=True) as con:
        for dataset in DATASETS:
            records = con.sql("select * from datasets.query_records where dataset = ?", params=[dataset]).df()
            records = cs.prepare_records(records, dataset)
            cal, _ = cs.calibrated_records(records, dataset)
            chains = cs.chains_for(records)
            samples, _ = cs.training_samples(records, cal, dataset, max(chains.values(), key=len), seeds)
            curves, _, _ = cp.protocol_study(samples, chains, [cp.OURS, cp.AUTHORS])
            aucs = cascade_aucs(curves)
            levels.append(level_table(aucs, dataset))
            spreads.append(seed_spread(aucs, dataset))
    with pd.option_context("display.width", 220, "display.max_columns", 20, "display.precision", 4):
        print("AUC levels (mean over cascades) by reading; thesis beside:")
        print(pd.concat(levels, ignore_index=True).to_string(index=False))
        print(f"\nTable 2.8 %Delta_GS, all 26 cascades, per-seed mean over cascades; seeds {seeds}:")
        print(pd.concat(spreads, ignore_index=True).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
