"""Synthetic data from the Capability Frontier generative model (paper 002).

Implements the generative process of §4.3.2 (Figure 4) with the synthetic
configuration of Appendix G:

* prompt difficulty      D_n  ~ Beta(alpha_D, beta_D)                (eq. 13)
* topic mixture          theta ~ Dirichlet(alpha),  T_n ~ Cat(theta) (eq. 14)
* per-topic aptitude     A_tl ~ Beta(alpha_A, beta_A)                (eq. 15)
* outcome                phi_nlg ~ Bernoulli(pi_nl)                  (eq. 16)
* link                   pi_nl = (1 - D_n) * A_{T_n, l}              (eq. 17)

The link is the paper's "simple multiplicative form" (§4.3.2, below eq. 17);
the paper's learned feed-forward link is a fitting choice, not a generative one.
Defaults follow Appendix G: D ~ Beta(1, 1) (uniform), A ~ Beta(5, 5), 30 topics,
and the §4.3.2 uniform topic prior alpha_t = 1.

Costs (§4.4 replaces the Bernoulli likelihood by a LogNormal for cost): each
call of model l costs LogNormal(mu_l, cost_sigma), with mu_l drawn uniformly on
[log 1e-4, log 1e-2] USD. The paper does not specify a synthetic cost model;
this one is ours and only serves to exercise the LogNormal cost fit.

This module is for tests and simulation studies only: every number it returns
is synthetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

_LOG_COST_RANGE = (np.log(1e-4), np.log(1e-2))


@dataclass
class SyntheticData:
    """Long-format synthetic records plus the ground truth that generated them.

    records columns: query_id (str), model_id (str), generation (int 0..G-1),
    correct (float 0/1), cost_usd (float > 0), category (str topic).
    """

    records: pd.DataFrame
    true_p: np.ndarray  # [n_prompts, n_models] true success probabilities pi_nl
    true_cost: np.ndarray  # [n_models] true mean cost per call, exp(mu + sigma^2 / 2)
    true_oracle: float  # eq. 4: mean over prompts of max_l pi_nl
    topics: np.ndarray  # [n_prompts] true topic index T_n


@dataclass
class SyntheticCounts:
    """Dense success counts k[n, l] out of `generations` trials, plus ground truth."""

    k: np.ndarray  # [n_prompts, n_models] int successes
    generations: int  # trials per cell, G
    true_p: np.ndarray  # [n_prompts, n_models]
    true_cost: np.ndarray  # [n_models]
    true_oracle: float
    topics: np.ndarray  # [n_prompts]


@dataclass
class _Latents:
    true_p: np.ndarray
    topics: np.ndarray
    log_cost_mu: np.ndarray
    true_cost: np.ndarray


def _check_beta(name: str, ab: tuple[float, float]) -> tuple[float, float]:
    if len(ab) != 2 or not all(np.isfinite(ab)) or min(ab) <= 0:
        raise ValueError(f"{name} must be two positive finite Beta parameters (a, b), got {ab!r}")
    return float(ab[0]), float(ab[1])


def _sample_latents(
    rng: np.random.Generator,
    n_prompts: int,
    n_models: int,
    generations: int,
    n_topics: int,
    dirichlet_alpha: float | Sequence[float],
    difficulty_beta: tuple[float, float],
    aptitude_beta: tuple[float, float],
    cost_sigma: float,
    topic_probs: Sequence[float] | None,
) -> _Latents:
    for name, value in (("n_prompts", n_prompts), ("n_models", n_models),
                        ("generations", generations), ("n_topics", n_topics)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    alpha = np.asarray(dirichlet_alpha, dtype=float)
    if alpha.ndim == 0:
        alpha = np.full(n_topics, float(alpha))
    if alpha.shape != (n_topics,) or not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
        raise ValueError(
            f"dirichlet_alpha must be positive (a scalar or {n_topics} values), got {dirichlet_alpha!r}"
        )
    a_d, b_d = _check_beta("difficulty_beta", difficulty_beta)
    a_a, b_a = _check_beta("aptitude_beta", aptitude_beta)
    if not np.isfinite(cost_sigma) or cost_sigma < 0:
        raise ValueError(f"cost_sigma must be a finite non-negative number, got {cost_sigma!r}")

    if topic_probs is None:
        theta = rng.dirichlet(alpha)  # eq. 14
    else:
        theta = np.asarray(topic_probs, dtype=float)
        if theta.shape != (n_topics,) or np.any(theta < 0) or not np.isclose(theta.sum(), 1.0):
            raise ValueError(f"topic_probs must be {n_topics} non-negative values summing to 1")
    topics = rng.choice(n_topics, size=n_prompts, p=theta)
    difficulty = rng.beta(a_d, b_d, size=n_prompts)  # eq. 13
    aptitude = rng.beta(a_a, b_a, size=(n_topics, n_models))  # eq. 15
    true_p = (1.0 - difficulty)[:, None] * aptitude[topics]  # eq. 17, multiplicative link
    log_cost_mu = rng.uniform(*_LOG_COST_RANGE, size=n_models)
    true_cost = np.exp(log_cost_mu + 0.5 * cost_sigma**2)
    return _Latents(true_p=true_p, topics=topics, log_cost_mu=log_cost_mu, true_cost=true_cost)


def _true_oracle(true_p: np.ndarray) -> float:
    """Eq. 4: O_true = (1/N) sum_n max_l pi_nl."""
    return float(true_p.max(axis=1).mean())


def generate(
    n_prompts: int,
    n_models: int,
    generations: int,
    n_topics: int = 30,
    dirichlet_alpha: float | Sequence[float] = 1.0,
    difficulty_beta: tuple[float, float] = (1.0, 1.0),
    aptitude_beta: tuple[float, float] = (5.0, 5.0),
    seed: int = 0,
    *,
    cost_sigma: float = 0.5,
    topic_probs: Sequence[float] | None = None,
) -> SyntheticData:
    """Draw long-format synthetic outcomes from the §4.3.2 PGM (Appendix G defaults).

    Rows are ordered by (query, model, generation). `dirichlet_alpha` is the
    Dirichlet concentration of the topic mixture theta (scalar = symmetric);
    `topic_probs` instead fixes theta itself, as Appendix G's entropy sweep
    does when it interpolates the topic distribution from uniform to one topic.
    The latent variables (true_p, topics, costs) are identical to those of
    `generate_counts` with the same arguments and seed; the Bernoulli draws are not.
    Vectorized: 10,000 x 50 x 10 (5M rows) takes a few seconds.
    """
    latent_ss, obs_ss, cost_ss = np.random.SeedSequence(seed).spawn(3)
    lat = _sample_latents(np.random.default_rng(latent_ss), n_prompts, n_models, generations,
                          n_topics, dirichlet_alpha, difficulty_beta, aptitude_beta, cost_sigma,
                          topic_probs)
    obs_rng = np.random.default_rng(obs_ss)
    correct = obs_rng.random((n_prompts, n_models, generations)) < lat.true_p[:, :, None]  # eq. 16
    cost_rng = np.random.default_rng(cost_ss)
    log_cost = lat.log_cost_mu[None, :, None] + cost_sigma * cost_rng.standard_normal(correct.shape)

    n_rows = correct.size
    query_ids = np.array([f"q{i:06d}" for i in range(n_prompts)], dtype=object)
    model_ids = np.array([f"m{j:03d}" for j in range(n_models)], dtype=object)
    topic_names = np.array([f"topic_{t:02d}" for t in range(n_topics)], dtype=object)
    per_prompt = n_models * generations
    records = pd.DataFrame({
        "query_id": np.repeat(query_ids, per_prompt),
        "model_id": np.tile(np.repeat(model_ids, generations), n_prompts),
        "generation": np.tile(np.arange(generations, dtype=np.int64), n_prompts * n_models),
        "correct": correct.reshape(n_rows).astype(np.float64),
        "cost_usd": np.exp(log_cost).reshape(n_rows),
        "category": np.repeat(topic_names[lat.topics], per_prompt),
    })
    return SyntheticData(records=records, true_p=lat.true_p, true_cost=lat.true_cost,
                         true_oracle=_true_oracle(lat.true_p), topics=lat.topics)


def generate_counts(
    n_prompts: int,
    n_models: int,
    generations: int,
    n_topics: int = 30,
    dirichlet_alpha: float | Sequence[float] = 1.0,
    difficulty_beta: tuple[float, float] = (1.0, 1.0),
    aptitude_beta: tuple[float, float] = (5.0, 5.0),
    seed: int = 0,
    *,
    cost_sigma: float = 0.5,
    topic_probs: Sequence[float] | None = None,
) -> SyntheticCounts:
    """Same model as `generate`, returning dense success counts k ~ Binomial(G, pi_nl).

    No per-generation tensor or DataFrame is built, so large G (the paper's
    Appendix G uses G = 10,000) is cheap.
    """
    latent_ss, obs_ss, _ = np.random.SeedSequence(seed).spawn(3)
    lat = _sample_latents(np.random.default_rng(latent_ss), n_prompts, n_models, generations,
                          n_topics, dirichlet_alpha, difficulty_beta, aptitude_beta, cost_sigma,
                          topic_probs)
    k = np.random.default_rng(obs_ss).binomial(generations, lat.true_p)
    return SyntheticCounts(k=k, generations=int(generations), true_p=lat.true_p,
                           true_cost=lat.true_cost, true_oracle=_true_oracle(lat.true_p),
                           topics=lat.topics)

