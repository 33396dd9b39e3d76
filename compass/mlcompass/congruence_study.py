"""Is a measure still its namesake after a refresh? A simulation of Tucker's phi in and out of sample (issue 42).

A refresh rotates the refit toward the previous loadings (`factor_alignment.target_rotation`, oblique
Procrustes) and keeps a measure's identity while phi >= 0.95. Phi over the benchmarks the rotation was fitted to
is what the rotation maximizes, an optimistic estimate; `held_out_rotation` predicts each benchmark's loadings
from a rotation fitted without it. Catalogs are drawn from given true loadings (2 oblique factors, correlation
0.5, n = 162 models as on the frontier board unless told, standardized, complete) and refitted against the
previous loadings (the truth), in worlds:

* same: new data from the same structure (a refresh must keep the measures);
* swap1, swap2, swap3, swap: 1, 2, 3 or half of the benchmarks have their two loadings exchanged between the
  factors (on a benchmark that loads about equally on both, a swap changes little);
* rotate45: one factor's loadings turned by 45 degrees out of the old factors' span (toward a random direction
  orthogonal to both loading vectors, length kept), so no rotation of the new fit can undo it;
* one_factor: the data have one factor only (the second measure no longer exists);
* random: unrelated loadings, uniform(0.2, 0.9), each zeroed with probability 0.3.

A simulation knows how much a world changed each measure. Its *true* phi is Tucker's phi of each factor's world
loadings with its previous ones (both as loadings of the standardized catalog, no noise, no rotation: the factors
keep their labels). Its *noise-free* phi is the pipeline's in-sample phi on those exact loadings (the refit
without sampling error, `rotate_toward`): a world whose loadings are close to a rotation of the old ones (half the
benchmarks swapped can come near the two factors trading places) has a low true phi, but no data can tell it from
the old structure. A draw is a *changed* structure when even its noise-free phi is < MIN_CONGRUENCE (no rotation
of the new structure reproduces the old pattern), *unchanged* when its true phi is >= MIN_CONGRUENCE, and neither
otherwise; each estimate is judged by how often the pipeline, deciding with it, keeps a changed structure and
renews an unchanged one.

Synthetic data, for this study and its tests (scripts/mlcompass_congruence_bias.py prints the table).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from compass.mlcompass.factor_alignment import MIN_CONGRUENCE, congruence_with, tucker_congruence
from compass.mlcompass.measures import correlation, fit_minres, promax_pattern, rotate_toward

N_MODELS, FACTOR_CORRELATION, THRESHOLD, PER_VARIABLE = 162, 0.5, 0.3, 2
WORLDS = ("same", "swap1", "swap2", "swap3", "swap", "rotate45", "one_factor", "random")

#: frontier_api's loadings as published when the study was first written (rounded), the default truth; the
#: current ones can differ (scripts/mlcompass_congruence_bias.py --db reads them).
FRONTIER_LOADINGS = pd.DataFrame(
    {"C1": [0.66, 0.66, 0.49, 0.63, 0.59, 0.86, 0.0, 0.0, 0.56, 0.62, 0.52, 0.0],
     "C2": [0.34, 0.34, 0.47, 0.35, 0.36, 0.0, 0.98, 0.71, 0.44, 0.39, 0.49, 0.86]},
    index=pd.Index(["frontiermath_tier_4_v2", "frontiermath_v2", "gpqa_diamond", "livebench_agentic_coding",
                    "livebench_coding", "livebench_data_analysis", "livebench_if", "livebench_language",
                    "livebench_mathematics", "livebench_reasoning", "lmarena_english", "simpleqa_verified"],
                   name="benchmark"),
)


def world(truth: pd.DataFrame, name: str, rng: np.random.Generator) -> np.ndarray:
    """The loadings the new catalog is drawn from."""
    lam = truth.to_numpy(float).copy()
    if name.startswith("swap"):
        some = rng.choice(len(lam), int(name[4:]) if name[4:] else len(lam) // 2, replace=False)
        lam[some] = lam[some][:, ::-1]
    elif name == "rotate45":
        f = rng.integers(lam.shape[1])
        span, _ = np.linalg.qr(lam)
        u = rng.standard_normal(len(lam))
        u -= span @ (span.T @ u)
        u *= np.linalg.norm(lam[:, f]) / np.linalg.norm(u)
        lam[:, f] = np.cos(np.pi / 4) * lam[:, f] + np.sin(np.pi / 4) * u
    elif name == "one_factor":
        lam = np.column_stack([np.sqrt((lam ** 2).sum(axis=1).clip(0, 0.9)), np.zeros(len(lam))])
    elif name == "random":
        lam = rng.uniform(0.2, 0.9, lam.shape) * (rng.random(lam.shape) > 0.3)
    return lam


def _unique_sd(lam: np.ndarray) -> np.ndarray:
    """Each benchmark's unique sd in `draw`: sqrt(1 - communality), floored at sqrt(0.05) (Heywood guard)."""
    phi = np.array([[1.0, FACTOR_CORRELATION], [FACTOR_CORRELATION, 1.0]])
    return np.sqrt(np.clip(1.0 - (lam @ phi * lam).sum(axis=1), 0.05, None))


