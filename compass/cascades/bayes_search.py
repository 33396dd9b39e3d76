"""Batched Bayesian optimization of cascade thresholds (thesis seed 001, §2.4's BO baseline), on the maintained
`bayes_opt` package. Its own module so that importing compass.cascades (every CLI command, every asset module) does
not load bayes_opt (~0.35 s of every start; its scipy and scikit-learn load anyway);
compass.cascades.baselines.bayes_opt_curve imports it when BO runs.
"""

from __future__ import annotations

import numpy as np
from bayes_opt import BayesianOptimization
from bayes_opt.acquisition import ConstantLiar, ExpectedImprovement


class _BatchLiar(ConstantLiar):
    """ConstantLiar batch acquisition with a cheaper inner search than bayes_opt's defaults.

    bayes_opt maximises the acquisition from 10,000 random points plus 10
    L-BFGS-B restarts with finite-difference gradients, which dominates the BO
    runtime here; ``n_random``/``n_smart`` are fixed per instance instead.
    """

    def __init__(self, n_random: int, n_smart: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self._n_random, self._n_smart = n_random, n_smart

    def suggest(self, gp, target_space, n_random=None, n_smart=None, fit_gp=True, random_state=None):  # noqa: D102
        return super().suggest(
            gp, target_space, n_random=self._n_random, n_smart=self._n_smart, fit_gp=fit_gp, random_state=random_state
        )



def bo_minimize(
    loss,
    pbounds: dict[str, tuple[float, float]],
    tol: float,
    batch_size: int,
    min_iter: int,
    max_iter: int,
    seed: int,
    n_random: int,
    n_smart: int,
) -> tuple[list[float], int]:
    """Minimise ``loss`` ((m, d) thresholds -> (m,) losses) by batched GP-EI.

    Stops once at least ``min_iter`` iterations ran and the best loss moved by less than ``tol``.
    """
    names = list(pbounds)
    opt = BayesianOptimization(
        f=None,
        pbounds=pbounds,
        acquisition_function=_BatchLiar(n_random, n_smart, base_acquisition=ExpectedImprovement(xi=0.01), strategy="max"),
        random_state=seed,
        verbose=0,
        # ConstantLiar registers its pending "lies" in a copy of the space, where two
        # coinciding suggestions must not raise; real duplicates are skipped below.
        allow_duplicate_points=True,
    )
    best_prev = np.inf
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        batch = [opt.suggest() for _ in range(batch_size)]
        values = loss(np.array([[b[nm] for nm in names] for b in batch]))
        for b, v in zip(batch, values):
            if opt.space.params_to_array(b) not in opt.space:  # a re-suggested point adds no information
                opt.register(params=b, target=-float(v))
        best = -opt.max["target"]
        if n_iter >= min_iter and abs(best_prev - best) < tol:
            break
        best_prev = best
    return [opt.max["params"][nm] for nm in names], n_iter
