"""The meta-router's evaluation protocol (seed 003 §4.1, spec §3.2) on labelled data in canonical form
(raw.route_labels: one model pair per dataset, gold rows with r, preference rows with y).

The paper's Monte Carlo rounds are random re-splits of its labelled data: here each round holds out a share of
the gold rows as the test set (the only rows whose gold gain is known), draws n gold training rows from the
rest (nested over n), fits the embedder and the scale constant c on the training rows (spec §2.1, Remark 1),
fits every router, and scores its efficiency gain on the test rows at fixed primary-model usage ratios (§3.4),
in the gold label's own units per query. Rounds are averaged at fixed PMUR (spec §5.10).
"""

from __future__ import annotations

import json

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold

from compass.embeddings import DEFAULT_METHOD, Embedder, embed_queries, fit_features
from compass.router.decision import choose_w, route_to_primary
from compass.router.evaluation import PMUR_GRID, efficiency_gain, interior_mean, paired_comparisons
from compass.router.export import forest_nodes
from compass.router.learners import LearnerSpec
from compass.router.normalize import scale_constant
from compass.router.routers import OVERLAP_RATIO, fit_cv_router, fit_router, overlap_region
from compass.router.synthetic import World, make_data

REAL_ROUTERS = ("pooled", "preference_only", "gold_only", "mean_shift", "meta_r", "meta_dr", "routellm_mf",
                "routellm_sw", "meta_dr_overlap")
MIN_GOLD_TRAIN = 10  # gold training rows below which the scale constant and the forests are meaningless
BUDGET_SHARES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class StudyDesign:
    n_gold: tuple[int, ...] = (50, 100, 200)  # gold training sizes (capped by the gold rows left after the test split)
    mc_rounds: int = 3  # the paper: 200
    test_share: float = 0.3  # of the gold rows, held out as the test set in each round
    d: int = 50  # embedding dimension after the reduction (spec §2.9)
    routers: tuple[str, ...] = REAL_ROUTERS
    learner: LearnerSpec = field(default_factory=LearnerSpec)
    cate_min_leaf: int = 50  # smoother CATE learner at small n (spec §5.1)
    normalization: str = "variance"
    seed: int = 0
    embedder: str = DEFAULT_METHOD  # query text embedding: "wordllama" or "tfidf" (compass.embeddings)


@dataclass(frozen=True)
class Split:
    gold: pd.DataFrame
    preference: pd.DataFrame


def split_labels(labels: pd.DataFrame) -> Split:
    """Gold and preference rows of one dataset (raw.route_labels columns)."""
    kind = labels["label_kind"]
    return Split(labels[kind == "gold"].reset_index(drop=True), labels[kind == "preference"].reset_index(drop=True))


def _cate_kwargs(name: str, design: StudyDesign, seed: int) -> dict:
    """A meta-router's smoother CATE learner; meta_cv also refits the scale constant within its folds."""
    if not name.startswith("meta"):
        return {}
    cate = replace(design.learner, min_samples_leaf=design.cate_min_leaf, seed=seed, params={})
    return {"cate": cate, **({"normalization": design.normalization} if name == "meta_cv" else {})}


class Evaluation(NamedTuple):
    """What `evaluate` returns: router.evaluation's rows (no `dataset`), the last round's test-set predictions at
    the largest n ({"psi": {router: ψ̂}, "test": gold test rows}, for the policy table) and one row per
    (router, n_gold, round) with the round's mean gain over the usage grid (for paired comparisons)."""

    table: pd.DataFrame
    last: dict
    rounds: pd.DataFrame


