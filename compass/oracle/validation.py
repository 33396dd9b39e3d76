"""Synthetic validation of the oracle estimators, bias decay, and topic-entropy uplift.

Seed paper 002: estimators are checked against the known true oracle (eq. 4) on
data drawn from the §4.3.2 PGM (`compass.oracle.synthetic`, Appendix G defaults),
as the paper prescribes in §4.3.1 "Limitations" and §7. All numbers produced here
are synthetic.

* `validation_study`   bias and RMSE of every estimator over a G × L grid; the
                       recommended estimator is picked by `recommend`.
* `bias_decay_study`   Fig. 2 / Appendix A: exact O_biased(G) − p for identical
                       p across L models (eq. 10) and the fitted exponent λ of
                       bias ≈ a G^−λ (eq. 25 with c → the exponent).
* `entropy_uplift_study`  Fig. 5 / Appendix G: uplift (eq. 26) vs topic entropy
                       (eq. 27) as the Dirichlet concentration is swept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit
from scipy.stats import binom

from compass.oracle.estimators import ESTIMATORS, get_estimator
from compass.oracle.records import build_arrays
from compass.oracle.synthetic import generate, generate_counts

LIGHT = {"generations": (1, 2, 5, 10), "n_models": (2, 5, 10, 20), "n_prompts": 200, "n_reps": 2}
HEAVY = {"generations": (1, 2, 5, 10), "n_models": (2, 5, 10, 20), "n_prompts": 1000, "n_reps": 10}


def validation_study(
    generations: Sequence[int] = LIGHT["generations"],
    n_models: Sequence[int] = LIGHT["n_models"],
    n_prompts: int = LIGHT["n_prompts"],
    n_reps: int = LIGHT["n_reps"],
    estimators: Sequence[str] | None = None,
    include_pgm: bool = False,
    seed: int = 0,
) -> pd.DataFrame:
    """Bias/RMSE of each estimator vs the true oracle on synthetic PGM data.

    Returns DataFrame[scenario, n_prompts, n_models, generations, estimator,
    true_oracle, estimate, bias, rmse]; `true_oracle` and `estimate` are means
    over `n_reps` seeded replicates, bias = mean(estimate − truth), rmse over
    replicates. Estimators that cannot run at a grid point (e.g. extrapolation
    with G = 1) give NaN there. `include_pgm` adds the §4.3.2 PGM (eq. 18), slow.
    """
    names = list(ESTIMATORS) if estimators is None else list(estimators)
    fns = {n: get_estimator(n) for n in names}
    if include_pgm:
        from compass.oracle.pgm import fit_pgm, pgm_oracle

        fns["pgm"] = lambda a: (pgm_oracle(fit_pgm(a.successes, a.trials)), float("nan"))
    rows = []
    for g in generations:
        for l in n_models:
            scenario = f"G{g}_L{l}"
            errs: dict[str, list[float]] = {n: [] for n in fns}
            truths = []
            for r in range(n_reps):
                data = generate(n_prompts, l, g, seed=seed + 1000 * r + 17 * g + l)
                arrays = build_arrays(data.records, dataset=scenario)
                truths.append(data.true_oracle)
                for name, fn in fns.items():
                    errs[name].append(fn(arrays)[0] - data.true_oracle)
            truth = float(np.mean(truths))
            for name, e in errs.items():
                e_arr = np.asarray(e, dtype=float)
                rows.append((scenario, n_prompts, l, g, name, truth, truth + float(np.mean(e_arr)),
                             float(np.mean(e_arr)), float(np.sqrt(np.mean(e_arr**2)))))
    return pd.DataFrame(rows, columns=["scenario", "n_prompts", "n_models", "generations", "estimator",
                                       "true_oracle", "estimate", "bias", "rmse"])


def recommend(study: pd.DataFrame, baseline: str = "naive") -> str:
    """The estimator with the lowest mean RMSE over G ≥ 2 among those meeting the selection rule.

    Rule: mean |bias| over G ≥ 2 at most 1/3 of the baseline's, and RMSE never
    above the baseline's at any grid point with G ≥ 5. ValueError if none qualifies.
    """
    sub = study[study["generations"] >= 2]
    mae = sub.assign(abs_bias=sub["bias"].abs()).groupby("estimator")["abs_bias"].mean()
    big = study[study["generations"] >= 5].pivot_table(index="scenario", columns="estimator", values="rmse")
    ok = [
        e for e in mae.index
        if e != baseline and np.isfinite(mae[e]) and mae[e] <= mae[baseline] / 3.0
        and bool((big[e] <= big[baseline]).all())
    ]
    if not ok:
        raise ValueError(f"no estimator meets the recommendation rule against {baseline!r}")
    return str(sub[sub["estimator"].isin(ok)].groupby("estimator")["rmse"].mean().idxmin())


def expected_biased_identical(p: float, n_models: int, generations: int) -> float:
    """Eq. 10 per prompt: E[max_l Y_l / G] for L i.i.d. Binomial(G, p), exactly."""
    j = np.arange(generations)
    return float(np.sum(1.0 - binom.cdf(j, generations, p) ** n_models) / generations)


def bias_decay_study(
    n_models: Sequence[int] = (2, 10),
    p_values: Sequence[float] = (0.1, 0.3, 0.5, 0.7, 0.9),
    g_max: int = 500,
    g_fit_min: int = 50,
) -> pd.DataFrame:
    """Fig. 2: fit bias(G) = a G^−λ for G in [g_fit_min, g_max] to the exact eq. 10 bias.

    Returns DataFrame[n_models, p, lam, a, bias_g1, bias_g10]. The paper reports
    λ ≈ 0.5 once G ≳ 50 (§4.2.1, Appendix A).
    """
    rows = []
    gs = np.arange(g_fit_min, g_max + 1, max(1, (g_max - g_fit_min) // 40))
    for l in n_models:
        for p in p_values:
            bias = np.array([expected_biased_identical(p, l, int(g)) - p for g in gs])
            (a, lam), _ = curve_fit(lambda x, a, lam: a * np.power(x, -lam), gs, bias, p0=[bias[0] * gs[0] ** 0.5, 0.5])
            rows.append((l, p, float(lam), float(a), expected_biased_identical(p, l, 1) - p,
                         expected_biased_identical(p, l, 10) - p))
    return pd.DataFrame(rows, columns=["n_models", "p", "lam", "a", "bias_g1", "bias_g10"])


def _entropy(weights: np.ndarray) -> float:
    """Eq. 27, H = −Σ w log w over the normalized weights (0 log 0 = 0)."""
    w = np.asarray(weights, dtype=float)
    w = w[w > 0] / w.sum()
    return max(0.0, float(-(w * np.log(w)).sum()))


def entropy_uplift_study(
    n_steps: int = 8,
    n_prompts: int = 1000,
    n_models: int = 10,
    n_topics: int = 30,
    n_reps: int = 3,
    seed: int = 0,
) -> pd.DataFrame:
    """Fig. 5 / Appendix G: oracle uplift (eq. 26) vs topic entropy (eq. 27).

    The topic weights w are interpolated linearly from uniform (1/K each, high
    entropy) to a single topic (Appendix G) and H(w) is eq. 27. The paper writes
    T_n ~ Dirichlet(w) yet plots H(w); a Dirichlet with total concentration 1 is
    itself sparse, so we read w as the topic distribution: θ ≈ w via a Dirichlet
    with concentration 1e6·w (+1e-6 to stay positive). Uplift uses the true
    probabilities (the G → ∞ limit of eq. 26): mean_n max_l p_nl − max_l mean_n p_nl,
    averaged over `n_reps` seeds. Returns DataFrame[step, entropy, topic_entropy,
    true_oracle, best_single, uplift] (`topic_entropy` is that of the realized
    topic frequencies).
    """
    uniform = np.full(n_topics, 1.0 / n_topics)
    single = np.zeros(n_topics)
    single[0] = 1.0
    rows = []
    for i, t in enumerate(np.linspace(0.0, 1.0, n_steps)):
        w = (1.0 - t) * uniform + t * single
        stats = []
        for r in range(n_reps):
            data = generate_counts(n_prompts, n_models, 1, n_topics=n_topics,
                                   dirichlet_alpha=1e6 * w + 1e-6, seed=seed + 7919 * r + i)
            best = float(data.true_p.mean(axis=0).max())
            stats.append((_entropy(np.bincount(data.topics, minlength=n_topics)), data.true_oracle, best,
                          data.true_oracle - best))
        rows.append((i, _entropy(w), *np.mean(stats, axis=0)))
    return pd.DataFrame(rows, columns=["step", "entropy", "topic_entropy", "true_oracle", "best_single", "uplift"])


def recommendation_evidence(study: pd.DataFrame, estimator: str, baseline: str = "naive") -> dict[str, float]:
    """How strongly the study supports `estimator` (§4.3.2): mean |bias| over G ≥ 2 vs the baseline's, worst RMSE ratio at G ≥ 5."""
    sub = study[study["generations"] >= 2]
    mae = sub.assign(a=sub["bias"].abs()).groupby("estimator")["a"].mean()
    big = study[study["generations"] >= 5].pivot_table(index="scenario", columns="estimator", values="rmse")
    return {
        f"mae_{estimator}_g2plus": float(mae[estimator]), f"mae_{baseline}_g2plus": float(mae[baseline]),
        "mae_ratio": float(mae[estimator] / mae[baseline]),
        "max_rmse_ratio_g5plus": float((big[estimator] / big[baseline]).max()),
    }


