"""Non-convex post-processing (thesis ch. 5, §5.3 "Making Cluster Shapes More Irregular"; App. 4E).

`distort` is the App. 4E network as a fixed numpy forward pass: Linear(p→128) embedding, 16 blocks of
[Linear(128→128) → LayerNorm(128) → Tanh], and a Linear(128→p) projection whose weight is tied to the
embedding's transpose (Inan et al., 2017). Weights follow PyTorch's default initialization of
nn.Linear (weights and biases ~ U(±1/√fan_in)) and nn.LayerNorm (gain 1, bias 0, eps 1e-5), drawn from
the given numpy generator; nothing is trained, so torch is not needed (mixture.py says why we avoid it).
"""

from __future__ import annotations

import numpy as np

HIDDEN = 128
N_BLOCKS = 16
LAYER_NORM_EPS = 1e-5


def _linear_init(fan_in: int, fan_out: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=(fan_out, fan_in)), rng.uniform(-bound, bound, size=fan_out)


def _layer_norm(h: np.ndarray) -> np.ndarray:
    mean = h.mean(axis=1, keepdims=True)
    var = h.var(axis=1, keepdims=True)
    return (h - mean) / np.sqrt(var + LAYER_NORM_EPS)


def distort(X: np.ndarray, rng: np.random.Generator | int, hidden: int = HIDDEN, n_blocks: int = N_BLOCKS) -> np.ndarray:
    """Pass X (n, p), normalized by its largest row norm, through a random tied-weight MLP (App. 4E).

    The output is not rescaled (as in the reference implementation).
    """
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    X = np.asarray(X, dtype=float)
    dim = X.shape[1]
    X = X / np.max(np.linalg.norm(X, axis=1))
    w_emb, b_emb = _linear_init(dim, hidden, rng)
    h = X @ w_emb.T + b_emb
    for _ in range(n_blocks):
        w, b = _linear_init(hidden, hidden, rng)
        h = np.tanh(_layer_norm(h @ w.T + b))
    _, b_proj = _linear_init(hidden, dim, rng)
    return h @ w_emb + b_proj  # projection weight = embedding weightᵀ (tied)


def wrap_around_sphere(X: np.ndarray) -> np.ndarray:
    """Inverse stereographic projection of X (n, p), normalized by its largest norm, onto S^p ⊂ R^(p+1):
    x_p = (1 - |x|²)/(1 + |x|²), x_rest = 2x/(1 + |x|²)."""
    X = np.asarray(X, dtype=float)
    X = X / np.max(np.linalg.norm(X, axis=1))
    sq = np.sum(X ** 2, axis=1, keepdims=True)
    return np.hstack([2 * X / (1 + sq), (1 - sq) / (1 + sq)])