def evaluate(labels: pd.DataFrame, design: StudyDesign,
             progress: Callable[[int, int], None] | None = None) -> Evaluation:
    """Efficiency gain per (router, n_gold, PMUR), mean and standard error over Monte Carlo rounds."""
    data = split_labels(labels)
    n_test = int(np.ceil(design.test_share * len(data.gold)))
    sizes = sorted({min(n, len(data.gold) - n_test) for n in design.n_gold})
    if sizes[0] < MIN_GOLD_TRAIN:
        raise ValueError(f"{len(data.gold)} gold rows leave {sizes[0]} for training after holding out {n_test} for the "
                         f"test set; the protocol needs at least {MIN_GOLD_TRAIN} (add gold rows or lower n_gold)")
    gains: dict[tuple[str, int], list[np.ndarray]] = {}
    last: dict = {}
    steps, done = design.mc_rounds * len(sizes), 0
    for rnd in range(design.mc_rounds):
        seed = design.seed + rnd
        order = np.random.default_rng(seed).permutation(len(data.gold))
        test, pool = data.gold.iloc[order[:n_test]], data.gold.iloc[order[n_test:]]
        for n in sizes:
            gold = pool.iloc[:n]
            embedder = fit_features(pd.concat([gold, data.preference]), design.d, seed, design.embedder)
            X_g, X_p, X_t = (embed_queries(embedder, rows) for rows in (gold, data.preference, test))
            r, y = gold["outcome"].to_numpy(float), data.preference["outcome"].to_numpy(float)
            c = scale_constant(r, y, design.normalization)
            spec = replace(design.learner, seed=seed)
            psi = {}
            for name in design.routers:
                router = fit_router(name, spec, X_g, c * r, X_p, y, **_cate_kwargs(name, design, seed))
                psi[name] = router.psi(X_t)
                gains.setdefault((name, n), []).append(efficiency_gain(psi[name], test["outcome"].to_numpy(float),
                                                                       seed=seed))
            if n == sizes[-1]:
                last = {"psi": psi, "test": test.reset_index(drop=True)}
            done += 1
            if progress is not None:
                progress(done, steps)
    table = _summarize(gains, ("router", "n_gold"))
    rounds = pd.DataFrame([{"router": name, "n_gold": n, "round": i, "mean_gain": float(interior_mean(g)),
                            "n_test": n_test, "n_gold_total": len(data.gold)}
                           for (name, n), runs in gains.items() for i, g in enumerate(runs)])
    return Evaluation(table.assign(learner=design.learner.kind, n_test=n_test, n_preference=len(data.preference)),
                      last, rounds)


def overlap(labels: pd.DataFrame, d: int = 50, ratio: float = OVERLAP_RATIO, bins: int = 10,
            seed: int = 0, embedder: str = DEFAULT_METHOD) -> pd.DataFrame:
    """Positivity diagnostic (spec §5.3): out-of-sample p̂(s) = Pr(gold | s) for every row, its histogram per
    label kind, the share of rows inside the overlap region (density ratio within [1/ratio, ratio]; `overlap_lo`,
    `overlap_hi` are the same region as bounds on p̂ at this data's gold share κ) and the AUC of telling gold from
    preference queries apart (0.5: same distribution; 1: disjoint, no overlap)."""
    data = split_labels(labels)
    embedder = fit_features(pd.concat([data.gold, data.preference]), d, seed, embedder)
    X_g, X_p = embed_queries(embedder, data.gold), embed_queries(embedder, data.preference)
    p, inside = overlap_region(X_g, X_p, ratio, seed)
    prior_odds = len(X_g) / len(X_p)  # κ/(1 − κ): p̂/(1 − p̂) = density ratio · κ/(1 − κ)
    bounds = tuple(o / (1 + o) for o in (prior_odds / ratio, prior_odds * ratio))
    is_gold = np.concatenate([np.ones(len(X_g), bool), np.zeros(len(X_p), bool)])
    auc = float(roc_auc_score(is_gold, p))
    edges = np.linspace(0, 1, bins + 1)
    out = []
    for kind, mask in (("gold", is_gold), ("preference", ~is_gold)):
        counts, _ = np.histogram(p[mask], edges)
        out.append(pd.DataFrame({"label_kind": kind, "bin_lo": edges[:-1], "bin_hi": edges[1:], "count": counts,
                                 "n": int(mask.sum()), "share_inside": float(inside[mask].mean()),
                                 "overlap_lo": bounds[0], "overlap_hi": bounds[1], "density_ratio_max": ratio,
                                 "auc": auc}))
    return pd.concat(out, ignore_index=True)


