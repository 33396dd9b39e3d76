"""The query embedder (compass.embeddings): WordLlama by default, loaded from its package folder with downloads
disabled, never replaced by TF-IDF unless asked; its vectors carry meaning that TF-IDF's cannot; the fitted
embedder is plain arrays that reproduce scikit-learn's PCA through the warehouse's row format."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA

from compass import embeddings
from compass.embeddings import (WORDLLAMA_DIM, Embedder, EmbedderUnavailable, embed_queries, fit_embedder,
                                fit_features, wordllama_vectors)
from compass.router.learners import LearnerSpec
from compass.router.study import StudyDesign, evaluate
from tests.paths import ROOT

LABELS = pd.read_csv(ROOT / "tests" / "fixtures" / "router" / "route_labels.csv")


@pytest.fixture
def no_wordllama(monkeypatch):
    """WordLlama not importable (a clean install without it), with the loaded model forgotten."""
    embeddings.wordllama_model.cache_clear()
    monkeypatch.setitem(sys.modules, "wordllama", None)
    yield
    embeddings.wordllama_model.cache_clear()


def test_the_default_embedder_is_wordllama_and_its_arrays_reproduce_pca():
    train, new = LABELS.iloc[:200], LABELS.iloc[200:]
    emb = fit_features(train, d=20, seed=0)
    assert emb.kind == "wordllama" and emb.reads_text and emb.loadings.shape == (WORDLLAMA_DIM, 20)
    pca = PCA(20, random_state=0, svd_solver="full").fit(wordllama_vectors(train["query_text"]))
    expected = pca.transform(wordllama_vectors(new["query_text"]))
    assert np.allclose(embed_queries(emb, new), expected, atol=1e-8)
    again = Embedder.from_frame(emb.to_frame())  # through the warehouse's row format
    assert again.kind == "wordllama" and np.allclose(embed_queries(again, new), expected, atol=1e-8)


def test_wordllama_loads_from_its_package_folder_with_downloads_disabled(monkeypatch):
    import wordllama
    calls = []
    real = wordllama.WordLlama.load
    monkeypatch.setattr(wordllama.WordLlama, "load", lambda **kw: calls.append(kw) or real(**kw))
    embeddings.wordllama_model.cache_clear()
    try:
        assert wordllama_vectors(["a query"]).shape == (1, WORDLLAMA_DIM)
    finally:
        embeddings.wordllama_model.cache_clear()
    assert calls and calls[0]["disable_download"] is True
    assert Path(calls[0]["cache_dir"]) == Path(wordllama.__file__).parent


def test_without_wordllama_fitting_fails_loudly_and_never_falls_back_to_tfidf(no_wordllama):
    with pytest.raises(EmbedderUnavailable, match="wordllama==0.4.0.post1"):
        fit_features(LABELS, d=10, seed=0)
    design = StudyDesign(n_gold=(40,), mc_rounds=1, learner=LearnerSpec(n_estimators=5), d=10, routers=("gold_only",))
    with pytest.raises(EmbedderUnavailable):
        evaluate(LABELS, design)  # the study's default is WordLlama too
    assert fit_features(LABELS, d=10, seed=0, method="tfidf").kind == "tfidf"  # only when asked explicitly


def test_an_unknown_embedder_is_an_error():
    with pytest.raises(ValueError, match="unknown query embedder 'bert'"):
        fit_embedder(texts=LABELS["query_text"], method="bert")


def test_wordllama_vectors_carry_meaning_that_tfidf_cannot():
    """Paraphrases with no content word in common are nearer each other than to an unrelated query of the same
    form; TF-IDF sees no shared term, so every pair is orthogonal to it."""
    pairs = [("How do I cook pasta?", "What is the best way to boil spaghetti?"),
             ("My car will not start in the morning", "The vehicle's engine fails to turn over at dawn"),
             ("Write a poem about the ocean", "Compose verses describing the sea")]
    v = wordllama_vectors([t for pair in pairs for t in pair])
    sims = v @ v.T
    for i in range(len(pairs)):
        a, b = 2 * i, 2 * i + 1
        others = [sims[a, j] for j in range(len(v)) if j not in (a, b)]
        assert sims[a, b] > max(others) + 0.05, (pairs[i], sims[a, b], max(others))
    assert np.allclose(np.linalg.norm(v, axis=1), 1)
    texts = [t for pair in pairs for t in pair]  # batched in order of length, returned in the caller's order
    assert np.allclose(v, [embeddings.wordllama_model().embed(t, norm=True)[0] for t in texts], atol=1e-6)


def test_a_users_embedding_column_is_still_reduced_by_pca(no_wordllama):
    rows = LABELS.iloc[:60].assign(embedding=list(np.random.default_rng(0).standard_normal((60, 8))))
    emb = fit_features(rows, d=3, seed=0)  # no WordLlama needed: the user's vectors are used as they are
    assert emb.kind == "pca" and not emb.reads_text and embed_queries(emb, rows).shape == (60, 3)


def test_vectors_of_seen_texts_are_kept_and_equal_fresh_ones(monkeypatch):
    texts = [f"query number {i} about {topic}" for i, topic in enumerate(["tax law", "poetry", "GPU kernels"])]
    first = wordllama_vectors(texts)
    model, calls = embeddings.wordllama_model(), []
    real = model.embed
    monkeypatch.setattr(model, "embed", lambda items, **kw: calls.append(list(items)) or real(items, **kw))
    again = wordllama_vectors(texts[::-1] + ["a text not seen before"])
    assert calls == [["a text not seen before"]]  # only the new text reaches the model
    assert np.array_equal(again[:3], first[::-1])
    assert np.allclose(again[3], real("a text not seen before", norm=True)[0], atol=1e-6)
