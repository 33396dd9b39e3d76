"""SYNTHETIC model x benchmark catalogs for scale benchmarks. Not data: no real model or score.

`synthetic_catalog` draws a catalog with the structure the ML Compass pipeline expects of
x_raw (§4.3): a low-rank factor model like
`tests/compass/mlcompass/frontier/conftest.py::low_rank_catalog` (each benchmark loads
mainly on one factor and weakly on the next, plus noise), with factors that share a general
component (real catalogs have a dominant general factor), mapped to benchmark-like score
ranges (arena-style ratings around 1200, accuracies in percent above a chance floor,
rounded as leaderboards publish them) and about a third of the cells missing at random.
Model ids are `synthetic-model-NNNNN` and benchmarks `synthetic_<kind>_NN` so that nothing
can be mistaken for a real catalog.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Label carried in `frame.attrs["source"]` of every generated catalog.
SYNTHETIC_LABEL = "SYNTHETIC catalog (benchmarks/catalog.py); not real benchmark scores"


def synthetic_catalog(
    n_models: int,
    n_bench: int = 8,
    rank: int = 3,
    general: float = 0.5,
    noise: float = 0.3,
    missing: float = 1 / 3,
    min_observed: int = 3,
    seed: int = 0,
) -> pd.DataFrame:
    """SYNTHETIC catalog: DataFrame (index model_id, columns benchmarks), NaN = missing.

    Factor scores f (n_models, rank) have unit variance and pairwise correlation `general`;
    benchmark j loads 0.7-0.95 on factor j % rank and 0-0.2 on the next (as in the tests'
    `low_rank_catalog`); `noise` is the sd of the benchmark-specific error. Benchmark 0 is
    an arena-style rating (mean ~1200, sd ~80, integer); the others are accuracies in
    percent, floor + (100 - floor) * logistic(...), with a chance floor of 0 or 25 and
    rounded to 0.1. Each cell is missing with probability `missing`; every model keeps at
    least `min_observed` benchmarks. `frame.attrs["source"]` says the catalog is synthetic.
    """
    if n_models < 1 or n_bench < 2 or not 1 <= rank <= n_bench:
        raise ValueError(f"need n_models >= 1, n_bench >= 2, 1 <= rank <= n_bench; got {n_models}, {n_bench}, {rank}")
    if not 0.0 <= general < 1.0 or not 0.0 <= missing < 1.0 or not 1 <= min_observed <= n_bench:
        raise ValueError("need 0 <= general < 1, 0 <= missing < 1 and 1 <= min_observed <= n_bench")
    rng = np.random.default_rng(seed)
    common = rng.standard_normal((n_models, 1))
    f = np.sqrt(general) * common + np.sqrt(1.0 - general) * rng.standard_normal((n_models, rank))
    loadings = np.zeros((n_bench, rank))
    for j in range(n_bench):
        loadings[j, j % rank] = rng.uniform(0.7, 0.95)
        if rank > 1:
            loadings[j, (j + 1) % rank] = rng.uniform(0.0, 0.2)
    latent = f @ loadings.T + noise * rng.standard_normal((n_models, n_bench))

    scores = np.empty_like(latent)
    names = []
    for j in range(n_bench):
        if j == 0:
            scores[:, j] = np.round(1200.0 + 80.0 * latent[:, j])
            names.append(f"synthetic_arena_rating_{j:02d}")
        else:
            floor = 25.0 if j % 2 else 0.0  # 4-way multiple choice vs free-form answers
            centre, slope = rng.uniform(-1.0, 1.0), rng.uniform(0.8, 1.5)
            scores[:, j] = np.round(floor + (100.0 - floor) / (1.0 + np.exp(-(centre + slope * latent[:, j]))), 1)
            names.append(f"synthetic_accuracy_{j:02d}")

    observed = rng.random((n_models, n_bench)) >= missing
    for i in np.flatnonzero(observed.sum(axis=1) < min_observed):
        hidden = np.flatnonzero(~observed[i])
        need = min_observed - observed[i].sum()
        observed[i, rng.choice(hidden, size=need, replace=False)] = True
    frame = pd.DataFrame(
        np.where(observed, scores, np.nan),
        index=pd.Index([f"synthetic-model-{i:05d}" for i in range(n_models)], name="model_id"),
        columns=names,
    )
    frame.attrs["source"] = SYNTHETIC_LABEL
    return frame