def query_costs(rows: pd.DataFrame, price_p: tuple[float, float], price_a: tuple[float, float],
                default_tokens_out: float = 500.0) -> tuple[np.ndarray, np.ndarray]:
    """Per-query USD cost of each model (Remark 2): input tokens (characters / 4 of the query) at the input price
    plus the model's output tokens (the row's, else the dataset median, else `default_tokens_out`) at the
    output price; prices in USD per million tokens (input, output). Queries given only as embeddings (no
    `query_text`) count no input tokens."""
    text = rows["query_text"] if "query_text" in rows else pd.Series("", index=rows.index)
    tokens_in = text.fillna("").str.len().to_numpy(float) / 4.0

    def side(column: str, price: tuple[float, float]) -> np.ndarray:
        out = rows[column].astype(float) if column in rows else pd.Series(np.nan, index=rows.index)
        fill = out.median() if out.notna().any() else default_tokens_out
        return (tokens_in * price[0] + out.fillna(fill).to_numpy(float) * price[1]) / 1e6

    return side("tokens_out_p", price_p), side("tokens_out_a", price_a)


def test_predictions(last: dict) -> pd.DataFrame:
    """The held-out gold queries of `evaluate`'s last round with every router's ψ̂ (long: one row per query and
    router), what the budget policies are computed on."""
    test = last["test"]
    keep = [c for c in ("query_id", "query_text", "outcome", "tokens_out_p", "tokens_out_a") if c in test]
    return pd.concat([test[keep].assign(router=name, psi_hat=est) for name, est in last["psi"].items()],
                     ignore_index=True)


def policies(psi: dict[str, np.ndarray], test: pd.DataFrame, cost_p: np.ndarray, cost_a: np.ndarray,
             shares: tuple[float, ...] = BUDGET_SHARES) -> pd.DataFrame:
    """App. A.1 on the test queries: for each budget (at most `share` of queries to M_p), the w of eq. 4 with real
    cost gaps (cost_basis "usd") and with the paper's normalized costs (C_p = 1, C_a = 0), the realized share,
    the gold gain bought over random routing at that share, and the saving against always-M_p."""
    r = test["outcome"].to_numpy(float)
    rows = []
    for name, est in psi.items():
        for basis, gap in (("usd", cost_p - cost_a), ("normalized", np.ones(len(r)))):
            for share in shares:
                w = choose_w(est, gap, max_primary_share=share)
                to_p = route_to_primary(est, w, gap)
                spent = np.where(to_p, cost_p, cost_a).sum()
                rows.append({"router": name, "cost_basis": basis, "target_share": share, "w": w,
                             "share_to_primary": float(to_p.mean()),
                             "expected_gain": float((r * to_p).mean() - to_p.mean() * r.mean()),
                             "cost_saving": float(1 - spent / cost_p.sum()),
                             "usd_per_1k_queries": float(1000 * spent / len(r))})
    return pd.DataFrame(rows)


class Deployment(NamedTuple):
    """What a gateway serves: the embedder, the forest as node arrays, the facts of the fit, and the held-out ψ̂ of
    every gold query (cross-fitted: each from a router that did not see it) on which App. A.1 chooses w."""

    embedder: Embedder
    nodes: pd.DataFrame
    facts: dict
    holdout: pd.DataFrame


HOLDOUT_FOLDS = 3  # cross-fitting folds of the gold rows for the held-out ψ̂ that w is chosen on