def standardized_loadings(lam: np.ndarray) -> np.ndarray:
    """The loadings of `draw`'s catalog once each benchmark is standardized: lam_j / sd_j."""
    phi = np.array([[1.0, FACTOR_CORRELATION], [FACTOR_CORRELATION, 1.0]])
    return lam / np.sqrt((lam @ phi * lam).sum(axis=1) + _unique_sd(lam) ** 2)[:, None]


def true_congruence(lam: np.ndarray, truth: pd.DataFrame) -> float:
    """The smaller of the measures' true phi: Tucker's phi of each factor's world loadings with its previous ones
    (standardized, no noise, no rotation fitted)."""
    new, old = standardized_loadings(lam), standardized_loadings(truth.to_numpy(float))
    return float(np.diag(tucker_congruence(new, old)).min())


def noise_free_congruence(lam: np.ndarray, truth: pd.DataFrame) -> float:
    """The smaller of the measures' in-sample phi when the refit is exact: the world's standardized loadings
    rotated toward `truth` (`rotate_toward`, sparsified like the pipeline)."""
    exact = pd.DataFrame(standardized_loadings(lam), index=truth.index)
    return float(rotate_toward(exact, truth, THRESHOLD, PER_VARIABLE).in_sample.min())


def draw(lam: np.ndarray, rng: np.random.Generator, n_models: int = N_MODELS) -> np.ndarray:
    """A complete catalog X = F lam' + e (n_models rows), factors correlated FACTOR_CORRELATION."""
    phi = np.array([[1.0, FACTOR_CORRELATION], [FACTOR_CORRELATION, 1.0]])
    f = rng.multivariate_normal(np.zeros(2), phi, size=n_models)
    return f @ lam.T + rng.standard_normal((n_models, len(lam))) * _unique_sd(lam)


def congruences(x: np.ndarray, previous: pd.DataFrame) -> tuple[float, float, float]:
    """(in sample, out of sample, promax): the smaller measure's phi of the refit rotated toward `previous`, as
    `measures._oriented_pattern` computes them (`measures.rotate_toward`; no anchors: signs follow the rotation),
    and of the promax refit matched to `previous` (`measures.promax_pattern`), which the pipeline falls back to
    when the rotation's phi is below MIN_CONGRUENCE and which then decides which identities are kept."""
    corr = correlation(x)
    unrotated = pd.DataFrame(fit_minres(corr, 2, None).loadings_, index=previous.index)
    toward = rotate_toward(unrotated, previous, THRESHOLD, PER_VARIABLE)
    promax, _ = promax_pattern(corr, previous.index, 2, THRESHOLD, PER_VARIABLE, previous, None)
    return (float(toward.in_sample.min()), float(toward.out_of_sample.min()),
            float(congruence_with(promax, previous).min()))


def draws(truth: pd.DataFrame, name: str, seeds: int, n_models: int = N_MODELS) -> pd.DataFrame:
    """One row per seed 0..seeds-1: the world's true and noise-free phi, and the refit's phi in sample, out of
    sample and of the promax fallback (smaller measure each)."""
    rows = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        lam = world(truth, name, rng)
        rows.append((true_congruence(lam, truth), noise_free_congruence(lam, truth),
                     *congruences(draw(lam, rng, n_models), truth)))
    return pd.DataFrame(rows, columns=["true", "noise-free", "in sample", "out of sample", "promax"])


def study(truth: pd.DataFrame, seeds: int, n_models: int = N_MODELS) -> pd.DataFrame:
    """Per world, over `seeds` catalogs, the smaller measure's phi (what keeps both identities): median, 5th
    percentile and share >= MIN_CONGRUENCE of the true, noise-free, in-sample (the published pattern's) and
    out-of-sample (the check's) phi; the numbers of changed and unchanged draws (module docstring); and for the two
    estimates, the pipeline's decision with that estimate (the rotation is kept when its phi passes, else the promax
    fallback keeps both measures when its phi passes): the share of changed draws that keep both identities, and
    of unchanged draws that renew one (NaN where a world has none)."""
    rows = []
    for name in WORLDS:
        d = draws(truth, name, seeds, n_models)
        changed = d["noise-free"] < MIN_CONGRUENCE
        unchanged = (d["true"] >= MIN_CONGRUENCE) & ~changed
        for where in ("true", "noise-free", "in sample", "out of sample"):
            keep = (d[where] >= MIN_CONGRUENCE) | (d["promax"] >= MIN_CONGRUENCE)
            estimate = where in ("in sample", "out of sample")
            rows.append({"world": name, "phi": where, "median": d[where].median(), "p05": d[where].quantile(0.05),
                         "share >= 0.95": (d[where] >= MIN_CONGRUENCE).mean(), "changed": int(changed.sum()),
                         "unchanged": int(unchanged.sum()),
                         "keeps changed": keep[changed].mean() if estimate and changed.any() else np.nan,
                         "renews unchanged": (~keep[unchanged]).mean() if estimate and unchanged.any() else np.nan})
    return pd.DataFrame(rows)
