"""Chapter 4 "Fail Fast, or Ask": AUARC closed forms, policy rates, latency drag, SYNTHETIC generator."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal, norm

from compass.cascades.failfast import (
    FAIL_FAST,
    PASS,
    RESPOND,
    ask_curve,
    auarc,
    failfast_curve,
    failfast_policy,
    failfast_table,
    join_failfast_records,
    latency_drag,
    rejection_grid,
    top_fraction,
)
from compass.cascades.failfast_synthetic import TABLE_4_1, FailFastSyntheticConfig, generate_failfast_synthetic


def test_auarc_perfect_signal_closed_form():
    n, n_err = 1000, 100
    correct = np.r_[np.zeros(n_err), np.ones(n - n_err)]
    rates = rejection_grid(0.2, 0.005)
    # Perfect uncertainty rejects errors first: A(r) = min(1, n_c / (n - r n)).
    expected = np.mean(np.minimum(1.0, (n - n_err) / (n - rates * n)))
    assert auarc(correct, 1 - correct) == pytest.approx(expected, abs=1e-12)
    # Worst signal rejects correct answers first: A(r) = (n_c - r n) / (n - r n).
    worst = np.mean((n - n_err - rates * n) / (n - rates * n))
    assert auarc(correct, correct) == pytest.approx(worst, abs=1e-12)
    assert len(rates) == 41


def test_ask_accuracy_matches_bivariate_normal_closed_form():
    """Known-truth simulation: accuracy given tokens <= (1-r)-quantile from the generator's Gaussian structure."""
    cfg = FailFastSyntheticConfig(reasoning_model="deepseek-r1-0528", n=200_000)
    df = generate_failfast_synthetic(cfg, seed=11)
    err = TABLE_4_1["deepseek-r1-0528"]["error_rate"]
    rho = cfg.rho_err_r * cfg.rho_tokens  # corr(error latent, standardized log tokens)
    c = norm.ppf(1 - err)
    curve = ask_curve(df["correct_r"].to_numpy(), df["tokens_r"].to_numpy(), [0.0, 0.1, 0.2], rng=0)
    for _, row in curve.iterrows():
        r = row["rejection_rate"]
        q = norm.ppf(1 - r) if r > 0 else np.inf
        both_ok = multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf([c, q]) if r > 0 else 1 - err
        acc = both_ok / (1 - r)
        se = np.sqrt(acc * (1 - acc) / (cfg.n * (1 - r)))
        assert abs(row["accuracy"] - acc) < 4 * se
    assert curve["accuracy"].is_monotonic_increasing


def test_synthetic_generator_reproduces_table_4_1():
    for model in ("qwen3-235b-a22b", "o3-2025-04-16"):
        df = generate_failfast_synthetic(FailFastSyntheticConfig(reasoning_model=model, n=100_000), seed=2)
        assert df.attrs["synthetic"] is True
        for suffix, name in (("r", model), ("nr", "llama-v3p1-405b-instruct")):
            spec = TABLE_4_1[name]
            err = 1 - df[f"correct_{suffix}"]
            assert abs(err.mean() - spec["error_rate"]) < 4 * np.sqrt(spec["error_rate"] * (1 - spec["error_rate"]) / len(df))
            for col, key in (("latency", "latency_s"), ("cost", "cost_usd")):
                x = df[f"{col}_{suffix}"]
                assert abs(x.mean() - spec[key]) < 4 * x.std() / np.sqrt(len(df))
        t = df["tokens_r"]
        assert abs(t.mean() - TABLE_4_1[model]["tokens_out"]) < 4 * t.std() / np.sqrt(len(df)) + 0.5
        assert df["p_true_nr"].between(0, 1).all()


def test_failfast_policy_rates_are_exact():
    df = generate_failfast_synthetic(FailFastSyntheticConfig(n=2000), seed=3)
    for u, r in ((0.5, 0.1), (0.75, 0.2), (0.6, 0.0)):
        action, rej = failfast_policy(df["p_true_nr"].to_numpy(), df["tokens_r"].to_numpy(), u, r, rng=0)
        n = len(df)
        assert np.sum(action == FAIL_FAST) == round(u * r * n)
        assert np.sum(action == RESPOND) == round(u * (1 - r) * n)
        n_pass = np.sum(action == PASS)
        assert rej.sum() == round(r * n_pass) and not rej[action != PASS].any()
        # Fail fast takes the lowest P(True), respond the highest (eq 4.1).
        p = df["p_true_nr"].to_numpy()
        if r > 0:
            assert p[action == FAIL_FAST].max() <= p[action == PASS].min()
        assert p[action == PASS].max() <= p[action == RESPOND].min()
        # Within the passed set, M_r rejects its longest traces.
        t = df["tokens_r"].to_numpy()
        if rej.any():
            assert t[rej].min() >= t[(action == PASS) & ~rej].max()


