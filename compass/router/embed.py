"""Query features for the meta-router (seed 003 §2.1, spec §2.1): a fixed embedding, then a linear reduction to
d dimensions (the paper: gemini-embedding-001, then PCA to d = 50) fitted on training rows only.

No embedding model can be downloaded at run time, so text is embedded deterministically: TF-IDF (scikit-learn's
TfidfVectorizer, sublinear tf, l2 rows) then truncated SVD to d (latent semantic analysis). A user who brings
their own embedding column gets PCA to d instead. Either way the fitted embedder is plain arrays (terms, idf,
centre, loadings), so it is stored in the warehouse and applied to new queries without pickle or scikit-learn
objects: `Embedder.transform` re-implements the two linear steps and is tested against scikit-learn's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize

MAX_TERMS = 5000  # vocabulary cap: the loadings table is MAX_TERMS × d
VECTORIZER = {"lowercase": True, "stop_words": "english", "min_df": 2, "max_features": MAX_TERMS}


@dataclass(frozen=True)
class Embedder:
    """x = (f(query) − centre) @ loadings: f is sublinear-tf × idf with l2 rows over `terms` (kind "tfidf")
    or the user's embedding (kind "pca"). loadings is (n_inputs × d)."""

    kind: str
    terms: tuple[str, ...] | None  # tfidf: the vocabulary, in column order
    idf: np.ndarray | None  # tfidf: inverse document frequencies
    centre: np.ndarray  # subtracted before projection (zeros for tfidf: LSA does not centre)
    loadings: np.ndarray

    @property
    def dim(self) -> int:
        return self.loadings.shape[1]

    def transform(self, texts: pd.Series | None = None, embeddings: np.ndarray | None = None) -> np.ndarray:
        if self.kind == "tfidf":
            counts = CountVectorizer(vocabulary=list(self.terms), **{k: v for k, v in VECTORIZER.items()
                                                                       if k in ("lowercase", "stop_words")})
            tf = counts.transform(texts.fillna("")).astype(float)
            tf.data = 1.0 + np.log(tf.data)
            return np.asarray(normalize(tf.multiply(self.idf).tocsr()) @ self.loadings)
        return (np.asarray(embeddings, dtype=float) - self.centre) @ self.loadings

    def to_frame(self) -> pd.DataFrame:
        """One row per input feature: term (tfidf) or input index, idf, centre and its loading on each of the d axes."""
        return pd.DataFrame({"kind": self.kind, "feature": np.arange(len(self.centre)),
                             "term": list(self.terms) if self.terms is not None else None,
                             "idf": self.idf if self.idf is not None else np.nan,
                             "centre": self.centre, "loadings": list(self.loadings)})

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Embedder:
        frame = frame.sort_values("feature")
        kind = str(frame["kind"].iloc[0])
        return cls(kind, tuple(frame["term"]) if kind == "tfidf" else None,
                   frame["idf"].to_numpy(float) if kind == "tfidf" else None, frame["centre"].to_numpy(float),
                   np.stack(frame["loadings"].map(np.asarray)).astype(float))


def fit_embedder(texts: pd.Series | None = None, embeddings: np.ndarray | None = None, d: int = 50,
                 seed: int = 0) -> Embedder:
    """Fit on training queries: TF-IDF + truncated SVD when `embeddings` is None, else PCA (spec §2.1).
    d is capped by the data's rank (d ≤ min(rows, inputs) − 1)."""
    if embeddings is None:
        tfidf = TfidfVectorizer(sublinear_tf=True, **VECTORIZER)
        matrix = tfidf.fit_transform(texts.fillna(""))
        k = max(1, min(d, min(matrix.shape) - 1))
        svd = TruncatedSVD(k, random_state=seed, algorithm="arpack").fit(matrix)
        return Embedder("tfidf", tuple(tfidf.get_feature_names_out()), tfidf.idf_.copy(),
                        np.zeros(matrix.shape[1]), svd.components_.T.copy())
    emb = np.asarray(embeddings, dtype=float)
    k = max(1, min(d, min(emb.shape) - 1))
    pca = PCA(k, random_state=seed, svd_solver="full").fit(emb)
    return Embedder("pca", None, None, pca.mean_.copy(), pca.components_.T.copy())
