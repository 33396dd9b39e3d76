"""Query segments as ML Compass contexts, measured out of sample (issue 30 item 5; seed 000 §3 contexts, thesis
ch. 5's validated clustering, seed 003 eq. 4's normalized-cost decision).

Question: does choosing the model per segment of queries beat choosing one model for all queries, on queries the
segments and the choices were not fitted on? Real data: the gold rows of raw.route_labels (query text and r(q), the
quality gain of the primary model M_p over the alternative M_a on query q). Per round (a seeded split of a dataset's
gold rows into training and held-out queries):

1. features: the query embedder of compass.embeddings (WordLlama then PCA to d by default; TF-IDF + truncated
   SVD to d on request) fitted on the training queries only;
2. segments: K-Means or EM-GMM (the methods the archetype validation recovers best, `segmentation`) with k
   segments fitted on the training features; held-out queries join the segment the fitted model predicts;
3. choice per segment at cost weight w (eq. 4 with normalized costs C_p = 1, C_a = 0): M_p iff the segment's
   training mean of r exceeds w. The held-out utility of a choice is the mean over held-out queries of
   (r(q) − w)·[M_p chosen for q's segment], relative to always choosing M_a.

Non-learning references scored the same way: "global" (one segment: the single best model for all queries) and
"random" (the fitted segments' labels permuted among the queries, training and held-out separately: random
segments of the same sizes). "per_query_ceiling" (each query to the model better for it; needs r(q)) shows how
much any context rule could gain. A segmentation helps only if it beats both beyond the standard error over rounds.
The w grid is relative to the training queries' mean r (w = f·mean r), so f = 1 is where the global choice flips.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.mixture import GaussianMixture

from compass.embeddings import DEFAULT_METHOD, embed_queries, fit_features
from compass.resampling import corrected_se

SEGMENTERS = ("kmeans", "em_gmm")
REFERENCES = ("global", "random")
W_FACTORS = (0.5, 0.75, 1.0, 1.25, 1.5)


def fit_segments(method: str, X_train: np.ndarray, X_test: np.ndarray, k: int, seed: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Segment labels of the training queries and the held-out ones' predicted segments."""
    if method == "kmeans":
        model = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X_train)
    elif method == "em_gmm":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small segments in 50-D: scikit-learn's convergence warnings
            model = GaussianMixture(n_components=k, covariance_type="diag", random_state=seed).fit(X_train)
    else:
        raise ValueError(f"unknown segmenter {method!r}; one of {SEGMENTERS}")
    return model.predict(X_train), model.predict(X_test)


def choose_primary(r_train: np.ndarray, seg_train: np.ndarray, w: float) -> dict[int, bool]:
    """Per segment: M_p iff its training mean gain exceeds w (eq. 4, normalized costs)."""
    return {int(s): bool(r_train[seg_train == s].mean() > w) for s in np.unique(seg_train)}


def utility(r: np.ndarray, seg: np.ndarray, choice: dict[int, bool], w: float, default: bool) -> float:
    """Mean (r − w)·[M_p chosen] over queries; a segment unseen in training takes `default` (the global choice)."""
    to_p = np.array([choice.get(int(s), default) for s in seg], dtype=bool)
    return float(np.mean((r - w) * to_p))


TEST_SHARE = 0.3  # held-out share of every split


def _resplit_se(gains: pd.Series) -> float:
    """SE of a mean gain over re-splits with TEST_SHARE held out (n_test/n_train = 0.3/0.7)."""
    return corrected_se(gains.dropna().to_numpy(), TEST_SHARE / (1 - TEST_SHARE))


