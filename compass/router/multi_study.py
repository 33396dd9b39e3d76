"""Monte Carlo studies of the multi-model meta-router (App. A.2; the paper evaluates none). SYNTHETIC: fresh
`make_multi_data` labels each round, every router fitted on covariates (s, k, ℓ), each routing policy scored by
the true expected gold quality of the models it picks on the test queries, E[q_{π(s)}(s)]. REAL: datasets of
raw.route_labels that share M_p (a star comparison graph), scored on held-out queries graded against every M_a."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from compass.router.evaluation import paired_comparisons
from compass.router.learners import LearnerSpec
from compass.router.multi import PairLabels, fit_multi_router
from compass.router.normalize import scale_constant
from compass.embeddings import DEFAULT_METHOD, embed_queries, fit_features
from compass.router.study import split_labels
from compass.router.synthetic import MultiModelData, make_multi_data

ROUTERS = ("pooled", "preference_only", "gold_only", "meta_dr", "meta_dr_btl")
NOT_DEBIASED = ("preference_only", "pooled")  # learn from the preference labels as they are


class MultiEvaluation(NamedTuple):
    """What the multi-model studies return: per cell and policy the mean quality ± its Monte Carlo standard error
    (`table`), and every learned router paired across rounds against gold-only and against the best (highest mean)
    router that does not debias the preferences in that cell (`comparisons`, `multi_comparisons`)."""

    table: pd.DataFrame
    comparisons: pd.DataFrame


def multi_comparisons(runs: pd.DataFrame, cell: list[str], n_test: int | None = None,
                      n_total: int | None = None) -> pd.DataFrame:
    """Per `cell` (e.g. N and n_gold): each learned router's quality minus gold-only's and minus the best
    non-debiasing router's (`NOT_DEBIASED`, the higher mean in that cell), paired across rounds with 95 %
    t-intervals (`evaluation.paired_comparisons`); with `n_test` of `n_total` rows held out per round (re-splits of
    one data set) the variance is Nadeau & Bengio's corrected s²·(1/k + n_test/(n_total − n_test)); rounds on fresh
    data need no correction. Rows: the cell's keys, router, baseline (a router name), mean_difference, lo, hi, …"""
    learned = runs[runs["policy"].isin(ROUTERS)].rename(columns={"policy": "router", "quality": "mean_gain"})
    if n_test is not None:
        learned = learned.assign(n_test=n_test, n_gold_total=n_total)
    out = []
    for key, part in learned.groupby(cell, sort=False):
        means = part.groupby("router")["mean_gain"].mean().reindex(NOT_DEBIASED).dropna()
        baselines = ("gold_only",) + ((means.idxmax(),) if len(means) else ())
        pairs = paired_comparisons(part.assign(n_gold=0), baselines=baselines)
        if len(pairs):  # a lone router has nothing to be compared with
            pairs = pairs[pairs["baseline"] != "random"].drop(columns="n_gold")
            out.append(pairs.assign(**dict(zip(cell, key if isinstance(key, tuple) else (key,)))))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


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
                             seed: int = 0) -> MultiEvaluation:
    """Per (N, n_gold, policy): mean true quality of the chosen models, its Monte Carlo standard error, and the
    share of test queries sent to their truly best model; paired comparisons on fresh data each round."""
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
    table = (runs.groupby(["n_models", "n_gold", "policy"], sort=False)
             .agg(quality=("quality", "mean"), se=("quality", _standard_error),
                  best_share=("best_share", "mean"), mc_rounds=("quality", "size")).reset_index())
    return MultiEvaluation(table, multi_comparisons(runs, ["n_models", "n_gold"]))


def _standard_error(values: pd.Series) -> float:
    return values.std(ddof=1) / np.sqrt(len(values))


def _pair_records(rows: pd.DataFrame, X: np.ndarray, models: list[str]) -> PairLabels:
    """raw.route_labels rows as pair records: k = M_p's index, ℓ = M_a's, o = the outcome (favours M_p)."""
    index = {m: i for i, m in enumerate(models)}
    return PairLabels(X, rows["model_p"].map(index).to_numpy(int), rows["model_a"].map(index).to_numpy(int),
                      rows["outcome"].to_numpy(float))


