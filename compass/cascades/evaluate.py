"""Realized error and cost of an LLM cascade for many threshold vectors at once.

Thesis seed 001 (Zellinger), Chapter 2, eq (2.1): a query x reaches M_1; the
cascade returns M_i(x) if Phi_i(x) > phi_i, otherwise it forwards x to M_{i+1};
the last model always answers. Cost accumulates along the cascade (eq 3.7):
a query answered by M_tau costs sum_{j <= tau} C_j.

Routing uses the thesis's strict inequality ``Phi_i > phi_i`` (answer) and
defers on ``Phi_i <= phi_i``, the deferral events P(Phi_i <= phi_i) of eqs 2.5-2.6
and 2.14-2.15.
"""

from __future__ import annotations

import numpy as np

# Number of (threshold vector x query x model) comparisons held in memory at once.
_CHUNK_ELEMENTS = 4_000_000


def _as_matrix(name: str, a: np.ndarray, shape: tuple[int, int] | None = None) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n_queries x k_models) array, got shape {arr.shape}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} has shape {arr.shape}, expected {shape} (same as p_correct)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def validate_cascade_inputs(
    p_correct: np.ndarray, correct: np.ndarray, cost: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check the three (n x k) per-query matrices of a cascade and return them as float arrays."""
    p = _as_matrix("p_correct", p_correct)
    if p.shape[1] < 2:
        raise ValueError(f"a cascade needs at least 2 models, p_correct has {p.shape[1]} column(s)")
    if p.shape[0] == 0:
        raise ValueError("p_correct has no queries (0 rows)")
    y = _as_matrix("correct", correct, p.shape)
    c = _as_matrix("cost", cost, p.shape)
    if np.any(c < 0):
        raise ValueError("cost contains negative values")
    return p, y, c


def answering_model(p_correct: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Index of the model that answers each query, for every threshold vector (eq 2.1).

    p_correct: (n, k) confidences in cascade order; thresholds: (m, k-1).
    Returns an (m, n) int array with values in 0..k-1.
    """
    p = np.asarray(p_correct, dtype=float)
    t = np.atleast_2d(np.asarray(thresholds, dtype=float))
    n, k = p.shape
    if t.shape[1] != k - 1:
        raise ValueError(f"thresholds must have k-1 = {k - 1} columns, got {t.shape[1]}")
    accept = p[None, :, : k - 1] > t[:, None, :]  # (m, n, k-1)
    # The last model always answers: argmax over [accept, True] finds the first accepting model.
    accept = np.concatenate([accept, np.ones((t.shape[0], n, 1), dtype=bool)], axis=2)
    return np.argmax(accept, axis=2)


def evaluate_thresholds(
    p_correct: np.ndarray,
    correct: np.ndarray,
    cost: np.ndarray,
    thresholds: np.ndarray,
    *,
    mean_cost: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Realized (error, cost) of a cascade for each of m threshold vectors (eqs 2.1, 3.7).

    p_correct, correct, cost: (n, k) arrays in cascade order (small model first);
    ``correct`` may be 0/1 labels (realized error) or calibrated probabilities
    (plug-in expected error, as the grid-search baseline scores train).
    thresholds: (m, k-1). Returns two (m,) arrays: mean error and mean cumulative
    cost per query. With ``mean_cost=True`` every query is charged each model's
    mean cost instead of its own (the authors' code's test protocol; eq 2.15 charges E[C_j]).
    """
    p, y, c = validate_cascade_inputs(p_correct, correct, cost)
    t = np.atleast_2d(np.asarray(thresholds, dtype=float))
    n, k = p.shape
    if t.ndim != 2 or t.shape[1] != k - 1:
        raise ValueError(f"thresholds must be (m, {k - 1}) for a {k}-model cascade, got shape {t.shape}")
    if np.any(np.isnan(t)):
        raise ValueError("thresholds contain NaN")
    if mean_cost:
        c = np.broadcast_to(c.mean(axis=0), c.shape)
    cum_cost = np.cumsum(c, axis=1)
    rows = np.arange(n)[None, :]
    m = t.shape[0]
    error = np.empty(m)
    total = np.empty(m)
    step = max(1, _CHUNK_ELEMENTS // (n * k))
    for start in range(0, m, step):
        idx = answering_model(p, t[start : start + step])
        error[start : start + step] = 1.0 - y[rows, idx].mean(axis=1)
        total[start : start + step] = cum_cost[rows, idx].mean(axis=1)
    return error, total


def _contract(factors: list[np.ndarray], weight: np.ndarray) -> np.ndarray:
    """sum_q weight_q prod_j factors[j][q, a_j], as an array over (a_1, ..., a_m).

    The per-query outer products of the first and second half of the factors
    are formed separately and joined by one matrix product over queries.
    """
    n = weight.shape[0]
    half = len(factors) // 2
    left = weight[:, None]
    for f in factors[:half]:
        left = (left[:, :, None] * f[:, None, :]).reshape(n, -1)
    right = np.ones((n, 1))
    for f in factors[half:]:
        right = (right[:, :, None] * f[:, None, :]).reshape(n, -1)
    return (left.T @ right).reshape([f.shape[1] for f in factors])


def evaluate_grid(
    p_correct: np.ndarray, correct: np.ndarray, cost: np.ndarray, grids: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """(error, cost) of every threshold vector in the Cartesian product of per-model ``grids``.

    Same semantics as :func:`evaluate_thresholds` (eq 2.1, cumulative cost eq 3.7),
    but exploits the product structure: query q is answered by M_i with
    indicator prod_{j<i} 1[p_qj <= t_j] * 1[p_qi > t_i], a product of
    per-dimension factors, so each model's contribution summed over queries is
    a tensor contraction. Cost O(n * prod_i |grid_i|) flops in BLAS instead of
    a Python-chunked gather, which makes the 40^4-point k=5 grid of §2.4 cheap.
    Returns two arrays of shape (|grid_1|, ..., |grid_{k-1}|), in the order of
    ``np.meshgrid(*grids, indexing="ij")``.
    """
    p, y, c = validate_cascade_inputs(p_correct, correct, cost)
    n, k = p.shape
    if len(grids) != k - 1:
        raise ValueError(f"need k-1 = {k - 1} threshold grids, got {len(grids)}")
    accept = [(p[:, i][:, None] > np.asarray(g, dtype=float)[None, :]).astype(float) for i, g in enumerate(grids)]
    defer = [1.0 - a for a in accept]
    shape = tuple(a.shape[1] for a in accept)
    cum_cost = np.cumsum(c, axis=1)
    err = np.zeros(shape)
    tot = np.zeros(shape)
    for i in range(k):
        factors = defer[:i] + ([accept[i]] if i < k - 1 else [])
        pad = (slice(None),) * len(factors) + (None,) * (k - 1 - len(factors))
        err += _contract(factors, 1.0 - y[:, i])[pad]
        tot += _contract(factors, cum_cost[:, i])[pad]
    return err / n, tot / n


def low_sample_train_indices(correct: np.ndarray, n_target: int = 30, seed: int = 0) -> np.ndarray:
    """Balanced low-sample training subset of §2.4 "Performance in the Low-Sample Limit".

    For n_target // (2k) rounds, draw for every model one query it answered
    correctly and one it got wrong (when it has any), and pool the draws.
    Collisions make the result smaller than n_target (the thesis reports 20-30
    examples for n_target = 30). ``correct`` is the (n x k) 0/1 train matrix;
    returns sorted unique row indices.
    """
    y = _as_matrix("correct", correct)
    n, k = y.shape
    rounds = n_target // (2 * k)
    if rounds < 1:
        raise ValueError(f"n_target={n_target} is too small for {k} models: need at least {2 * k}")
    rng = np.random.default_rng(seed)
    picked: list[int] = []
    for _ in range(rounds):
        for j in range(k):
            for label in (1.0, 0.0):
                pool = np.flatnonzero(y[:, j] == label)
                if pool.size:
                    picked.append(int(rng.choice(pool)))
    return np.unique(picked)