def fit_deployment(labels: pd.DataFrame, design: StudyDesign, router: str = "meta_cv") -> Deployment:
    """The router a gateway serves: fitted on every gold and preference row, random forest exported as node arrays
    (compass.router.export); and, for App. A.1's threshold, each gold query's ψ̂ from a router fitted without its
    fold (HOLDOUT_FOLDS-fold cross-fitting over the gold rows, every preference row kept), so that w is chosen on
    held-out gold data at fit time and never on the batch being routed.

    The default is `meta_cv` (issue 46): the CATE stage chosen at fit time by the held-out gold gain of routing by
    each member's out-of-fold ψ̂ (`routers.cv_scores`), exported with the router (`chosen`, `cv_criterion`,
    `cv_scores` and, for reference, the squared errors `cv_errors` in the facts), here over the HOLDOUT_FOLDS folds;
    its held-out ψ̂ are the chosen member's out-of-fold predictions from those folds (no refit; w is conditional on
    the choice). Its ψ̂ is calibrated to gold units (`routers.calibrate` on those out-of-fold predictions, facts
    `calibration_offset`, `calibration_slope`), baked into the exported node values and the held-out ψ̂."""
    if design.learner.kind != "random_forest":
        raise ValueError("only random-forest routers are exported as node arrays; use learner kind 'random_forest'")
    data = split_labels(labels)
    embedder = fit_features(pd.concat([data.gold, data.preference]), design.d, design.seed, design.embedder)
    r, y = data.gold["outcome"].to_numpy(float), data.preference["outcome"].to_numpy(float)
    c = scale_constant(r, y, design.normalization)
    X_g, X_p = embed_queries(embedder, data.gold), embed_queries(embedder, data.preference)
    kwargs = _cate_kwargs(router, design, design.seed)
    if router == "meta_cv":
        fitted, held_out = fit_cv_router(design.learner, X_g, c * r, X_p, y, folds=HOLDOUT_FOLDS, **kwargs)
    else:
        fitted, held_out = fit_router(router, design.learner, X_g, c * r, X_p, y, **kwargs), np.empty(len(r))
        for train, held in KFold(HOLDOUT_FOLDS, shuffle=True, random_state=design.seed).split(X_g):
            fold = fit_router(router, design.learner, X_g[train], c * r[train], X_p, y, **kwargs)
            held_out[held] = fold.psi(X_g[held])
    member = fitted.chosen or router
    keep = [col for col in ("query_id", "query_text", "tokens_out_p", "tokens_out_a") if col in data.gold]
    holdout = data.gold[keep].assign(outcome=r, psi_hat=held_out)
    facts = {"router": router, "model_p": str(labels["model_p"].iloc[0]), "model_a": str(labels["model_a"].iloc[0]),
             "learner": design.learner.kind, "d": embedder.dim, "embedder": embedder.kind,
             "scale_c": c, "n_gold": len(r), "n_preference": len(y), "preference_used": fitted.preference_used,
             "n_trees": len(fitted.model.estimators_), "holdout_folds": HOLDOUT_FOLDS, "chosen": member,
             "cv_errors": _rounded_json(fitted.cv_errors), "cv_criterion": fitted.cv_criterion or "",
             "cv_scores": _rounded_json(fitted.cv_scores), "cv_score_se": _rounded_json(fitted.cv_score_se),
             "cv_difference_se": _rounded_json(fitted.cv_difference_se),
             "calibration_offset": fitted.calibration[0],
             "calibration_slope": fitted.calibration[1]}
    return Deployment(embedder, forest_nodes(fitted.model, *fitted.calibration), facts, holdout)


def _rounded_json(values: dict[str, float] | None) -> str:
    return json.dumps({k: round(v, 6) for k, v in (values or {}).items()})


def _summarize(gains: dict[tuple, list[np.ndarray]], keys: tuple[str, ...]) -> pd.DataFrame:
    """Mean and standard error over Monte Carlo rounds at fixed PMUR (spec §5.10), one block per key tuple."""
    rows = []
    for key, runs in gains.items():
        runs = np.vstack(runs)
        se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else np.full(runs.shape[1], np.nan)
        rows.append(pd.DataFrame({**dict(zip(keys, key)), "pmur": PMUR_GRID, "expected_gain": runs.mean(axis=0),
                                  "se": se, "mc_rounds": len(runs)}))
    return pd.concat(rows, ignore_index=True)


# what meta_cv chose and by which scores (cv_score_se: the marginal SE the unpaired rule used, kept for comparison)
CHOICE_COLUMNS = ("chosen", "cv_scores", "cv_errors", "cv_score_se", "cv_difference_se")
SYNTHETIC_ROUTERS = ("oracle",) + REAL_ROUTERS[:-1]  # the truncation variant needs distinct pools; here they are one


class SyntheticEvaluation(NamedTuple):
    """What `evaluate_synthetic` returns: router.synthetic_evaluation's rows, and one row per (preset, router, n_gold,
    round) with the round's mean gain over the usage grid, for paired comparisons (rounds on fresh data), and the
    generator's D and the dimension of the features the routers saw (dim_features)."""

    table: pd.DataFrame
    rounds: pd.DataFrame


