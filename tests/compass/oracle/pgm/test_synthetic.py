"""Tests of the synthetic PGM generator (paper 002 §4.3.2, Appendix G). Synthetic data only."""

import numpy as np
import pandas as pd
import pytest

from compass.oracle.synthetic import generate, generate_counts


def test_mean_success_probability_matches_beta_means():
    # E[pi] = E[1 - D] E[A] for independent D ~ Beta(a, b), A ~ Beta(c, d) (eq. 17 link).
    data = generate_counts(4000, 20, 1, n_topics=30, difficulty_beta=(2.0, 6.0),
                           aptitude_beta=(3.0, 1.0), seed=1)
    assert data.true_p.mean() == pytest.approx(0.75 * 0.75, abs=0.02)
    default = generate_counts(4000, 20, 1, seed=2)  # Appendix G: Beta(1,1) x Beta(5,5) -> 0.25
    assert default.true_p.mean() == pytest.approx(0.25, abs=0.015)
    assert np.all((default.true_p >= 0) & (default.true_p <= 1))


def test_observed_outcomes_match_true_p():
    data = generate(500, 8, 6, seed=3)
    rec = data.records
    assert len(rec) == 500 * 8 * 6
    # Bernoulli mean over 24,000 draws: SE < 0.004
    assert rec["correct"].mean() == pytest.approx(data.true_p.mean(), abs=0.015)
    k = rec.pivot_table(index="query_id", columns="model_id", values="correct", aggfunc="sum").to_numpy()
    assert list(rec["model_id"].unique()) == [f"m{j:03d}" for j in range(8)]
    # per-cell z-scores of k against Binomial(6, p) have unit variance
    z = (k - 6 * data.true_p) / np.sqrt(6 * data.true_p * (1 - data.true_p) + 1e-12)
    assert np.var(z[(data.true_p > 0.05) & (data.true_p < 0.95)]) == pytest.approx(1.0, abs=0.1)


def test_symmetric_dirichlet_topic_concentration():
    # For theta ~ Dirichlet(alpha 1_K): E[sum_k theta_k^2] = (alpha + 1) / (K alpha + 1);
    # with N multinomial draws the empirical frequencies add 1/N (1 - E[sum theta^2]).
    n, n_topics = 400, 5
    for alpha in (0.1, 10.0):
        sums = []
        for seed in range(150):
            topics = generate_counts(n, 1, 1, n_topics=n_topics, dirichlet_alpha=alpha, seed=seed).topics
            freq = np.bincount(topics, minlength=n_topics) / n
            sums.append((freq**2).sum())
        e_theta2 = (alpha + 1) / (n_topics * alpha + 1)
        expected = e_theta2 + (1 - e_theta2) / n
        assert np.mean(sums) == pytest.approx(expected, rel=0.08), alpha


def test_vector_dirichlet_gives_expected_topic_shares():
    shares = np.zeros(3)
    for seed in range(100):
        topics = generate_counts(300, 1, 1, n_topics=3, dirichlet_alpha=[8.0, 1.0, 1.0], seed=seed).topics
        shares += np.bincount(topics, minlength=3) / 300
    np.testing.assert_allclose(shares / 100, [0.8, 0.1, 0.1], atol=0.03)


def test_true_oracle_and_categories():
    data = generate(200, 6, 2, n_topics=4, seed=5)
    assert data.true_oracle == pytest.approx(data.true_p.max(axis=1).mean(), abs=1e-15)
    first = data.records.groupby("query_id", sort=True)["category"].agg(["first", "nunique"])
    assert (first["nunique"] == 1).all()
    assert list(first["first"]) == [f"topic_{t:02d}" for t in data.topics]
    # prompts sharing a topic share the aptitude row: p_nl / p_n0 is constant within a topic
    same = np.flatnonzero(data.topics == data.topics[0])
    ratio = data.true_p[same] / data.true_p[same, :1]
    np.testing.assert_allclose(ratio, np.broadcast_to(ratio[0], ratio.shape), rtol=1e-10)


def test_costs_lognormal_per_model():
    data = generate(400, 5, 10, seed=6, cost_sigma=0.5)
    rec = data.records
    assert (rec["cost_usd"] > 0).all()
    mean_cost = rec.groupby("model_id", sort=True)["cost_usd"].mean().to_numpy()
    np.testing.assert_allclose(mean_cost, data.true_cost, rtol=0.03)  # 4000 calls, CV 0.53
    log_sd = np.log(rec["cost_usd"]).groupby(rec["model_id"]).std().to_numpy()
    np.testing.assert_allclose(log_sd, 0.5, atol=0.02)


def test_seeded_reproducibility_and_shared_latents():
    a = generate(50, 4, 3, seed=11)
    b = generate(50, 4, 3, seed=11)
    c = generate(50, 4, 3, seed=12)
    pd.testing.assert_frame_equal(a.records, b.records)
    assert not np.allclose(a.true_p, c.true_p)
    counts = generate_counts(50, 4, 3, seed=11)
    np.testing.assert_array_equal(counts.true_p, a.true_p)
    np.testing.assert_array_equal(counts.topics, a.topics)
    assert counts.true_oracle == a.true_oracle
    assert counts.k.shape == (50, 4) and counts.k.max() <= 3


def test_records_layout():
    rec = generate(3, 2, 4, seed=0).records
    assert list(rec.columns) == ["query_id", "model_id", "generation", "correct", "cost_usd", "category"]
    assert rec["generation"].tolist() == [0, 1, 2, 3] * 6
    assert not rec.duplicated(["query_id", "model_id", "generation"]).any()
    assert set(rec["correct"].unique()) <= {0.0, 1.0}


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_prompts=0), "n_prompts"),
    (dict(generations=1.5), "generations"),
    (dict(difficulty_beta=(0.0, 1.0)), "difficulty_beta"),
    (dict(dirichlet_alpha=-1.0), "dirichlet_alpha"),
    (dict(dirichlet_alpha=[1.0, 2.0]), "dirichlet_alpha"),
])
def test_bad_arguments(kwargs, match):
    args = dict(n_prompts=10, n_models=3, generations=2, n_topics=4) | kwargs
    with pytest.raises(ValueError, match=match):
        generate_counts(**args)


def test_topic_probs_fix_theta():
    topics = generate_counts(4000, 1, 1, n_topics=3, topic_probs=[0.5, 0.5, 0.0], seed=0).topics
    assert not np.any(topics == 2)
    assert np.mean(topics == 0) == pytest.approx(0.5, abs=0.03)
    with pytest.raises(ValueError, match="topic_probs"):
        generate_counts(10, 2, 1, n_topics=3, topic_probs=[0.5, 0.6, 0.0])

