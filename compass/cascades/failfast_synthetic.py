"""SYNTHETIC per-query records for "Fail Fast, or Ask" simulation studies and tests.

Nothing here is measured data. The per-model means (error rate, latency,
cost, output tokens) are Table 4.1 of thesis seed 001 (Zellinger, Chapter 4,
difficult MATH questions). The joint structure is this module's own
assumption [A], chosen to produce the qualitative effects the thesis reports:

* one latent difficulty z ~ N(0, 1) per query;
* model m errs iff rho_err z + sqrt(1 - rho_err^2) eps_m > Phi^{-1}(1 - error_rate_m),
  so its error rate equals Table 4.1 exactly in expectation;
* output tokens are log-normal, log T = mu + sigma (rho_tok z + sqrt(1 - rho_tok^2) eta),
  with mu set so that E[T] equals Table 4.1 (long traces on hard queries,
  Section 4.5 / Figure 4.3);
* latency and cost are proportional to the query's tokens (scaled so that
  their means equal Table 4.1), times mean-one log-normal noise for latency;
* M_nr's P(True) is Phi(-(kappa e_nr + sqrt(1 - kappa^2) zeta)), a monotone,
  noisy function of its own error latent e_nr.

Because z drives both the reasoning model's tokens (hence latency) and the
non-reasoning model's confidence, the generator exhibits latency drag (Section 4.4).
The default dependence parameters were picked by a coarse scan so that the
Qwen3 row of Table 4.2 is roughly matched at 50% utilisation (n = 20,000):
base AUARC 0.983 (thesis 0.99), AUARC 0.948 (0.96), latency -31% (-28.4%),
cost -3% (-2.1%), E[L_r | pass] / E[L_r] = 1.26 (implied 1.23).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

# Table 4.1: average per-query metrics on 500 MATH level-5 questions.
TABLE_4_1: dict[str, dict[str, float | str]] = {
    "qwen3-235b-a22b": {"role": "reasoning", "error_rate": 0.028, "latency_s": 125.9, "cost_usd": 9.5e-3, "tokens_out": 10_800},
    "deepseek-r1-0528": {"role": "reasoning", "error_rate": 0.058, "latency_s": 89.7, "cost_usd": 7.9e-2, "tokens_out": 9_800},
    "o3-2025-04-16": {"role": "reasoning", "error_rate": 0.038, "latency_s": 67.6, "cost_usd": 1.9e-2, "tokens_out": 2_200},
    "llama-v3p1-405b-instruct": {"role": "non-reasoning", "error_rate": 0.306, "latency_s": 12.4, "cost_usd": 3.6e-3, "tokens_out": 978},
}


@dataclass(frozen=True)
class FailFastSyntheticConfig:
    """Parameters of the SYNTHETIC generator. Means come from Table 4.1; the rest are assumptions [A]."""

    reasoning_model: str = "qwen3-235b-a22b"
    nonreasoning_model: str = "llama-v3p1-405b-instruct"
    n: int = 500
    rho_err_r: float = 0.6  # [A] difficulty -> reasoning-model error latent
    rho_err_nr: float = 0.6  # [A] difficulty -> non-reasoning-model error latent
    rho_tokens: float = 0.8  # [A] difficulty -> log output tokens (both models)
    sigma_tokens_r: float = 1.0  # [A] log-sd of reasoning tokens
    sigma_tokens_nr: float = 0.5  # [A] log-sd of non-reasoning tokens
    sigma_latency_noise: float = 0.2  # [A] log-sd of latency noise per token
    kappa_ptrue: float = 0.7  # [A] how well P(True) tracks M_nr's own error latent

    def __post_init__(self) -> None:
        for role, m in (("reasoning", self.reasoning_model), ("non-reasoning", self.nonreasoning_model)):
            if m not in TABLE_4_1 or TABLE_4_1[m]["role"] != role:
                opts = [k for k, v in TABLE_4_1.items() if v["role"] == role]
                raise ValueError(f"{role} model {m!r} not in Table 4.1; choose one of {opts}")
        for name in ("rho_err_r", "rho_err_nr", "rho_tokens", "kappa_ptrue"):
            if not -1 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be a correlation in [-1, 1], got {getattr(self, name)}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")


def _model_block(spec: dict, z: np.ndarray, rho_err: float, rho_tok: float, sigma_tok: float, sigma_lat: float, rng: np.random.Generator):
    n = z.size
    e = rho_err * z + np.sqrt(1 - rho_err**2) * rng.standard_normal(n)
    wrong = e > norm.ppf(1 - spec["error_rate"])
    mu = np.log(spec["tokens_out"]) - sigma_tok**2 / 2
    tokens = np.exp(mu + sigma_tok * (rho_tok * z + np.sqrt(1 - rho_tok**2) * rng.standard_normal(n)))
    rel = tokens / spec["tokens_out"]  # mean one
    lat_noise = np.exp(sigma_lat * rng.standard_normal(n) - sigma_lat**2 / 2)
    return e, (~wrong).astype(float), tokens, spec["latency_s"] * rel * lat_noise, spec["cost_usd"] * rel


def generate_failfast_synthetic(config: FailFastSyntheticConfig | None = None, seed: int = 0) -> pd.DataFrame:
    """Draw SYNTHETIC joined records (one row per query) in the layout of ``failfast.FAILFAST_COLUMNS``.

    Columns: query_id, correct_r, tokens_r, latency_r, cost_r, correct_nr,
    p_true_nr, latency_nr, cost_nr, difficulty (the latent z). ``df.attrs``
    carries {"synthetic": True, "config": config}.
    """
    cfg = config or FailFastSyntheticConfig()
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(cfg.n)
    _, y_r, t_r, l_r, c_r = _model_block(TABLE_4_1[cfg.reasoning_model], z, cfg.rho_err_r, cfg.rho_tokens, cfg.sigma_tokens_r, cfg.sigma_latency_noise, rng)
    e_nr, y_nr, _, l_nr, c_nr = _model_block(TABLE_4_1[cfg.nonreasoning_model], z, cfg.rho_err_nr, cfg.rho_tokens, cfg.sigma_tokens_nr, cfg.sigma_latency_noise, rng)
    signal = cfg.kappa_ptrue * e_nr + np.sqrt(1 - cfg.kappa_ptrue**2) * rng.standard_normal(cfg.n)
    df = pd.DataFrame(
        {
            "query_id": [f"synthetic-{i}" for i in range(cfg.n)],
            "correct_r": y_r,
            "tokens_r": np.maximum(1.0, np.rint(t_r)),
            "latency_r": l_r,
            "cost_r": c_r,
            "correct_nr": y_nr,
            "p_true_nr": norm.cdf(-signal),
            "latency_nr": l_nr,
            "cost_nr": c_nr,
            "difficulty": z,
        }
    )
    df.attrs["synthetic"] = True
    df.attrs["config"] = cfg
    return df