def evaluate_synthetic(presets: tuple[str, ...], n_gold: tuple[int, ...], mc_rounds: int, learner: LearnerSpec,
                       N: int = 5000, D: int = 50, cate_min_leaf: int = 50, normalization: str = "variance",
                       seed: int = 0, routers: tuple[str, ...] = SYNTHETIC_ROUTERS, world: World = World(),
                       progress: Callable[[int, int], None] | None = None) -> SyntheticEvaluation:
    """SYNTHETIC (spec §4 generator, known ψ): EG of every router including the oracle benchmark, per preset and
    gold size, averaged over Monte Carlo rounds (fresh data each round, so rounds are independent and paired
    intervals need no resampling correction); EG is in units of the true ψ.
    `learner.kind`, `normalization` and `world` (gold label scale, embedding dimension) carry the paper's ablations
    (`compass.router.ablations`); every configuration draws the same data from the same seeds.
    The rounds say what `meta_cv` chose in each round and the scores it chose by (`chosen`, `cv_scores` with their
    standard errors `cv_score_se`, the SEs of their paired fold differences with the best `cv_difference_se`, and the
    squared errors `cv_errors`; empty for the other routers)."""
    gains: dict[tuple, list[np.ndarray]] = {}
    choices: dict[tuple, list[tuple[str | None, ...]]] = {}
    steps, done = len(presets) * len(n_gold) * mc_rounds, 0
    for preset in presets:
        for n in n_gold:
            for rnd in range(mc_rounds):
                d = world.apply(make_data(n_gs=n, N=N, D=D, seed=seed + rnd, preset=preset), seed + rnd)
                c = scale_constant(d.r, d.y, normalization)
                spec = replace(learner, seed=seed + rnd)
                design = StudyDesign(learner=spec, cate_min_leaf=cate_min_leaf, normalization=normalization)
                for name in routers:
                    router = fit_router(name, spec, d.X_g, c * d.r, d.X_p, d.y, r_p=c * d.r_p,
                                        **_cate_kwargs(name, design, seed + rnd))
                    gains.setdefault((preset, name, n), []).append(
                        efficiency_gain(router.psi(d.X_test), d.psi_test, seed=seed + rnd))
                    choices.setdefault((preset, name, n), []).append(
                        (router.chosen, _rounded_json(router.cv_scores), _rounded_json(router.cv_errors),
                         _rounded_json(router.cv_score_se), _rounded_json(router.cv_difference_se))
                        if router.chosen else (None,) * len(CHOICE_COLUMNS))
                done += 1
                if progress is not None:
                    progress(done, steps)
    features = world.d or world.embedding_dim or D  # the features' dimension after the world's reduction
    table = _summarize(gains, ("preset", "router", "n_gold")).assign(
        learner=learner.kind, N=N, D=D, normalization=normalization, gold_points=world.gold_points,
        dim_features=features)
    rounds = pd.DataFrame([{"preset": preset, "router": name, "n_gold": n, "round": i,
                            "mean_gain": float(interior_mean(g)), "D": D, "dim_features": features,
                            **dict(zip(CHOICE_COLUMNS, choices[preset, name, n][i]))}
                           for (preset, name, n), runs in gains.items() for i, g in enumerate(runs)])
    rounds = rounds.astype({column: "string" for column in CHOICE_COLUMNS})  # VARCHAR if all empty
    return SyntheticEvaluation(table, rounds)


def synthetic_comparisons(rounds: pd.DataFrame, level: float = 0.95,
                          baselines: tuple[str, ...] = ("random", "gold_only", "preference_only")) -> pd.DataFrame:
    """`paired_comparisons` per preset: every router against random, gold-only and preference-only (or `baselines`),
    paired across rounds (same generated data, same test queries), plain t-intervals (fresh data each round)."""
    return pd.concat([paired_comparisons(part, baselines=baselines, level=level).assign(preset=preset)
                      for preset, part in rounds.groupby("preset", sort=True)], ignore_index=True)


def ablation_differences(main: pd.DataFrame, ablated: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Each router of an ablated configuration minus the same router of the main one (`evaluate_synthetic` rounds:
    preset, router, n_gold, round, mean_gain), paired over the rounds both ran (same seeds), Student-t intervals:
    columns preset, n_gold, router, mean_difference, se, lo, hi, level, mc_rounds, distinguishable."""
    keys = ["preset", "router", "n_gold", "round"]
    both = ablated[keys + ["mean_gain"]].merge(main[keys + ["mean_gain"]], on=keys, suffixes=("", "_main"))
    diff = both.assign(mean_gain=both["mean_gain"] - both["mean_gain_main"])[keys + ["mean_gain"]]
    out = synthetic_comparisons(diff, level=level, baselines=("random",))
    return out.drop(columns=["baseline", "resample_correction"])
