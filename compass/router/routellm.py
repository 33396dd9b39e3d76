"""The routers practitioners deploy instead (RouteLLM; Ong et al. 2024, "RouteLLM: Learning to Route LLMs with
Preference Data", §4.1), fitted on the same embeddings and labels as seed 003's routers, for the comparison tables.

With one strong and one weak model both reduce to a score of "the strong model wins on q":

* matrix factorization (RouteLLM's `mf`): s(m, q) = w₂ᵀ(v_m ⊙ (W₁q + b)) and P(strong wins) = σ(s(p, q) − s(a, q)),
  which for a fixed pair is σ(aᵀq + c): an L2-regularized logistic regression of the win indicator on q;
* similarity-weighted ranking (`sw_ranking`): each training comparison is weighted by γ^(1 + S_i/S_max), with S_i
  the cosine similarity of its query to q, S_max the largest over the training queries and γ = 10 (RouteLLM §4.1;
  its `SWRankingRouter.get_weightings`: 10 · 10^(S_i/S_max)), and the Bradley–Terry fit of the weighted comparisons
  between two models is a monotone function of their weighted win share, so ψ̂(q) = the weighted mean label ranks
  queries as RouteLLM's win rate does.

Both treat gold and preference labels alike (a practitioner pools whatever labels they have); neither debiases.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


class MatrixFactorizationRouter:
    """RouteLLM `mf` for one model pair: P(strong model wins | q) by logistic regression on the embedding."""

    def __init__(self, C: float = 1.0):
        self.model = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=5000))

    def fit(self, X: np.ndarray, labels: np.ndarray) -> MatrixFactorizationRouter:
        wins = (np.asarray(labels, dtype=float) > 0).astype(int)
        if wins.min() == wins.max():
            raise ValueError("matrix-factorization routing needs labels where each model wins at least once")
        self.model.fit(X, wins)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """P(strong wins) − 1/2: positive where the strong model is expected to win."""
        return self.model.predict_proba(X)[:, 1] - 0.5


class SimilarityWeightedRouter:
    """RouteLLM `sw_ranking` for one model pair: the similarity-weighted mean label of the training queries."""

    def __init__(self, gamma: float = 10.0):
        self.gamma = gamma

    def fit(self, X: np.ndarray, labels: np.ndarray) -> SimilarityWeightedRouter:
        self.X = _unit_rows(np.asarray(X, dtype=float))
        self.labels = np.asarray(labels, dtype=float)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        similarity = _unit_rows(np.asarray(X, dtype=float)) @ self.X.T  # queries × training rows, cosine
        s_max = np.maximum(similarity.max(axis=1, keepdims=True), 1e-12)  # a query orthogonal to every training one
        weights = self.gamma ** (1.0 + similarity / s_max)
        return weights @ self.labels / weights.sum(axis=1)


def _unit_rows(X: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0)
