"""Pareto peeling and tiers vs an O(n^2)-per-layer brute force (random point sets), and the
blocked ENS-BS implementation vs the old pass-by-pass one (`reference_pareto`, property tests)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass import pareto
from compass.mlcompass.pareto import merge_layers, pareto_tiers
from tests.compass.mlcompass.frontier import reference_pareto as reference


def brute_dominates(p, q, eps):
    """p eps-dominates q: p >= q everywhere and better by more than eps somewhere."""
    return all(pi >= qi for pi, qi in zip(p, q)) and max(pi - qi for pi, qi in zip(p, q)) > eps


def brute_front(points, ids, eps):
    return [i for i in ids if not any(brute_dominates(points[j], points[i], eps) for j in ids if j != i)]


def brute_layers(points, eps):
    remaining, layer, k = list(range(len(points))), {}, 1
    while remaining:
        front = brute_front(points, remaining, eps)
        for i in front:
            layer[i] = k
        remaining = [i for i in remaining if i not in front]
        k += 1
    return [layer[i] for i in range(len(points))]


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("eps", [0.0, 0.025, 0.1])
@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force(dim, eps, seed):
    rng = np.random.default_rng(seed)
    x = rng.random((40, dim))
    if seed % 2:  # coarse grid: exact ties and duplicates
        x = np.round(x * 5) / 5
    points = [tuple(r) for r in x]
    measures = pd.DataFrame(x, index=[f"m{i}" for i in range(len(x))])
    out = pareto_tiers(measures, eps=eps, n_tiers=3)
    layers = brute_layers(points, eps)
    assert out["peel_layer"].tolist() == layers
    n_layers = max(layers)
    tiers = merge_layers(n_layers, 3)[np.array(layers) - 1]
    assert out["tier"].tolist() == tiers.tolist()
    for t in set(tiers.tolist()):
        members = [i for i in range(len(points)) if tiers[i] == t]
        eff = set(brute_front(points, members, eps))
        got = set(np.flatnonzero(out["pareto_efficient"].to_numpy() & (out["tier"].to_numpy() == t)))
        assert got == eff


def test_merge_rule_weakest_to_strongest():
    # 5 layers -> 3 tiers: layers {1,2} strongest (3), {3,4} -> 2, {5} -> 1
    assert merge_layers(5, 3).tolist() == [3, 3, 2, 2, 1]
    assert merge_layers(2, 3).tolist() == [2, 1]
    assert merge_layers(4, None).tolist() == [4, 3, 2, 1]


def test_paper_definition_at_zero_tolerance():
    x = pd.DataFrame(
        [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.5, 0.5], [0.4, 0.5], [0.1, 0.1]],
        index=["a", "b", "c", "c2", "d", "e"],
    )
    out = pareto_tiers(x, eps=0.0, n_tiers=None).set_index("model_id")
    # identical profiles do not dominate each other (x(m') != x(m) required)
    assert out.loc[["a", "b", "c", "c2"], "peel_layer"].tolist() == [1, 1, 1, 1]
    assert out.loc["d", "peel_layer"] == 2 and out.loc["e", "peel_layer"] == 3
    assert out.loc["a", "tier"] == 3 and out.loc["e", "tier"] == 1
    # with tolerance 0.1, d (0.1 behind c on one axis) is no longer dominated
    loose = pareto_tiers(x, eps=0.1, n_tiers=None).set_index("model_id")
    assert loose.loc["d", "peel_layer"] == 1 and loose.loc["e", "peel_layer"] == 2


def test_merged_tier_has_dominated_members():
    # two layers merged into one tier: the inner layer becomes dominated within the tier
    x = pd.DataFrame([[1.0, 0.2], [0.2, 1.0], [0.8, 0.1], [0.1, 0.8]], index=list("abcd"))
    out = pareto_tiers(x, eps=0.0, n_tiers=1).set_index("model_id")
    assert (out["tier"] == 1).all()
    assert out["pareto_efficient"].to_dict() == {"a": True, "b": True, "c": False, "d": False}


def test_efficient_set_grows_with_tolerance():
    # points in a thin shell just inside the unit quarter circle: many near-ties
    rng = np.random.default_rng(0)
    u = np.abs(rng.normal(size=(60, 2)))
    x = pd.DataFrame(u / np.linalg.norm(u, axis=1)[:, None] * (1 - 0.08 * rng.random((60, 1))))
    sizes = [(pareto_tiers(x, eps=e, n_tiers=3)["peel_layer"] == 1).sum() for e in (0, 0.01, 0.025, 0.05, 0.075, 0.1)]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]


@pytest.mark.parametrize(
    "measures, kwargs, message",
    [
        (pd.DataFrame([[0.1, np.nan]], index=["bad-model"]), {}, "bad-model"),
        (pd.DataFrame([[0.1, 0.2]]), {"eps": -0.1}, "eps"),
        (pd.DataFrame([[0.1, 0.2]]), {"n_tiers": 0}, "n_tiers"),
        (pd.DataFrame(), {}, "non-empty"),
    ],
)
def test_bad_input_raises(measures, kwargs, message):
    with pytest.raises(ValueError, match=message):
        pareto_tiers(measures, **kwargs)


# --- Property tests: blocked ENS-BS peeling vs the old pass-by-pass implementation ----------

# The production module works in blocks (MODEL_BLOCK models, LAYER_CHUNK members per bounding
# box, PAIR_BLOCK pairs per vectorized step). Catalogs of <= 300 models fit in one default
# block, so the property test also runs with small settings that force every code path:
# many blocks, one model per block (plain ENS-BS), one member per chunk, one pair per batch.
BLOCK_SETTINGS = {
    "default": {},
    "small": {"MODEL_BLOCK": 16, "LAYER_CHUNK": 4, "PAIR_BLOCK": 64},
    "odd": {"MODEL_BLOCK": 37, "LAYER_CHUNK": 5, "PAIR_BLOCK": 1000},
    "tiny": {"MODEL_BLOCK": 1, "LAYER_CHUNK": 1, "PAIR_BLOCK": 1},
}
EPS_VALUES = (0.0, 0.01, 0.05, 0.1)
N_TIERS_VALUES = (None, 1, 2, 3, 5)


def random_catalog(rng: np.random.Generator, n: int, dim: int) -> pd.DataFrame:
    """Random measures in [0, 1]^dim with frequent exact ties and duplicated rows.

    Shapes: independent uniform, positively correlated (a general factor: many layers),
    anti-correlated (a few wide fronts); values are usually rounded to a coarse grid (k/2 ..
    k/100, so differences land exactly on eps = 0.01, 0.05, 0.1 in decimal but not always in
    binary floating point), and some rows are copies of others. A fourth shape has one
    coordinate on a grid in [0.5, 1] and the others in {0, 1e-17, 2e-17}: row sums tie in
    floating point although rows dominate each other (at eps = 0) by 1e-17.
    """
    shape = rng.integers(4)
    grid = rng.choice([0, 2, 3, 5, 10, 20, 100])
    if shape == 0:
        x = rng.random((n, dim))
    elif shape == 1:
        x = np.clip(0.5 + 0.2 * rng.standard_normal((n, 1)) + 0.1 * rng.standard_normal((n, dim)), 0, 1)
    elif shape == 2:
        u = rng.dirichlet(np.ones(dim), size=n) if dim > 1 else rng.random((n, 1))
        x = np.clip(u + 0.05 * rng.standard_normal((n, dim)), 0, 1)
    else:
        x = rng.choice([0.0, 1e-17, 2e-17], size=(n, dim))
        x[:, 0] = 0.5 + np.round(rng.random(n) * 10) / 20
        grid = 0
    if grid:
        x = np.round(x * grid) / grid
    if n > 1 and rng.random() < 0.7:
        k = rng.integers(1, max(2, n // 3))
        x[rng.integers(n, size=k)] = x[rng.integers(n, size=k)]
    return pd.DataFrame(x, index=pd.Index([f"m{i:03d}" for i in range(n)], name="model_id"),
                        columns=[f"C{i + 1}" for i in range(dim)])


@pytest.mark.parametrize("settings", list(BLOCK_SETTINGS), ids=list(BLOCK_SETTINGS))
@pytest.mark.parametrize("seed", range(4))
def test_property_matches_reference(settings, seed, monkeypatch):
    for name, value in BLOCK_SETTINGS[settings].items():
        monkeypatch.setattr(pareto, name, value)
    rng = np.random.default_rng(1000 * seed + len(settings))
    checked = 0
    for _ in range(30):
        n = int(rng.choice([1, 2, 3, int(rng.integers(1, 301))], p=[0.05, 0.05, 0.05, 0.85]))
        dim = int(rng.integers(1, 6))
        measures = random_catalog(rng, n, dim)
        eps = float(rng.choice(EPS_VALUES))
        n_tiers = N_TIERS_VALUES[rng.integers(len(N_TIERS_VALUES))]
        got = pareto_tiers(measures, eps=eps, n_tiers=n_tiers)
        want = reference.pareto_tiers(measures, eps=eps, n_tiers=n_tiers)
        pd.testing.assert_frame_equal(got, want, obj=f"pareto_tiers(n={n}, I={dim}, eps={eps}, n_tiers={n_tiers})")
        checked += 1
    assert checked == 30


@pytest.mark.parametrize("eps", EPS_VALUES)
def test_every_eps_and_tier_count_on_one_catalog(eps):
    # all (eps, n_tiers) combinations on the same tie-heavy catalog, default block settings
    rng = np.random.default_rng(7)
    measures = random_catalog(rng, 300, 3)
    measures[:] = np.round(measures.to_numpy() * 20) / 20
    for n_tiers in N_TIERS_VALUES:
        pd.testing.assert_frame_equal(pareto_tiers(measures, eps=eps, n_tiers=n_tiers),
                                      reference.pareto_tiers(measures, eps=eps, n_tiers=n_tiers))


@pytest.mark.parametrize("eps", [0.0, 0.05])
def test_many_blocks_with_default_settings(eps):
    # 1,100 models span three default blocks (MODEL_BLOCK = 512) and layers of many chunks
    rng = np.random.default_rng(11)
    f = rng.standard_normal((1100, 1))
    x = 0.6 * f + 0.8 * rng.standard_normal((1100, 2))
    measures = pd.DataFrame(np.round((x - x.min(0)) / np.ptp(x, axis=0), 2))
    pd.testing.assert_frame_equal(pareto_tiers(measures, eps=eps, n_tiers=3),
                                  reference.pareto_tiers(measures, eps=eps, n_tiers=3))


@pytest.mark.parametrize("settings", ["default", "tiny"])
def test_float_sum_ties_keep_dominators_first(settings, monkeypatch):
    # 1.0 + 1e-17 == 1.0 in floating point: the row sums tie, yet e dominates b dominates a
    # (by 1e-17 > 0 at eps = 0). Listed dominated-first, so an order by row sum alone would
    # place a before its dominators.
    for name, value in BLOCK_SETTINGS[settings].items():
        monkeypatch.setattr(pareto, name, value)
    measures = pd.DataFrame([[1.0, 0.0], [1.0, 1e-17], [1.0, 2e-17], [0.5, 0.0]], index=list("abec"))
    assert measures.sum(axis=1).tolist() == [1.0, 1.0, 1.0, 0.5]
    out = pareto_tiers(measures, eps=0.0, n_tiers=None)
    assert out.set_index("model_id")["peel_layer"].to_dict() == {"e": 1, "b": 2, "a": 3, "c": 4}
    pd.testing.assert_frame_equal(out, reference.pareto_tiers(measures, eps=0.0, n_tiers=None))


@pytest.mark.parametrize("block", [1, 7, 10**9])
def test_dominated_mask_chunked_matches_reference(block, monkeypatch):
    monkeypatch.setattr(pareto, "DOMINATED_MASK_BLOCK", block)
    rng = np.random.default_rng(block % 97)
    for _ in range(20):
        x = random_catalog(rng, int(rng.integers(1, 80)), int(rng.integers(1, 5))).to_numpy()
        eps = float(rng.choice(EPS_VALUES))
        np.testing.assert_array_equal(pareto.dominated_mask(x, eps), reference.dominated_mask(x, eps))


def test_peel_layers_matches_reference_and_rejects_bad_input():
    rng = np.random.default_rng(3)
    x = random_catalog(rng, 200, 2).to_numpy()
    np.testing.assert_array_equal(pareto.peel_layers(x, 0.05), reference.peel_layers(x, 0.05))
    assert pareto.peel_layers(np.empty((0, 2))).shape == (0,)
    with pytest.raises(ValueError, match="finite"):
        pareto.peel_layers(np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="eps"):  # the old loop never ended with eps < 0
        pareto.peel_layers(x, -0.01)


def test_catalog_of_20000_peels_without_quadratic_memory():
    # 20,000 x 3: an n x n boolean alone would be 400 MB, n x n x I float64 9.6 GB.
    rng = np.random.default_rng(5)
    f = rng.standard_normal((20_000, 1))
    x = 0.6 * f + 0.8 * rng.standard_normal((20_000, 3))
    measures = pd.DataFrame((x - x.min(0)) / np.ptp(x, axis=0))
    tracemalloc.start()
    try:
        out = pareto_tiers(measures, eps=0.05, n_tiers=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, f"peak traced memory {peak / 2**20:.0f} MB"
    # Spot-check the recursion layer(m) = 1 + max layer of its eps-dominators on a sample,
    # against all 20,000 models (O(sample * n * I) memory).
    layer, xv = out["peel_layer"].to_numpy(), measures.to_numpy()
    for m in rng.choice(20_000, size=150, replace=False):
        diff = xv - xv[m]
        dominators = (diff >= 0).all(axis=1) & (diff.max(axis=1) > 0.05)
        assert layer[m] == 1 + (layer[dominators].max() if dominators.any() else 0)
    # efficient <=> outermost layer of its tier
    first = out.groupby("tier")["peel_layer"].transform("min")
    assert (out["pareto_efficient"] == (out["peel_layer"] == first)).all()
