"""evaluate_thresholds against a brute-force per-query loop (thesis eq 2.1, eq 3.7). Synthetic data."""

import numpy as np
import pytest

from compass.cascades.evaluate import answering_model, evaluate_thresholds


def brute_force(p, y, c, thresholds):
    errs, costs = [], []
    for t in thresholds:
        e_sum = c_sum = 0.0
        for q in range(p.shape[0]):
            spent = 0.0
            for i in range(p.shape[1]):
                spent += c[q, i]
                if i == p.shape[1] - 1 or p[q, i] > t[i]:
                    e_sum += 1 - y[q, i]
                    break
            c_sum += spent
        errs.append(e_sum / p.shape[0])
        costs.append(c_sum / p.shape[0])
    return np.array(errs), np.array(costs)


@pytest.fixture
def cascade():
    rng = np.random.default_rng(3)
    n, k = 60, 4
    # Round confidences so thresholds hit exact ties: exercises the strict ">" rule.
    p = np.round(rng.random((n, k)), 1)
    y = (rng.random((n, k)) < p).astype(float)
    c = rng.gamma(2.0, 1.0, (n, k)) * np.array([1, 3, 10, 30])
    t = np.round(rng.random((25, k - 1)), 1)
    return p, y, c, t


def test_matches_brute_force(cascade):
    p, y, c, t = cascade
    err, cost = evaluate_thresholds(p, y, c, t)
    e_ref, c_ref = brute_force(p, y, c, t)
    np.testing.assert_allclose(err, e_ref, atol=1e-12)
    np.testing.assert_allclose(cost, c_ref, rtol=1e-12)


def test_corner_thresholds_give_single_model_or_all_models(cascade):
    p, y, c, _ = cascade
    k = p.shape[1]
    # Threshold below every confidence: M_1 answers everything at its own cost.
    err, cost = evaluate_thresholds(p, y, c, np.full((1, k - 1), -1.0))
    assert err[0] == pytest.approx(1 - y[:, 0].mean())
    assert cost[0] == pytest.approx(c[:, 0].mean())
    # Threshold at 1.0 (no confidence exceeds it): all models run, the last answers.
    err, cost = evaluate_thresholds(p, y, c, np.ones((1, k - 1)))
    assert err[0] == pytest.approx(1 - y[:, -1].mean())
    assert cost[0] == pytest.approx(c.sum(axis=1).mean())


def test_mean_cost_mode_charges_model_means(cascade):
    p, y, c, t = cascade
    _, cost = evaluate_thresholds(p, y, c, t, mean_cost=True)
    _, ref = brute_force(p, y, np.broadcast_to(c.mean(axis=0), c.shape), t)
    np.testing.assert_allclose(cost, ref, rtol=1e-12)


def test_tie_defers():
    p = np.array([[0.5, 0.9]])
    assert answering_model(p, np.array([[0.5]]))[0, 0] == 1
    assert answering_model(p, np.array([[0.49]]))[0, 0] == 0


def test_chunking_is_invisible(cascade, monkeypatch):
    import compass.cascades.evaluate as ev

    p, y, c, t = cascade
    full = evaluate_thresholds(p, y, c, t)
    monkeypatch.setattr(ev, "_CHUNK_ELEMENTS", 1)
    chunked = evaluate_thresholds(p, y, c, t)
    np.testing.assert_array_equal(full[0], chunked[0])
    np.testing.assert_array_equal(full[1], chunked[1])


@pytest.mark.parametrize(
    "override, msg",
    [
        ({"thresholds": np.zeros((2, 3))}, "3-model cascade"),
        ({"cost": -np.ones((5, 3))}, "negative"),
        ({"correct": np.ones((4, 3))}, "shape"),
        ({"p_correct": np.full((5, 3), np.nan)}, "NaN"),
        ({"p_correct": np.full((5, 1), 0.5)}, "at least 2 models"),
    ],
)
def test_bad_input_raises(override, msg):
    args = {"p_correct": np.full((5, 3), 0.5), "correct": np.ones((5, 3)), "cost": np.ones((5, 3)), "thresholds": np.zeros((2, 2))}
    args.update(override)
    with pytest.raises(ValueError, match=msg):
        evaluate_thresholds(**args)


def test_evaluate_grid_equals_pointwise_evaluation(cascade):
    from compass.cascades.evaluate import evaluate_grid

    p, y, c, _ = cascade
    grids = [np.array([-1.0, 0.2, 0.5, 1.0]), np.array([0.0, 0.3, 0.7]), np.array([0.1, 0.4, 0.6, 0.8, 1.0])]
    err, cost = evaluate_grid(p, y, c, grids)
    assert err.shape == cost.shape == (4, 3, 5)
    mesh = np.stack([g.ravel() for g in np.meshgrid(*grids, indexing="ij")], axis=1)
    e_ref, c_ref = brute_force(p, y, c, mesh)
    np.testing.assert_allclose(err.ravel(), e_ref, atol=1e-12)
    np.testing.assert_allclose(cost.ravel(), c_ref, rtol=1e-12)
    with pytest.raises(ValueError, match="k-1 = 3"):
        evaluate_grid(p, y, c, grids[:2])


def test_low_sample_subset_is_balanced_and_small():
    from compass.cascades.evaluate import low_sample_train_indices

    rng = np.random.default_rng(0)
    y = (rng.random((300, 5)) < np.array([0.4, 0.55, 0.65, 0.8, 0.85])).astype(float)
    for seed in range(5):
        idx = low_sample_train_indices(y, n_target=30, seed=seed)
        assert 20 <= idx.size <= 30
        sub = y[idx]
        assert (sub.max(axis=0) == 1).all() and (sub.min(axis=0) == 0).all()
    with pytest.raises(ValueError, match="too small"):
        low_sample_train_indices(y, n_target=8)
