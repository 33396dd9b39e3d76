"""The paper's ablations (seed 003 §4.1 "Ablation Studies"; spec §3.3) on the SYNTHETIC generator (spec §4), each
"changing one key element in our main numerical experiments while keeping other settings unchanged", and read as
the ablated router minus the same router of the main configuration, paired over rounds on the same draws:

* (i)   H = XGBoost (Fig. 2): LightGBM here, the same data.
* (iii) no normalization of the gold labels by Remark 1(2) (Fig. S4). The paper's gold labels are rubric point
        differences against {−1, 0, 1} preferences; the generator's gold labels are already on the preferences'
        scale (c ≈ 0.8), so this ablation's world has the same draw with gold labels in rubric points
        (`synthetic.RUBRIC_POINTS` per unit of ψ) and skips the normalization. Normalizing that world would give the
        main configuration's labels c·r exactly, so the pair isolates the normalization.
* (iv)  d = 100 instead of 50 for the PCA of the same embedding (Fig. S3): every configuration sees a raw embedding
        of 2D coordinates (the generator's D, then D extra ones, `synthetic.query_embedding`); the main
        configuration keeps the leading D (its features are the generator's, unchanged), (iv) all 2D.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import pandas as pd

from compass.router.learners import LearnerSpec
from compass.router.study import ablation_differences, evaluate_synthetic, synthetic_comparisons
from compass.router.synthetic import RUBRIC_POINTS, World


@dataclass(frozen=True)
class Configuration:
    """One arm of the ablation study: the learner class H, the normalization of Remark 1, the gold labels' units
    per unit of ψ, and the kept embedding dimension as a multiple of the generator's D."""

    learner: str = "random_forest"
    normalization: str = "variance"
    gold_points: float = 1.0
    dim_factor: int = 1

    def world(self, D: int) -> World:
        """Raw embedding of 2D coordinates for every arm (so (iv)'s extra coordinates exist in main's draw too),
        reduced to dim_factor·D."""
        return World(gold_points=self.gold_points, embedding_dim=2 * D, d=self.dim_factor * D)


MAIN = Configuration()
ABLATIONS = {"i_lightgbm": Configuration(learner="lightgbm"),
             "iii_none": Configuration(normalization="none", gold_points=RUBRIC_POINTS),
             "iv_d100": Configuration(dim_factor=2)}


class AblationStudy(NamedTuple):
    """rounds: configuration, preset, router, n_gold, round, mean_gain; comparisons: every router against random,
    gold-only and preference-only per configuration; differences: each ablated router minus the main one."""

    rounds: pd.DataFrame
    comparisons: pd.DataFrame
    differences: pd.DataFrame


def run_configuration(config: Configuration, presets: tuple[str, ...], n_gold: tuple[int, ...], mc_rounds: int,
                      n_estimators: int, N: int, D: int, routers: tuple[str, ...], seed: int = 0,
                      boosting_rounds: int | None = None) -> pd.DataFrame:
    """One arm's rounds (`evaluate_synthetic`) on the seeds every arm shares: any two arms run with the same
    arguments pair round by round."""
    learner = LearnerSpec(config.learner, n_estimators=n_estimators, seed=seed)
    if config.learner == "lightgbm" and boosting_rounds:
        learner = replace(learner, n_estimators=boosting_rounds)
    return evaluate_synthetic(presets, n_gold, mc_rounds, learner, N=N, D=D, normalization=config.normalization,
                              seed=seed, routers=routers, world=config.world(D)).rounds


def run_ablations(presets: tuple[str, ...], n_gold: tuple[int, ...], mc_rounds: int, n_estimators: int, N: int, D: int,
                  routers: tuple[str, ...], ablations: tuple[str, ...] = tuple(ABLATIONS), seed: int = 0,
                  boosting_rounds: int | None = None,
                  progress: Callable[[str, pd.DataFrame], None] | None = None) -> AblationStudy:
    """The main configuration and each named ablation on the same seeds (so the same draws), then the paired
    differences (`study.ablation_differences`). `boosting_rounds` sets (i)'s LightGBM rounds (default
    n_estimators: a 25-round booster is far from the paper's library defaults). `progress(tag, rounds)` after each
    configuration, main first, then the ablations in the order given."""
    unknown = sorted(set(ablations) - set(ABLATIONS))
    if unknown:
        raise ValueError(f"ablations: unknown {unknown}; choose from {sorted(ABLATIONS)}")
    runs = {}
    for tag, config in {"main": MAIN, **{a: ABLATIONS[a] for a in ablations}}.items():
        runs[tag] = run_configuration(config, presets, n_gold, mc_rounds, n_estimators, N, D, routers, seed,
                                      boosting_rounds)
        if progress is not None:
            progress(tag, runs[tag])
    rounds = pd.concat([r.assign(configuration=tag) for tag, r in runs.items()], ignore_index=True)
    comparisons = pd.concat([synthetic_comparisons(r).assign(configuration=tag) for tag, r in runs.items()],
                            ignore_index=True)
    differences = pd.concat([ablation_differences(runs["main"], runs[a]).assign(ablation=a) for a in ablations],
                            ignore_index=True)
    return AblationStudy(rounds, comparisons, differences)
