"""RUCB, ε-greedy and the Bradley-Terry fit against their textbook definitions on fixed win matrices."""

import numpy as np
import pytest

from compass.matching.baselines import RUCB, EpsilonGreedy, bradley_terry, copeland, mean_win_rate, rucb_upper

# W_ij = times i beat j; arm 3 never played
W = np.array([[0, 3, 1, 0], [1, 0, 2, 0], [4, 0, 0, 0], [0, 0, 0, 0]], float)


def test_rucb_upper_confidence_bounds():
    U = rucb_upper(W, t=10, alpha=0.51)
    bonus = lambda n: np.sqrt(0.51 * np.log(10) / n)  # noqa: E731
    assert U[0, 1] == pytest.approx(3 / 4 + bonus(4)) and U[1, 0] == pytest.approx(1 / 4 + bonus(4))
    assert U[0, 2] == pytest.approx(1 / 5 + bonus(5)) and U[2, 0] == pytest.approx(4 / 5 + bonus(5))
    assert U[1, 2] == pytest.approx(1.0 + bonus(2)) and U[2, 1] == pytest.approx(0.0 + bonus(2))
    assert U[0, 3] == 1 and U[3, 0] == 1 and np.all(np.diag(U) == 0.5)


def test_rucb_champion_and_opponent():
    U = rucb_upper(W, t=10, alpha=0.51)
    # champions: rows with every u_cj >= 1/2 (the smallest, u_21 = 0 + 0.766, still passes)
    C = np.flatnonzero((U >= 0.5).all(axis=1))
    assert list(C) == [0, 1, 2, 3]
    rucb = RUCB(4, seed=0)
    rucb.W = W.copy()
    # a single champion: it becomes the hypothesized best and is always chosen
    U1 = U.copy()
    U1[[0, 1, 3], 2] = 0.1
    assert rucb.champion(U1) == 2 and rucb.hypothesis == 2
    # opponent d = argmax_j u_j,c: against champion 0, u_20 = 4/5 + 0.48 beats u_30 = 1 (never played)
    assert U[2, 0] > U[3, 0] == 1 and rucb.opponent(U, 0) == 2
    # a tie including c itself: d != c
    U2 = np.full((3, 3), 0.5)
    assert {rucb.opponent(U2, 1) for _ in range(30)} == {0, 2}


def test_rucb_hypothesis_is_picked_half_the_time():
    rucb = RUCB(3, seed=1)
    U = np.full((3, 3), 0.6)
    rucb.hypothesis = 0
    picks = np.array([rucb.champion(U) for _ in range(4000)])
    assert (picks == 0).mean() == pytest.approx(0.5, abs=0.03)
    assert (picks == 1).mean() == pytest.approx(0.25, abs=0.03)


def test_copeland_and_mean_win_rate():
    # p̂: 0 beats 1 (3/4), loses to 2 (1/5); 1 beats 2 (2/2); 3 unplayed (½)
    assert copeland(W) == pytest.approx(np.array([1, 1, 1, 0]) / 3)
    assert mean_win_rate(W) == pytest.approx(np.array([3 / 4 + 1 / 5 + 0.5, 1 / 4 + 1 + 0.5, 4 / 5 + 0 + 0.5, 1.5]) / 3)


def test_epsilon_greedy_exploits_the_best_mean_and_explores_at_rate_epsilon():
    greedy = EpsilonGreedy(4, seed=0, epsilon=0.0)
    greedy.W = W.copy()
    s = mean_win_rate(W)  # [0.483, 0.583, 0.433, 0.5] -> champion 1, challenger 3
    assert [greedy.select(1, 1.0) for _ in range(5)] == [(1, 3)] * 5 and greedy.best() == int(np.argmax(s))
    explorer = EpsilonGreedy(4, seed=0, epsilon=0.4)
    explorer.W = W.copy()
    champions = np.array([explorer.select(1, 1.0)[0] for _ in range(5000)])
    # P(champion = 1) = 1 − ε + ε/4
    assert (champions == 1).mean() == pytest.approx(0.6 + 0.1, abs=0.02)


def test_bradley_terry_reaches_the_two_model_mle():
    W2 = np.array([[6, 0], [0, 0]], float)
    W2[0, 1], W2[1, 0], W2[0, 0] = 6, 2, 0
    theta = bradley_terry(W2, np.zeros(2), steps=5000, lr=0.01)
    assert theta[0] - theta[1] == pytest.approx(np.log(6 / 2), abs=1e-6) and theta.sum() == pytest.approx(0)


def test_lma_refits_bradley_terry_at_rounds_1_2_4_6_and_names_its_argmax():
    """C.4.1: θ is refit at rounds 1, 2, 4, 6, ... from the win matrix and best() is argmax θ of the last refit."""
    from compass.matching.baselines import LMArena

    lma = LMArena(3, seed=0)
    lma.observe(1, 2, 0, True, 0.0)
    W1 = np.array([[0, 0, 0], [0, 0, 0], [1, 0, 0]], float)
    np.testing.assert_allclose(lma.theta, bradley_terry(W1, np.zeros(3)))
    assert lma.best() == 2 and lma.theta[2] > 0
    lma.observe(2, 1, 2, True, 0.0)  # round 2: refit again, from the previous θ
    theta2 = lma.theta.copy()
    np.testing.assert_allclose(theta2, bradley_terry(W1 + np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]]),
                                                     bradley_terry(W1, np.zeros(3))))
    lma.observe(3, 1, 0, True, 0.0)  # round 3: no refit
    np.testing.assert_allclose(lma.theta, theta2)
    for t in (4, 5, 6):
        lma.observe(t, 1, 0, True, 0.0)
    assert lma.best() == 1 and lma.theta[1] > lma.theta[2] > lma.theta[0]


def test_cost_lma_penalizes_cost_and_paces():
    """C.4.2: s_i = θ_i + 1/√(1 + n_i) − (α_c + λ_t) c_i, λ_{t+1} = max(0, λ_t + η(c_t − γB/T)); with equal θ the
    anchor is drawn mostly among the cheap models."""
    from compass.matching.baselines import CostLMA

    c = np.array([0.1, 1.0, 10.0])
    lma = CostLMA(3, 0, c, np.full(3, 0.001), budget=0.01, rounds=10, cost_weight=0.01, eta=0.5, budget_guard=False)
    assert lma.score() == pytest.approx(1.0 - 0.01 * c)
    lma.observe(1, 0, 1, True, 2.001)
    assert lma.lam == pytest.approx(0.5 * (2.001 - 0.001))
    n = np.array([1, 1, 0])
    assert lma.score() == pytest.approx(lma.theta + 1 / np.sqrt(1 + n) - (0.01 + lma.lam) * c)
    anchors = np.bincount([lma.select(2, 1.0)[0] for _ in range(3000)], minlength=3) / 3000
    assert anchors[2] < 0.05 < anchors[1] < anchors[0]
