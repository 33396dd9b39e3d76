"""The leave-pattern-out imputation validation (compass/imputation_validation, §4.3): its refits run together against
one `impute_low_rank` per cut, as the asset ran them before (two fits per (pattern, donor): the case's rank and the
rank-1 baseline).

    .venv/bin/python benchmarks/bench_imputation_validation.py [--sample 40]

The matrix: frontier_api's x_raw and current models as the asset reads them from the warehouse (COMPASS_DB, else
var/warehouse.duckdb; read only; `make bench` runs a cold `make run` first when there is none). `validation_table` is
timed whole. The baseline is timed on `--sample` cuts drawn at random (seed 0): its CPU per cut times the number of
cuts, both fits of each (its cost is the same for every cut: 500 PCA-EM passes, none converged). On the same sample
the completions of the batched refits (`impute_hiding`) are compared with the one-by-one ones (max |difference| in
the benchmark's units).

Timing: CPU time of this process (`time.process_time`, BLAS threads 1), so a loaded machine slows the wall time only;
the load average is printed. Target: the whole table in at most a fifth of the baseline's CPU, and the completions
equal to 1e-9.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compass.mlcompass.benchmark_choice import benchmark_choice  # noqa: E402
from compass.mlcompass.imputation import impute_hiding, impute_low_rank  # noqa: E402
from compass.mlcompass.imputation_validation import pattern_cuts, validation_table  # noqa: E402
from resources import readers, settings  # noqa: E402
from resources.configs import cases  # noqa: E402
from resources.warehouse import Warehouse  # noqa: E402

CASE = "frontier_api"
MAX_RATIO, MAX_DIFF = 0.2, 1e-9


def case_matrix() -> tuple[pd.DataFrame, pd.Index]:
    """frontier_api's x_raw and current models, as compass/imputation_validation reads them."""
    choice = benchmark_choice(readers.case_scores(Warehouse(settings.db_path())), cases()[CASE].benchmarks)
    return choice.wide.loc[choice.models, choice.benchmarks], pd.Index(choice.current)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=40, help="cuts the one-by-one baseline is timed on")
    args = parser.parse_args()
    x_raw, board = case_matrix()
    cuts = pattern_cuts(x_raw, board)
    rank = impute_low_rank(x_raw).rank
    print(f"{CASE}: {x_raw.shape[0]} models x {x_raw.shape[1]} benchmarks, rank {rank}, {len(cuts)} cuts "
          f"({len({(d, tuple(h)) for *_, d, h in cuts})} distinct); load average {os.getloadavg()[0]:.2f}")
    start = time.process_time()
    validation_table(x_raw, board)
    batched = time.process_time() - start

    sample = [cuts[i] for i in np.random.default_rng(0).choice(len(cuts), min(args.sample, len(cuts)), replace=False)]
    where = [(x_raw.index.get_loc(donor), x_raw.columns.get_indexer(hidden)) for *_, donor, hidden in sample]
    cut = [x_raw.copy() for _ in sample]
    for frame, (*_, donor, hidden) in zip(cut, sample):
        frame.loc[donor, hidden] = np.nan
    start = time.process_time()
    alone = np.stack([impute_low_rank(frame, rank=rank).completed.to_numpy() for frame in cut])
    for frame in cut:
        impute_low_rank(frame, rank=1)
    per_cut = (time.process_time() - start) / len(sample)
    diff = float(np.abs(np.stack(list(impute_hiding(x_raw, where, rank))) - alone).max())

    baseline = per_cut * len(cuts)
    ratio = batched / baseline
    print(f"validation_table {batched:.1f} s CPU; one by one {baseline:.1f} s CPU ({per_cut * 1000:.0f} ms per cut "
          f"x {len(cuts)}, from {len(sample)} cuts); ratio {ratio:.2f} (target <= {MAX_RATIO}); "
          f"max |batched - one by one| {diff:.1e} (target <= {MAX_DIFF:.0e}); "
          f"load average {os.getloadavg()[0]:.2f}")
    return 0 if ratio <= MAX_RATIO and diff <= MAX_DIFF else 1


if __name__ == "__main__":
    sys.exit(main())
