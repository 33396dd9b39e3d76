"""Chapter 3 economics: reward, optimal-model map, critical price of error, cascade-error identity."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compass.cascades.economics import (
    cascade_records,
    cer_curve,
    cer_decomposition,
    critical_price_of_error,
    crossover_lambda,
    optimal_model_map,
    price_of_error_bayes,
    reward_grid,
    rewards,
    summarize_systems,
    tuned_cascade_rewards,
)

RAW = Path("/work/shared/data/raw/rational_llm_cascades/per_query_model_confidence.csv.gz")


def toy_records():
    # Synthetic: "cheap" errs on 2 of 4 queries, costs $0.01 and 1 s; "big" errs on none, costs $0.11 and 31 s.
    return pd.DataFrame(
        {
            "system": ["cheap"] * 4 + ["big"] * 4,
            "correct": [1, 0, 1, 0, 1, 1, 1, 1],
            "cost_usd": [0.01] * 4 + [0.11] * 4,
            "latency_ms": [1000] * 4 + [31000] * 4,
        }
    )


def test_rewards_closed_form():
    r = rewards(toy_records(), lambda_error=1.0, lambda_latency=0.01).set_index("system")
    assert r.loc["cheap", "reward"] == pytest.approx(-(0.01 + 0.01 * 1 + 1.0 * 0.5))
    assert r.loc["big", "reward"] == pytest.approx(-(0.11 + 0.01 * 31))


def test_abstention_is_priced_separately_from_error():
    df = pd.DataFrame({"system": ["s"] * 4, "correct": [1, 0, 0, 1], "abstained": [0, 1, 0, 0], "cost_usd": 0.0, "latency_s": 0.0})
    r = rewards(df, lambda_error=10.0, lambda_abstain=1.0).iloc[0]
    assert (r["error_rate"], r["abstain_rate"]) == (0.25, 0.25)
    assert r["reward"] == pytest.approx(-(10 * 0.25 + 1 * 0.25))


def test_critical_price_matches_optimal_map():
    s = summarize_systems(toy_records()).set_index("system")
    # lambda_L = 0: 0.01 + 0.5 lam = 0.11 -> lam* = 0.2 ; lambda_L = 0.01: (0.1 + 0.3) / 0.5 = 0.8
    assert critical_price_of_error(s.loc["cheap"], s.loc["big"]) == pytest.approx(0.2)
    assert critical_price_of_error(s.loc["big"], s.loc["cheap"], lambda_latency=0.01) == pytest.approx(0.8)
    grid = np.geomspace(1e-3, 1e3, 121)
    m = optimal_model_map(s.reset_index(), grid, [0.0, 0.01])
    assert list(m.columns) == ["lambda_error", "lambda_latency", "best_system", "reward"]
    pd.testing.assert_frame_equal(m, optimal_model_map(toy_records(), grid, [0.0, 0.01]))
    for ll, crit in ((0.0, 0.2), (0.01, 0.8)):
        sub = m[m["lambda_latency"] == ll]
        assert (sub.loc[sub["lambda_error"] < crit * 0.999, "best_system"] == "cheap").all()
        assert (sub.loc[sub["lambda_error"] > crit * 1.001, "best_system"] == "big").all()
    g = reward_grid(s.reset_index(), grid, [0.0])
    lam = crossover_lambda(grid, g[g.system == "cheap"]["reward"].to_numpy(), g[g.system == "big"]["reward"].to_numpy())
    # Log-linear interpolation of a reward that is linear in lambda: close, not exact.
    assert lam == pytest.approx(0.2, rel=1e-3)


def test_price_of_error_medical_example():
    assert price_of_error_bayes(500_000, 2 / 3, 1e-5, 1e-2) == pytest.approx(333.333, rel=1e-5)


def test_cascade_error_identity_on_random_data():
    rng = np.random.default_rng(1)
    d, es, eb = (rng.random((3, 1000)) < [[0.3], [0.4], [0.1]]).astype(float)
    out = cer_decomposition(d, es, eb)
    assert out["error_cascade"] == pytest.approx(out["error_identity"], abs=1e-15)
    assert out["cer"] == pytest.approx(np.cov(d, es, bias=True)[0, 1], abs=1e-15)


@pytest.mark.skipif(not RAW.exists(), reason="real cascade records not available")
def test_cascade_error_identity_on_real_records():
    df = pd.read_csv(RAW)
    df = df[(df.benchmark == "triviaqa") & (df.split == "test") & (df.chain == "llama")]
    w = df.pivot(index="query_idx", columns="model", values=["correct", "raw_confidence"])
    small, big = "llama3.1-8b", "llama3.1-405b"
    conf = w["raw_confidence"][small].to_numpy()
    d = (conf <= np.quantile(conf, 0.3)).astype(float)
    out = cer_decomposition(d, 1 - w["correct"][small].to_numpy(), 1 - w["correct"][big].to_numpy())
    assert out["error_cascade"] == pytest.approx(out["error_identity"], abs=1e-14)
    # The small model's confidence is informative: deferral correlates with its errors.
    assert out["cer"] > 0.03
    assert abs(out["cov_defer_error_big"]) < out["cer"]


def test_cascade_records_and_tuning():
    idx = pd.Index([f"q{i}" for i in range(6)])
    small = pd.DataFrame({"correct": [1, 1, 1, 0, 0, 1], "p_true": [0.9, 0.8, 0.7, 0.2, 0.1, 0.3], "cost_usd": 0.01, "latency_s": 1.0}, index=idx)
    big = pd.DataFrame({"correct": [1, 1, 1, 1, 1, 0], "cost_usd": 0.10, "latency_s": 10.0}, index=idx)
    r = cascade_records(small, big, threshold=0.25)
    assert r["defer"].tolist() == [0, 0, 0, 1, 1, 0]
    assert r["correct"].tolist() == [1, 1, 1, 1, 1, 1]
    assert r["cost_usd"].tolist() == pytest.approx([0.01] * 3 + [0.11] * 2 + [0.01])
    tuned = tuned_cascade_rewards(small, big, small, big, lambda_errors=[0.0, 1.0])
    # lambda_E = 0: never defer (cheapest); lambda_E = 1: defer exactly the two wrong answers.
    assert tuned.loc[0, "defer_rate"] == 0.0
    assert tuned.loc[1, "error_rate"] == 0.0 and tuned.loc[1, "defer_rate"] == pytest.approx(2 / 6)
    assert tuned.loc[1, "reward"] == pytest.approx(-(0.01 + 0.1 * 2 / 6))


def test_bad_records():
    with pytest.raises(ValueError, match="latency"):
        summarize_systems(pd.DataFrame({"system": ["a"], "correct": [1], "cost_usd": [0.1]}))
    with pytest.raises(ValueError, match="cost_usd"):
        summarize_systems(pd.DataFrame({"system": ["a"], "correct": [1]}))


def test_cer_curve_on_real_records_is_consistent():
    """Real TriviaQA records (a P(True)-like raw confidence): every point satisfies the eq 3.26 identity."""
    if not RAW.exists():
        pytest.skip("real cascade records not available")
    df = pd.read_csv(RAW)
    df = df[(df.benchmark == "triviaqa") & (df.split == "test") & (df.chain == "llama")].assign(latency_s=lambda d: d.latency_ms / 1000)
    small = df[df.model == "llama3.1-8b"].set_index("query_idx").rename(columns={"raw_confidence": "p_true"})
    big = df[df.model == "llama3.1-405b"].set_index("query_idx")
    curve = cer_curve(small, big, resolution=0.1)
    assert curve["defer_rate"].iloc[0] == 0.0 and curve["defer_rate"].iloc[-1] == 1.0
    assert curve["defer_rate"].is_monotonic_increasing
    ident = (1 - curve.defer_rate) * (1 - small.correct.mean()) + curve.defer_rate * (1 - big.correct.mean()) + curve.cov_defer_error_big - curve.cer
    np.testing.assert_allclose(curve["error_rate"], ident, atol=1e-14)
    # Cost is linear in the deferral rate (Figure 3.6b): C = C_s + p_d E[C_b | defer]; at the ends exact.
    assert curve["mean_cost"].iloc[-1] == pytest.approx(small.cost_usd.mean() + big.cost_usd.mean())
    assert curve["cer"].max() > 0.05
