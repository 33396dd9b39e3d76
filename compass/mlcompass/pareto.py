"""Pareto peeling and capability tiers (ML Compass §4.4 Step 1; EC §8.4 "Tolerance").

Dominance (§4.4): m' dominates m if x(m') >= x(m) componentwise and x(m') != x(m).
The paper varies a Pareto tolerance eps in {0, .01, .025, .05, .075, .10} (EC §8.4) and
says only that a larger tolerance makes acceptance onto the frontier more relaxed; it
gives no formula. We use the reading that reduces exactly to the paper's definition at
eps = 0 and enlarges the efficient set as eps grows:

    m' eps-dominates m  iff  x(m') >= x(m) componentwise  and  max_i (x_i(m') - x_i(m)) > eps,

i.e. improvements of at most eps are treated as ties. The relation is irreflexive and
transitive, so every non-empty set has a non-dominated layer and peeling terminates.

Peeling: layer 1 is the non-dominated set of all models, layer 2 that of the rest, ...
Tiers are ordered weakest (t=1) to strongest (t=T) as in the paper; adjacent layers are
merged into T tiers by splitting the layer sequence into T contiguous groups of as equal
a number of layers as possible, extra layers going to the strongest tiers (the paper
merges adjacent layers but does not state the rule; this one is ours). Within each tier
the efficient set M_eff is the tier's own non-dominated set under the same relation.

Algorithm (scales to catalogs of tens of thousands of models). Peeling pass by pass
compares every remaining pair on every pass: O(L n^2 I) time and an n x n x I array per
pass (about 6 GB at n = 20,000, I = 2). We compute the same layers with Efficient
Non-dominated Sort with binary search (ENS-BS; Zhang, Tian, Cheng & Jin 2015, IEEE TEVC
19(2)), using three facts about the eps-relation (a strict partial order):

  * if m' eps-dominates m then x(m') >= x(m) and x(m') != x(m), so m' comes first in
    decreasing order of the row sum, ties broken by decreasing lexicographic order (a
    linear extension of the componentwise order; floating-point sums are only weakly
    monotone, hence the tie-break). Processing models in that order sees every
    dominator of m before m;
  * peel layer(m) = 1 + the largest layer of the models that eps-dominate m (1 if none);
  * if a member of layer k dominates m, then (transitivity, and every member of layer k
    has a dominator in layer k - 1) some member of every layer j < k dominates m. So
    "m is dominated by some member of layer k" holds for a prefix k = 1..K of the
    layers, and K is found by binary search over them.

The models are taken in that order in blocks of `MODEL_BLOCK`. Each block member is
binary-searched against the layers of the models before the block (all members of the
block in lockstep; each probe checks the member against the probed layer, vectorized over
the layer's members, which are cut into chunks of `LAYER_CHUNK` with bounding boxes so
that a chunk wholly above the member settles the probe and a chunk that cannot hold a
dominator is skipped); a `MODEL_BLOCK` x `MODEL_BLOCK` check inside the block then adds
the dominators that lie in the block itself. Every dominance test uses the same
floating-point differences x_i(m') - x_i(m) as the definition above, so the layers are
identical to pass-by-pass peeling, not approximately equal. Memory is O(n I) plus
fixed-size work arrays (`PAIR_BLOCK` pairs, a block x block matrix); no n x n array is
built. Within-tier efficiency then follows from the layers without a second dominance
pass (see `pareto_tiers`).

We wrote this with numpy rather than take a library: non-dominated sorting libraries
(e.g. pymoo's) minimize, know no eps-tolerance of this form and would bring a large
optimization framework as a dependency. Exactness against the previous pass-by-pass
implementation (kept in tests/compass/mlcompass/frontier/reference_pareto.py) is checked
by the property tests in tests/compass/mlcompass/frontier/test_pareto.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Number of float64 elements of the (n, chunk, I) difference block `dominated_mask` builds
#: at a time (32 MB).
DOMINATED_MASK_BLOCK = 4_000_000
#: Models placed per block by `peel_layers` (the in-block check is MODEL_BLOCK^2).
MODEL_BLOCK = 512
#: Layer members per bounding box in `peel_layers`.
LAYER_CHUNK = 32
#: Most (model, candidate) pairs `peel_layers` compares in one vectorized step.
PAIR_BLOCK = 1 << 18


def dominated_mask(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Boolean (n,) array: True where the row of `x` (n, I) is eps-dominated by another row.

    Brute force over all pairs (§4.4 Step 1; EC §8.4 tolerance eps), in column blocks so
    that memory is O(chunk * n * I) with chunk * n * I <= `DOMINATED_MASK_BLOCK`.
    `peel_layers` does not use it; it is kept for one-off checks of a single set.
    """
    n = x.shape[0]
    width = max(1, int(np.prod(x.shape[1:], dtype=np.int64)))
    chunk = max(1, DOMINATED_MASK_BLOCK // max(1, n * width))
    out = np.zeros(n, dtype=bool)
    for start in range(0, n, chunk):
        block = slice(start, min(n, start + chunk))
        diff = x[:, None, :] - x[None, block, :]  # diff[j, m] = x(j) - x(m), m in block
        dominates = (diff >= 0).all(axis=2) & (diff.max(axis=2) > eps)
        out[block] = dominates.any(axis=0)
    return out


def _expand(begin: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ragged ranges: (owner o, index) for every index in [begin[o], begin[o] + size[o])."""
    ends = np.cumsum(size)
    total = int(ends[-1]) if len(ends) else 0
    return np.repeat(np.arange(len(size)), size), np.arange(total) + np.repeat(begin - (ends - size), size)


def _batches(weights: np.ndarray, cap: int):
    """Consecutive slices of range(len(weights)) with total weight <= cap (or a single item)."""
    cum = np.cumsum(weights)
    a = 0
    while a < len(weights):
        base = cum[a - 1] if a else 0
        b = max(a + 1, int(np.searchsorted(cum, base + cap, side="right")))
        yield slice(a, b)
        a = b


def _dominating_owners(points: np.ndarray, j: np.ndarray, vt: np.ndarray, owner: np.ndarray, eps: float) -> np.ndarray:
    """Owners of the pairs (owner, j) where column j of `points` (I, P) eps-dominates column owner of `vt`.

    Dimension by dimension, dropping pairs as soon as x_i(j) < x_i(owner).
    """
    gt = np.zeros(len(j), dtype=bool)
    for i in range(points.shape[0]):
        d = points[i, j] - vt[i, owner]  # x_i(m') - x_i(m), as in the definition
        ok = np.flatnonzero(d >= 0)
        j, owner, gt, d = j[ok], owner[ok], gt[ok], d[ok]
        gt |= d > eps
    return owner[gt]


class _Layers:
    """Models placed so far, sorted by (layer, -x_1) and cut into chunks with bounding boxes."""

    def __init__(self, xs: np.ndarray, layer: np.ndarray, n_layers: int):
        perm = np.lexsort((-xs[:, 0], layer))
        self.points = np.ascontiguousarray(xs[perm].T)  # (I, P)
        starts = np.searchsorted(layer[perm], np.arange(1, n_layers + 2))  # no layer is empty
        n_chunks = -(-np.diff(starts) // LAYER_CHUNK)
        self.chunk_start = np.r_[0, np.cumsum(n_chunks)]  # chunks of layer k (0-based): [chunk_start[k], chunk_start[k+1])
        of_layer = np.repeat(np.arange(n_layers), n_chunks)
        self.begin = starts[of_layer] + LAYER_CHUNK * (np.arange(len(of_layer)) - self.chunk_start[of_layer])
        self.size = np.minimum(self.begin + LAYER_CHUNK, starts[of_layer + 1]) - self.begin
        self.box_max = np.maximum.reduceat(self.points, self.begin, axis=1)
        self.box_min = np.minimum.reduceat(self.points, self.begin, axis=1)

    def dominated(self, vt: np.ndarray, layer: np.ndarray, eps: float) -> np.ndarray:
        """For each column of `vt` (I, a): is it eps-dominated by a member of layer `layer` (0-based)?"""
        out = np.zeros(vt.shape[1], dtype=bool)
        n_chunks = self.chunk_start[layer + 1] - self.chunk_start[layer]
        for sl in _batches(n_chunks, PAIR_BLOCK):
            v = vt[:, sl]
            owner, ch = _expand(self.chunk_start[layer[sl]], n_chunks[sl])
            # A member m' of a chunk can dominate v only if the chunk's max >= v everywhere and
            # exceeds it by > eps somewhere; if the chunk's min already does, every member does
            # (x_i(m') - v_i >= min_i - v_i, and floating-point subtraction is monotone).
            may, may_gt = np.ones(len(ch), dtype=bool), np.zeros(len(ch), dtype=bool)
            sure, sure_gt = np.ones(len(ch), dtype=bool), np.zeros(len(ch), dtype=bool)
            for i in range(vt.shape[0]):
                vi = v[i, owner]
                d = self.box_max[i, ch] - vi
                may &= d >= 0
                may_gt |= d > eps
                d = self.box_min[i, ch] - vi
                sure &= d >= 0
                sure_gt |= d > eps
            hit = np.zeros(v.shape[1], dtype=bool)
            hit[owner[sure & sure_gt]] = True
            keep = np.flatnonzero(may & may_gt & ~hit[owner])
            owner, ch = owner[keep], ch[keep]
            for sl2 in _batches(self.size[ch], PAIR_BLOCK):
                o2, j = _expand(self.begin[ch[sl2]], self.size[ch[sl2]])
                hit[_dominating_owners(self.points, j, v, owner[sl2][o2], eps)] = True
            out[sl] = hit
        return out


def peel_layers(x: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Layer index (1 = outermost front) of each row of `x` under repeated eps-peeling.

    Same result as peeling the non-dominated set pass by pass (§4.4 Step 1; EC §8.4
    tolerance eps), computed by blocked ENS-BS (see the module docstring). `x` must be
    finite and `eps` >= 0 (with eps < 0 a row would dominate itself and peeling would never
    end).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    layer = np.zeros(n, dtype=int)
    if n == 0:
        return layer
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"x must be a 2-D (models x measures) array, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("x must be finite")
    if not eps >= 0:
        raise ValueError(f"Pareto tolerance eps must be >= 0, got {eps}")
    # Decreasing row sum, ties by decreasing lexicographic order: dominators come first.
    order = np.lexsort(tuple(-x[:, i] for i in range(x.shape[1] - 1, -1, -1)) + (-x.sum(axis=1),))
    xs = np.ascontiguousarray(x[order])
    layer_sorted = np.zeros(n, dtype=int)
    n_layers, placed = 0, None
    for start in range(0, n, MODEL_BLOCK):
        stop = min(n, start + MODEL_BLOCK)
        v = xs[start:stop]
        vt = np.ascontiguousarray(v.T)
        # Binary search (all block members in lockstep) for K = the number of leading layers
        # of the models placed before the block that hold a dominator: layers 0..lo-1
        # (0-based) dominate, layers hi.. do not.
        lo = np.zeros(len(v), dtype=np.int64)
        hi = np.full(len(v), n_layers, dtype=np.int64)
        while (active := np.flatnonzero(lo < hi)).size:
            mid = (lo[active] + hi[active]) // 2
            hit = placed.dominated(vt[:, active], mid, eps)
            lo[active[hit]] = mid[hit] + 1
            hi[active[~hit]] = mid[~hit]
        # Dominators inside the block: dom[r, q] = block model q eps-dominates block model r
        # (then q < r in the processing order).
        ge = np.ones((len(v), len(v)), dtype=bool)
        gt = np.zeros((len(v), len(v)), dtype=bool)
        for i in range(x.shape[1]):
            d = v[None, :, i] - v[:, None, i]  # d[r, q] = x_i(q) - x_i(r)
            ge &= d >= 0
            gt |= d > eps
        dom = ge & gt
        lay = lo + 1
        for r in np.flatnonzero(dom.any(axis=1)):  # in processing order: dominators are final
            lay[r] = max(lay[r], lay[dom[r]].max() + 1)
        layer_sorted[start:stop] = lay
        n_layers = max(n_layers, int(lay.max()))
        if stop < n:
            placed = _Layers(xs[:stop], layer_sorted[:stop], n_layers)
    layer[order] = layer_sorted
    return layer


def merge_layers(n_layers: int, n_tiers: int | None) -> np.ndarray:
    """Tier (1 = weakest) for each layer 1..n_layers (layer 1 = strongest)."""
    if n_tiers is None or n_tiers >= n_layers:
        return np.arange(n_layers, 0, -1)
    groups = np.array_split(np.arange(1, n_layers + 1), n_tiers)  # first groups are largest
    tier_of_layer = np.empty(n_layers, dtype=int)
    for g, layers in enumerate(groups):
        tier_of_layer[layers - 1] = n_tiers - g
    return tier_of_layer


def pareto_tiers(measures: pd.DataFrame, eps: float = 0.0, n_tiers: int | None = 3) -> pd.DataFrame:
    """Tier assignment and within-tier efficiency (§4.4 Step 1; EC §8.4 tolerance eps).

    `measures`: index model_id, columns internal measures. Returns DataFrame
    [model_id, tier, pareto_efficient, peel_layer]; tier 1 = weakest, T = strongest
    (T = min(n_tiers, number of layers); `n_tiers=None` keeps one tier per layer).
    """
    if not isinstance(measures, pd.DataFrame) or measures.empty:
        raise ValueError("measures must be a non-empty DataFrame (index model_id, columns factors)")
    x = measures.to_numpy(dtype=float)
    if not np.isfinite(x).all():
        bad = measures.index[~np.isfinite(x).all(axis=1)].tolist()
        raise ValueError(f"measures contain NaN/inf for models {bad}")
    if measures.index.has_duplicates:
        raise ValueError(f"duplicate model_id in measures: {measures.index[measures.index.duplicated()].tolist()}")
    if not 0.0 <= eps < 1.0:
        raise ValueError(f"Pareto tolerance eps must be in [0, 1), got {eps}")
    if n_tiers is not None and n_tiers < 1:
        raise ValueError(f"n_tiers must be >= 1 or None, got {n_tiers}")
    layer = peel_layers(x, eps)
    tier_of_layer = merge_layers(int(layer.max()), n_tiers)
    tier = tier_of_layer[layer - 1]
    # Within-tier efficiency without a second dominance pass. A tier is a contiguous block
    # of layers. A member of the tier's outermost (smallest-index) layer k0 has all its
    # dominators in layers < k0, i.e. outside the tier: it is efficient within the tier. A
    # member of any other layer k > k0 of the tier has a dominator in layer k - 1 (its layer
    # is 1 + the largest layer of its dominators), which is inside the tier: it is not
    # efficient. So pareto_efficient <=> peel_layer is the smallest layer of its tier.
    outermost = np.r_[True, tier_of_layer[1:] != tier_of_layer[:-1]]  # layer l opens its tier
    efficient = outermost[layer - 1]
    return pd.DataFrame(
        {
            "model_id": measures.index.to_numpy(),
            "tier": tier,
            "pareto_efficient": efficient,
            "peel_layer": layer,
        }
    )
