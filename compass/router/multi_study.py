"""SYNTHETIC Monte Carlo study of the multi-model meta-router (App. A.2; the paper evaluates none): fresh
`make_multi_data` labels each round, every router fitted on covariates (s, k, ℓ), each routing policy scored by
the true expected gold quality of the models it picks on the test queries, E[q_{π(s)}(s)]."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from compass.router.learners import LearnerSpec
from compass.router.multi import PairLabels, fit_multi_router
from compass.router.normalize import scale_constant
from compass.router.synthetic import MultiModelData, make_multi_data

ROUTERS = ("pooled", "preference_only", "gold_only", "meta_dr", "meta_dr_btl")


def labelled_pairs(data: MultiModelData, c: float = 1.0) -> tuple[PairLabels, PairLabels]:
    """(gold with r scaled by c, preference) as pair records."""
    return (PairLabels(data.X_g, data.k_g, data.l_g, c * data.r), PairLabels(data.X_p, data.k_p, data.l_p, data.y))


def fit_named(name: str, spec: LearnerSpec, gold: PairLabels, pref: PairLabels, n_models: int,
              cate_min_leaf: int):
    """`meta_dr_btl` is meta_dr with the BTL preference model; meta-routers get the smoother CATE learner."""
    meta = {"cate": replace(spec, min_samples_leaf=cate_min_leaf)} if name.startswith("meta") else {}
    base, eta = ("meta_dr", "btl") if name == "meta_dr_btl" else (name, "forest")
    return fit_multi_router(base, spec, gold, pref, n_models, eta=eta, **meta)


def policy_choices(data: MultiModelData, routers: tuple[str, ...], spec: LearnerSpec,
                   cate_min_leaf: int = 50) -> dict[str, np.ndarray]:
    """Chosen model per test query (w = 0: quality only) for the ceiling `true_best`, the hindsight
    `best_single` model and every router; gold scale-normalized to the preferences (Remark 1)."""
    n_models = data.quality_test.shape[1]
    gold, pref = labelled_pairs(data, scale_constant(data.r, data.y))
    out = {"true_best": data.quality_test.argmax(axis=1),
           "best_single": np.full(len(data.X_test), int(data.quality_test.mean(axis=0).argmax()))}
    for name in routers:
        out[name] = fit_named(name, spec, gold, pref, n_models, cate_min_leaf).route(data.X_test)
    return out


def evaluate_multi_synthetic(n_models: tuple[int, ...], n_gold: tuple[int, ...], mc_rounds: int,
                             learner: LearnerSpec, n_pref: int = 3000, judge_bias: float = 1.0,
                             routers: tuple[str, ...] = ROUTERS, cate_min_leaf: int = 50,
                             seed: int = 0) -> pd.DataFrame:
    """Per (N, n_gold, policy): mean true quality of the chosen models, its Monte Carlo standard error, and the
    share of test queries sent to their truly best model."""
    rows = []
    for n in n_models:
        for size in n_gold:
            for rnd in range(mc_rounds):
                data = make_multi_data(n, size, n_pref=n_pref, seed=seed + rnd, judge_bias=judge_bias)
                picks = policy_choices(data, routers, replace(learner, seed=seed + rnd), cate_min_leaf)
                best = data.quality_test.argmax(axis=1)
                for policy, choice in picks.items():
                    quality = data.quality_test[np.arange(len(choice)), choice].mean()
                    rows.append({"n_models": n, "n_gold": size, "policy": policy, "round": rnd,
                                 "quality": quality, "best_share": float((choice == best).mean())})
    runs = pd.DataFrame(rows)
    return (runs.groupby(["n_models", "n_gold", "policy"], sort=False)
            .agg(quality=("quality", "mean"), se=("quality", lambda v: v.std(ddof=1) / np.sqrt(len(v))),
                 best_share=("best_share", "mean"), mc_rounds=("quality", "size")).reset_index())
