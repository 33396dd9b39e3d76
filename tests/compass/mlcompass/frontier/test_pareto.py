"""Pareto peeling and tiers vs an O(n^2)-per-layer brute force (random point sets)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compass.mlcompass.pareto import merge_layers, pareto_tiers


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