def test_failfast_curve_brute_force_small():
    rng = np.random.default_rng(7)
    n = 40
    df = pd.DataFrame(
        {
            "correct_r": (rng.random(n) < 0.9).astype(float),
            "tokens_r": rng.permutation(n) * 10.0 + 5,
            "latency_r": rng.uniform(50, 100, n),
            "cost_r": rng.uniform(0.01, 0.02, n),
            "correct_nr": (rng.random(n) < 0.7).astype(float),
            "p_true_nr": rng.permutation(n) / n,
            "latency_nr": rng.uniform(5, 10, n),
            "cost_nr": rng.uniform(0.001, 0.002, n),
        }
    )
    u, r = 0.5, 0.1
    row = failfast_curve(df, u, [r]).iloc[0]
    order = np.argsort(df["p_true_nr"].to_numpy())
    ff, resp = order[:2], order[-18:]  # u r n = 2, u (1-r) n = 18
    passed = order[2:-18]
    rej = passed[np.argsort(df["tokens_r"].to_numpy()[passed])[-2:]]  # r * 20 = 2
    kept_pass = np.setdiff1d(passed, rej)
    acc = (df["correct_nr"].to_numpy()[resp].sum() + df["correct_r"].to_numpy()[kept_pass].sum()) / (n - 4)
    assert row["accuracy"] == pytest.approx(acc)
    assert row["realized_rejection_rate"] == pytest.approx(4 / n)
    assert row["mean_latency_s"] == pytest.approx(df["latency_nr"].mean() + df["latency_r"].to_numpy()[passed].sum() / n)
    assert row["mean_cost"] == pytest.approx(df["cost_nr"].mean() + df["cost_r"].to_numpy()[passed].sum() / n)
    # u = 0 is "Ask": same accuracy as ask_curve, and latency/cost of M_r alone.
    base = failfast_curve(df, 0.0, [0.0, r]).set_index("rejection_rate")
    ask = ask_curve(df["correct_r"].to_numpy(), df["tokens_r"].to_numpy(), [0.0, r]).set_index("rejection_rate")
    np.testing.assert_allclose(base["accuracy"], ask["accuracy"])
    assert base["mean_latency_s"].iloc[0] == pytest.approx(df["latency_r"].mean())


def test_latency_drag_and_table_on_synthetic():
    df = generate_failfast_synthetic(FailFastSyntheticConfig(reasoning_model="deepseek-r1-0528", n=5000), seed=4)
    action, _ = failfast_policy(df["p_true_nr"].to_numpy(), df["tokens_r"].to_numpy(), 0.5, 0.0, rng=0)
    d = latency_drag(df["latency_r"].to_numpy(), df["latency_nr"].to_numpy(), action == PASS)
    assert d["naive_latency"] == pytest.approx(df["latency_nr"].mean() + 0.5 * df["latency_r"].mean())
    assert d["actual_latency"] == pytest.approx(df["latency_nr"].mean() + 0.5 * df.loc[action == PASS, "latency_r"].mean())
    assert d["drag_ratio"] > 1.0  # passed queries are harder, hence slower (Section 4.4)
    table = failfast_table(df, utilizations=(0.5, 0.75))
    assert list(table["utilization"]) == [0.5, 0.75]
    # Higher utilisation: lower AUARC, larger latency and cost savings (Table 4.2 pattern).
    assert table["auarc"].iloc[0] > table["auarc"].iloc[1]
    assert table["latency_pct_change"].iloc[1] < table["latency_pct_change"].iloc[0] < 0
    assert table["cost_pct_change"].iloc[1] < table["cost_pct_change"].iloc[0] < 0
    assert (table["auarc"] < table["base_auarc"]).all()


def test_top_fraction_ties_are_broken_to_exact_count():
    s = np.array([1, 1, 1, 1, 2, 2, 2, 2, 2, 2], dtype=float)
    m = top_fraction(s, 0.3, rng=0)
    assert m.sum() == 3 and (s[m] == 2).all()


def test_join_and_bad_input():
    long = pd.DataFrame(
        {
            "query_id": ["a", "b", "a", "b"],
            "model_id": ["r1", "r1", "llama", "llama"],
            "correct": [1, 0, 1, 1],
            "confidence": [np.nan, np.nan, 0.9, 0.2],
            "tokens_out": [100, 900, 10, 20],
            "latency_ms": [5000, 9000, 1000, 1000],
            "cost_usd": [0.1, 0.2, 0.01, 0.01],
        }
    )
    j = join_failfast_records(long, "r1", "llama")
    assert j.loc["b", "tokens_r"] == 900 and j.loc["a", "p_true_nr"] == 0.9 and j.loc["b", "latency_r"] == 9.0
    with pytest.raises(ValueError, match="no records for model"):
        join_failfast_records(long, "o3", "llama")
    with pytest.raises(ValueError, match="missing column"):
        failfast_curve(j.drop(columns=["cost_nr"]), 0.5)
    with pytest.raises(ValueError, match="FailFast|Table 4.1"):
        FailFastSyntheticConfig(reasoning_model="gpt-4o")
