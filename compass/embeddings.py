"""Query embeddings shared by the router (seed 003 §2.1, spec §2.1) and the query segments (compass.clusters.contexts):
a fixed text embedding, then a linear reduction to d dimensions fitted on training rows only (the paper:
gemini-embedding-001, then PCA to d = 50).

No embedding model can be downloaded at run time, so the default text embedding is WordLlama (the `wordllama`
package, pinned in pyproject.toml: 256-d static token embeddings distilled from an LLM's, mean-pooled, numpy
inference, weights shipped inside the package), loaded from the package's own folder with downloads disabled; its
l2-normalized 256-d vectors are reduced by PCA to d. If WordLlama cannot load, fitting fails loudly
(`EmbedderUnavailable`): it never falls back by itself. TF-IDF (scikit-learn's TfidfVectorizer, sublinear tf, l2
rows) then truncated SVD to d (latent semantic analysis) is kept as an explicit choice (method "tfidf") and as
the comparison row of docs/results/router.md. A user who brings their own embedding column gets PCA to d instead.
Whichever, the fitted embedder is plain arrays (terms, idf, centre, loadings), so it is stored in the warehouse and
applied to new queries without pickle or scikit-learn objects: `Embedder.transform` re-implements the linear steps
and is tested against scikit-learn's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize

MAX_TERMS = 5000  # vocabulary cap: the loadings table is MAX_TERMS × d
VECTORIZER = {"lowercase": True, "stop_words": "english", "min_df": 2, "max_features": MAX_TERMS}
TEXT_METHODS = ("wordllama", "tfidf")  # how query text is embedded; the first is the default
DEFAULT_METHOD = TEXT_METHODS[0]
WORDLLAMA_DIM = 256
BATCH = 256  # texts per WordLlama batch (in order of length)
CACHE_TEXTS = 100_000  # distinct texts whose vectors a process keeps (float32: about 100 MB at most)
_VECTORS: dict[str, np.ndarray] = {}


class EmbedderUnavailable(RuntimeError):
    """The configured text embedder cannot be loaded (never replaced by another one silently)."""


@functools.cache
def wordllama_model():
    """WordLlama's shipped 256-d model, from the installed package's folder, with downloads disabled."""
    try:
        import wordllama
        return wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True,
                                        dim=WORDLLAMA_DIM)
    except Exception as exc:  # ImportError, missing weights, a changed API: all mean the same to the user
        raise EmbedderUnavailable(
            f"the WordLlama query embedder cannot load ({type(exc).__name__}: {exc}); install the pinned "
            "wordllama==0.4.0.post1 (pyproject.toml), or choose embedder 'tfidf' explicitly") from exc


def wordllama_vectors(texts: pd.Series | list[str]) -> np.ndarray:
    """WordLlama's l2-normalized mean-pooled 256-d embedding of each text (float64; zeros for an empty text).
    Vectors of up to CACHE_TEXTS distinct texts are kept for the process (a study re-embeds the same queries in
    every round); the model is loaded first all the same, so a missing WordLlama fails even on cached texts."""
    model = wordllama_model()
    items = ["" if t is None or (isinstance(t, float) and np.isnan(t)) else str(t) for t in texts]
    if not items:
        return np.zeros((0, WORDLLAMA_DIM))
    missing = [t for t in dict.fromkeys(items) if t not in _VECTORS]
    fresh = {}
    if missing:
        # WordLlama pads each batch to its longest text (no truncation): batches of similar lengths waste little
        missing.sort(key=len)
        embedded = np.nan_to_num(np.asarray(model.embed(missing, norm=True, batch_size=BATCH), dtype=np.float32))
        fresh = dict(zip(missing, embedded))
        if len(_VECTORS) + len(fresh) > CACHE_TEXTS:
            _VECTORS.clear()
        if len(fresh) <= CACHE_TEXTS:
            _VECTORS.update(fresh)
    return np.array([fresh[t] if t in fresh else _VECTORS[t] for t in items], dtype=float)


@dataclass(frozen=True)
class Embedder:
    """x = (f(query) − centre) @ loadings: f is sublinear-tf × idf with l2 rows over `terms` (kind "tfidf"),
    WordLlama's 256-d vector (kind "wordllama") or the user's embedding (kind "pca"). loadings is (n_inputs × d)."""

    kind: str
    terms: tuple[str, ...] | None  # tfidf: the vocabulary, in column order
    idf: np.ndarray | None  # tfidf: inverse document frequencies
    centre: np.ndarray  # subtracted before projection (zeros for tfidf: LSA does not centre)
    loadings: np.ndarray

    @property
    def dim(self) -> int:
        return self.loadings.shape[1]

    @property
    def reads_text(self) -> bool:
        """True when the embedder reads `query_text`, False when it reads the user's `embedding` column."""
        return self.kind in TEXT_METHODS

    def transform(self, texts: pd.Series | None = None, embeddings: np.ndarray | None = None) -> np.ndarray:
        if self.kind == "tfidf":
            counts = CountVectorizer(vocabulary=list(self.terms), **{k: v for k, v in VECTORIZER.items()
                                                                       if k in ("lowercase", "stop_words")})
            tf = counts.transform(texts.fillna("")).astype(float)
            tf.data = 1.0 + np.log(tf.data)
            return np.asarray(normalize(tf.multiply(self.idf).tocsr()) @ self.loadings)
        if self.kind == "wordllama":
            embeddings = wordllama_vectors(texts)
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