def evaluate_round(gold: pd.DataFrame, k: int, seed: int, test_share: float = TEST_SHARE, d: int = 50,
                   embedder: str = DEFAULT_METHOD) -> pd.DataFrame:
    """One seeded split: held-out and in-sample utility of each segmenter and reference at every w factor."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(gold))
    n_test = int(np.ceil(test_share * len(gold)))
    test, train = gold.iloc[order[:n_test]], gold.iloc[order[n_test:]]
    features = fit_features(train, d, seed, embedder)
    X_train, X_test = embed_queries(features, train), embed_queries(features, test)
    r_train, r_test = train["outcome"].to_numpy(float), test["outcome"].to_numpy(float)
    segments = {m: fit_segments(m, X_train, X_test, k, seed) for m in SEGMENTERS}
    segments["random"] = tuple(rng.permutation(s) for s in segments["kmeans"])
    segments["global"] = (np.zeros(len(train), int), np.zeros(len(test), int))
    rows = []
    for f in W_FACTORS:
        w = f * float(r_train.mean())
        default = bool(r_train.mean() > w)
        for method, (seg_train, seg_test) in segments.items():
            choice = choose_primary(r_train, seg_train, w)
            rows.append((method, f, w, utility(r_test, seg_test, choice, w, default),
                         utility(r_train, seg_train, choice, w, default), float(np.mean(list(choice.values())))))
        # the ceiling: every query to the model that is better for it at w (needs r(q), so no policy can reach it)
        rows.append(("per_query_ceiling", f, w, float(np.maximum(r_test - w, 0).mean()),
                     float(np.maximum(r_train - w, 0).mean()), np.nan))
    return pd.DataFrame(rows, columns=["method", "w_factor", "w", "held_out", "in_sample", "share_segments_primary"])


def _paired_gain(rounds: pd.DataFrame, reference: str) -> np.ndarray:
    """Each row's held-out utility minus the reference method's in the same dataset, k, round and w factor."""
    keys = ["dataset", "k", "round", "w_factor"]
    base = rounds[rounds["method"] == reference].set_index(keys)["held_out"]
    return rounds["held_out"].to_numpy() - base.reindex(pd.MultiIndex.from_frame(rounds[keys])).to_numpy()


def context_study(labels: pd.DataFrame, ks: tuple[int, ...] = (2, 4, 8), n_rounds: int = 10, seed: int = 0,
                  embedder: str = DEFAULT_METHOD) -> pd.DataFrame:
    """Per dataset × k × w factor × method: held-out and in-sample utility (mean over rounds), and the held-out
    gain over each reference with its standard error over rounds (paired: same split, same w; corrected for the
    overlap of re-splits, `resampling.corrected_se`)."""
    frames = []
    for dataset, gold in labels[labels["label_kind"] == "gold"].groupby("dataset", sort=True):
        gold = gold.reset_index(drop=True)
        for k in ks:
            for rnd in range(n_rounds):
                frames.append(evaluate_round(gold, k, seed + rnd, embedder=embedder)
                              .assign(dataset=dataset, k=k, round=rnd))
    rounds = pd.concat(frames, ignore_index=True)
    aggs = {"held_out": ("held_out", "mean"), "in_sample": ("in_sample", "mean"), "n_rounds": ("round", "count")}
    for reference in REFERENCES:
        rounds[f"gain_vs_{reference}"] = _paired_gain(rounds, reference)
        aggs[f"gain_vs_{reference}"] = (f"gain_vs_{reference}", "mean")
        aggs[f"gain_vs_{reference}_se"] = (f"gain_vs_{reference}", _resplit_se)
    out = rounds.groupby(["dataset", "k", "w_factor", "method"], sort=True).agg(**aggs).reset_index()
    return out


def helps(study: pd.DataFrame, z: float = 2.0) -> pd.DataFrame:
    """The (dataset, k, w factor, segmenter) cells where per-segment choice beats both references out of sample by
    more than z standard errors of the paired gain; the verdict rule of docs/results/clusters.md."""
    seg = study[study["method"].isin(SEGMENTERS)]
    wins = np.ones(len(seg), dtype=bool)
    for reference in REFERENCES:
        wins &= (seg[f"gain_vs_{reference}"] > z * seg[f"gain_vs_{reference}_se"]).to_numpy()
    return seg[wins]


def assign_contexts(gold: pd.DataFrame, k: int, seed: int = 0, d: int = 50, embedder: str = DEFAULT_METHOD
                    ) -> pd.DataFrame:
    """ML Compass contexts for every gold query of one dataset: the K-Means segment of its embedding (both fitted on
    all gold queries), with the segment's size and mean gain r of M_p over M_a."""
    X = embed_queries(fit_features(gold, d, seed, embedder), gold)
    segment = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(X)
    out = pd.DataFrame({"query_id": gold["query_id"].to_numpy(), "context": segment,
                        "outcome": gold["outcome"].to_numpy(float)})
    stats = out.groupby("context")["outcome"].agg(context_size="size", context_mean_gain="mean")
    return out.drop(columns="outcome").join(stats, on="context")


def chosen_k(study: pd.DataFrame, w_factor: float = 1.0) -> int:
    """The number of contexts to publish for one dataset: the K-Means k with the largest held-out gain at
    `w_factor` among the cells where it beats both references (`helps`), else 1 (one context: the global choice)."""
    cells = helps(study)
    cells = cells[(cells["method"] == "kmeans") & (cells["w_factor"] == w_factor)]
    return int(cells.sort_values("held_out", ascending=False)["k"].iloc[0]) if len(cells) else 1
