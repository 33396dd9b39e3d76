"""Cross-fitted (split-sample) oracle: select on some data, score on held-out data.

Not in seed paper 002; it is the standard remedy for the optimizer's curse the
paper cites in §2 (Smith & Winkler, 2006; Andrews et al., 2024), used here as a
debiased counterpart of eq. 5. Because the held-out score is independent of the
selection, E[score] = E[p_{n, picked}] ≤ max_l p_nl: the estimator is biased
*low*, the mirror image of the naive oracle's upward bias.

G ≥ 2 — leave-one-generation-out: for each held-out generation h, pick per
prompt on the mean of the other G−1 generations (quality and cost), score the
pick on generation h; average over h. This equals the exact expectation over a
uniformly random leave-one-out split and uses the largest selection sample, so
its downward bias is the smallest any split can give. With unequal G_l, model l
holds out generation h mod G_l.

G = 1 — nothing is left to hold out inside a cell, so the split runs across
prompts: prompts are halved at random (seeded); each half is routed by the
per-topic model means of the other half (a topic router; without topics, the
best single model). This is much lower than the per-prompt oracle and is a
floor, not an estimate of it.
"""

from __future__ import annotations

import numpy as np

from compass.oracle.frontier import Fold, sweep
from compass.oracle.records import OracleArrays


def split_sample_folds(arrays: OracleArrays, seed: int = 0) -> list[Fold]:
    """Cross-fitting folds (select_quality, select_cost, eval_quality, eval_cost)."""
    if arrays.min_generations >= 2:
        return _leave_one_generation_out(arrays)
    return [_prompt_halves(arrays, seed)]


def split_sample_oracle(arrays: OracleArrays, seed: int = 0) -> tuple[float, float]:
    """Cross-fitted oracle quality and cost at α = 1."""
    row = sweep(split_sample_folds(arrays, seed), np.array([1.0])).iloc[0]
    return float(row["quality"]), float(row["cost"])


def _leave_one_generation_out(arrays: OracleArrays) -> list[Fold]:
    g = arrays.generations
    outcomes, gen_cost = arrays.per_generation("split-sample (leave one generation out)")
    total_q = np.nansum(outcomes, axis=2)
    total_c = np.nansum(gen_cost, axis=2)
    folds = []
    for h in range(int(g.max())):
        idx = (h % g)[None, :, None]
        x_h = np.take_along_axis(outcomes, np.broadcast_to(idx, outcomes.shape[:2] + (1,)), axis=2)[..., 0]
        c_h = np.take_along_axis(gen_cost, np.broadcast_to(idx, gen_cost.shape[:2] + (1,)), axis=2)[..., 0]
        folds.append(((total_q - x_h) / (g - 1), (total_c - c_h) / (g - 1), x_h, c_h))
    return folds


def _prompt_halves(arrays: OracleArrays, seed: int) -> Fold:
    n = arrays.n_prompts
    if n < 2:
        raise ValueError("split-sample with G = 1 needs at least 2 prompts")
    rng = np.random.default_rng(seed)
    half = np.zeros(n, dtype=bool)
    half[rng.permutation(n)[: n // 2]] = True
    topics = np.zeros(n, dtype=int) if arrays.topics is None else np.unique(arrays.topics.astype(str), return_inverse=True)[1]
    p, c = arrays.p_hat, arrays.cell_cost
    sel_q = np.empty_like(p)
    sel_c = np.empty_like(c)
    for fit in (half, ~half):
        apply = ~fit
        glob_q, glob_c = p[fit].mean(axis=0), c[fit].mean(axis=0)
        for t in np.unique(topics[apply]):
            src = fit & (topics == t)
            dst = apply & (topics == t)
            sel_q[dst] = p[src].mean(axis=0) if src.any() else glob_q
            sel_c[dst] = c[src].mean(axis=0) if src.any() else glob_c
    return sel_q, sel_c, p, c