def _pca(kind: str, emb: np.ndarray, d: int, seed: int) -> Embedder:
    k = max(1, min(d, min(emb.shape) - 1))
    pca = PCA(k, random_state=seed, svd_solver="full").fit(emb)
    return Embedder(kind, None, None, pca.mean_.copy(), pca.components_.T.copy())


def fit_embedder(texts: pd.Series | None = None, embeddings: np.ndarray | None = None, d: int = 50,
                 seed: int = 0, method: str = DEFAULT_METHOD) -> Embedder:
    """Fit on training queries: PCA of the user's `embeddings` when given, else of WordLlama's vectors of `texts`
    (method "wordllama"), or TF-IDF + truncated SVD of `texts` (method "tfidf") (spec §2.1).
    d is capped by the data's rank (d ≤ min(rows, inputs) − 1)."""
    if embeddings is not None:
        return _pca("pca", np.asarray(embeddings, dtype=float), d, seed)
    if method == "wordllama":
        return _pca("wordllama", wordllama_vectors(texts), d, seed)
    if method != "tfidf":
        raise ValueError(f"unknown query embedder {method!r}; one of {TEXT_METHODS}")
    tfidf = TfidfVectorizer(sublinear_tf=True, **VECTORIZER)
    matrix = tfidf.fit_transform(texts.fillna(""))
    k = max(1, min(d, min(matrix.shape) - 1))
    svd = TruncatedSVD(k, random_state=seed, algorithm="arpack").fit(matrix)
    return Embedder("tfidf", tuple(tfidf.get_feature_names_out()), tfidf.idf_.copy(),
                    np.zeros(matrix.shape[1]), svd.components_.T.copy())


def embed_queries(embedder: Embedder, rows: pd.DataFrame) -> np.ndarray:
    """Features of queries: their `query_text` through a text embedder, or their `embedding` through a PCA one."""
    if embedder.reads_text:
        return embedder.transform(texts=rows["query_text"])
    return embedder.transform(embeddings=np.stack(rows["embedding"].to_numpy()))


def fit_features(train: pd.DataFrame, d: int, seed: int, method: str = DEFAULT_METHOD) -> Embedder:
    """The user's embedding when every training row has one, else `method` on the text (spec §2.1)."""
    if "embedding" in train and train["embedding"].notna().all():
        return fit_embedder(embeddings=np.stack(train["embedding"].to_numpy()), d=d, seed=seed)
    return fit_embedder(texts=train["query_text"], d=d, seed=seed, method=method)