def evaluate_multi_real(labels: pd.DataFrame, mc_rounds: int, learner: LearnerSpec, d: int = 50,
                        test_share: float = 0.3, primary_share: float = 0.5,
                        routers: tuple[str, ...] = ("pooled", "preference_only", "gold_only", "meta_dr"),
                        cate_min_leaf: int = 50, seed: int = 0, embedder: str = DEFAULT_METHOD) -> MultiEvaluation:
    """REAL labels (raw.route_labels) of datasets sharing one M_p against different M_a: a star comparison graph.
    The test queries are those with gold labels against every M_a, so each model's gold quality relative to M_p
    is known there (q_a − q_p = −r). Per round: hold out `test_share` of them, train on the other gold rows and
    every preference row (WordLlama + PCA features, compass.embeddings; Remark 1 scaling), and score each policy's
    mean quality relative to always-M_p, at w = 0 (quality only) and at a budget sending `primary_share` of queries
    to M_p (normalized costs C_p = 1, alternatives 0: the rest go to the best-scored alternative). Rounds re-split
    the same test queries, so the paired comparisons carry Nadeau & Bengio's correction."""
    data = split_labels(labels)
    model_p = data.gold["model_p"].unique()
    if len(model_p) != 1:
        raise ValueError(f"a star graph needs one primary model; the gold rows have {sorted(model_p)}")
    alternatives = sorted(data.gold["model_a"].unique())
    models = [str(model_p[0])] + alternatives
    wide = data.gold.pivot_table(index="query_id", columns="model_a", values="outcome").dropna()[alternatives]
    n_test = int(np.ceil(test_share * len(wide)))
    rows = []
    for rnd in range(mc_rounds):
        order = np.random.default_rng(seed + rnd).permutation(len(wide))
        test = wide.iloc[order[:n_test]]
        gold = data.gold[~data.gold["query_id"].isin(test.index)]
        features = fit_features(pd.concat([gold, data.preference]).drop_duplicates("query_id"), d, seed + rnd,
                                embedder)
        X_t = embed_queries(features, data.gold.drop_duplicates("query_id").set_index("query_id").loc[test.index])
        c = scale_constant(gold["outcome"].to_numpy(float), data.preference["outcome"].to_numpy(float))
        pair_g = _pair_records(gold, embed_queries(features, gold), models)
        pair_g = PairLabels(pair_g.X, pair_g.k, pair_g.l, c * pair_g.o)
        pair_p = _pair_records(data.preference, embed_queries(features, data.preference), models)
        quality = np.column_stack([np.zeros(len(test)), -test.to_numpy(float)])  # relative to M_p
        # a constant score: "always m" at w = 0; at the budget, M_p on the first (random) share, m on the rest
        scores = {f"always {m}": np.tile(np.eye(len(models))[i], (len(test), 1)) for i, m in enumerate(models)}
        scores["hindsight"] = quality
        spec = replace(learner, seed=seed + rnd)
        for name in routers:
            scores[name] = fit_named(name, spec, pair_g, pair_p, len(models), cate_min_leaf).scores(X_t)
        for policy, theta in scores.items():
            for budget, choice in (("w = 0", theta.argmax(axis=1)), (f"{primary_share:.0%} to M_p",
                                                                     _at_primary_share(theta, primary_share))):
                if budget != "w = 0" and policy == f"always {models[0]}":
                    continue  # the budget makes it "M_p on a random share, else the first alternative": a repeat
                rows.append({"policy": policy, "budget": budget, "round": rnd,
                             "quality": quality[np.arange(len(choice)), choice].mean(),
                             **{f"share {m}": float((choice == i).mean()) for i, m in enumerate(models)}})
    runs = pd.DataFrame(rows)
    table = runs.groupby(["budget", "policy"], sort=False).agg(
        quality=("quality", "mean"), se=("quality", _standard_error),
        **{f"share {m}": (f"share {m}", "mean") for m in models}).reset_index()
    return MultiEvaluation(table, multi_comparisons(runs, ["budget"], n_test=n_test, n_total=len(wide)))


def _at_primary_share(theta: np.ndarray, share: float) -> np.ndarray:
    """argmax_k θ_k − w·C_k with C = (1, 0, …, 0) and w the quantile that sends `share` of queries to model 0:
    the queries with the largest margin θ_0 − max_{k>0} θ_k go to model 0, the rest to their best alternative."""
    margin = theta[:, 0] - theta[:, 1:].max(axis=1)
    top = np.argsort(-margin, kind="stable")[:int(round(share * len(theta)))]
    choice = 1 + theta[:, 1:].argmax(axis=1)
    choice[top] = 0
    return choice
