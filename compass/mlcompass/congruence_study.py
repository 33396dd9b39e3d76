"""Is a measure still its namesake after a refresh? A simulation of Tucker's phi in and out of sample (issue 42).

A refresh rotates the refit toward the previous loadings (`factor_alignment.target_rotation`, oblique
Procrustes) and keeps a measure's identity while phi >= 0.95. Phi over the benchmarks the rotation was fitted to
is what the rotation maximizes, so it is biased upward; `held_out_rotation` predicts each benchmark's loadings
from a rotation fitted without it. Catalogs are drawn from given true loadings (2 oblique factors, correlation
0.5, n = 162 models as on the frontier board, standardized, complete) and refitted, in worlds:

* same: new data from the same structure (phi should stay >= 0.95: a refresh must keep the measures);
* swap2, swap3, swap: the two factors' loadings exchanged on 2, 3 or half of the benchmarks (a changed structure);
* one_factor: the data have one factor only (the second measure no longer exists);
* random: unrelated loadings, uniform(0.2, 0.9), each zeroed with probability 0.3.

Synthetic data, for this study and its test (scripts/mlcompass_congruence_bias.py prints the table).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.factor_alignment import MIN_CONGRUENCE
from compass.mlcompass.measures import correlation, fit_minres, rotate_toward

N_MODELS, FACTOR_CORRELATION, THRESHOLD, PER_VARIABLE = 162, 0.5, 0.3, 2
WORLDS = ("same", "swap2", "swap3", "swap", "one_factor", "random")


def world(truth: pd.DataFrame, name: str, rng: np.random.Generator) -> np.ndarray:
    """The loadings the new catalog is drawn from."""
    lam = truth.to_numpy(float).copy()
    if name.startswith("swap"):
        some = rng.choice(len(lam), int(name[4:]) if name[4:] else len(lam) // 2, replace=False)
        lam[some] = lam[some][:, ::-1]
    elif name == "one_factor":
        lam = np.column_stack([np.sqrt((lam ** 2).sum(axis=1).clip(0, 0.9)), np.zeros(len(lam))])
    elif name == "random":
        lam = rng.uniform(0.2, 0.9, lam.shape) * (rng.random(lam.shape) > 0.3)
    return lam


def draw(lam: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A complete standardized catalog X = F lam' + e, factors correlated FACTOR_CORRELATION."""
    phi = np.array([[1.0, FACTOR_CORRELATION], [FACTOR_CORRELATION, 1.0]])
    common = (lam @ phi * lam).sum(axis=1)
    unique = np.sqrt(np.clip(1.0 - common, 0.05, None))
    f = rng.multivariate_normal(np.zeros(2), phi, size=N_MODELS)
    return f @ lam.T + rng.standard_normal((N_MODELS, len(lam))) * unique


def congruences(x: np.ndarray, previous: pd.DataFrame) -> tuple[float, float]:
    """(in sample, out of sample): the smaller measure's phi of the refit rotated toward `previous`, as
    `measures._oriented_pattern` computes them (`measures.rotate_toward`; no anchors: signs follow the rotation)."""
    unrotated = pd.DataFrame(fit_minres(correlation(x), 2, None).loadings_, index=previous.index)
    toward = rotate_toward(unrotated, previous, THRESHOLD, PER_VARIABLE)
    return float(toward.in_sample.min()), float(toward.out_of_sample.min())


def study(truth: pd.DataFrame, seeds: int) -> pd.DataFrame:
    """Per world, over `seeds` catalogs, the smaller measure's phi: median, 5th percentile and the share >= 0.95
    (what keeps both identities), in sample (the published pattern) and out of sample (the check)."""
    rows = []
    for name in WORLDS:
        phis = np.array([congruences(draw(world(truth, name, rng := np.random.default_rng(s)), rng), truth)
                         for s in range(seeds)])
        for where, column in (("in sample", phis[:, 0]), ("out of sample", phis[:, 1])):
            rows.append({"world": name, "phi": where, "median": np.median(column),
                         "p05": np.quantile(column, 0.05), f"share >= {MIN_CONGRUENCE}": (column >= MIN_CONGRUENCE).mean()})
    return pd.DataFrame(rows)

