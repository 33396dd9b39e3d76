"""Content the case studies depend on, checked against closed forms and the raw files."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

CASCADE_SIZES = {  # shared/data/README.md (C1): test/train queries per benchmark
    ("mmlu", "test"): 1531, ("mmlu", "train"): 285, ("medmcqa", "test"): 1000, ("medmcqa", "train"): 300,
    ("triviaqa", "test"): 1000, ("triviaqa", "train"): 300, ("truthfulqa", "test"): 517,
    ("truthfulqa", "train"): 300, ("gsm8k", "train"): 300,
}


def test_catalog_has_60_models_with_5_benchmarks_and_a_price(tables):
    n_bench = tables["benchmark_scores"].groupby("model_id")["benchmark"].nunique()
    priced = set(tables["model_costs"]["model_id"])
    good = [m for m in n_bench[n_bench >= 5].index if m in priced]
    assert len(good) >= 60
    for model in ("gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "llama-3.1-70b-instruct",
                  "qwen2.5-72b-instruct", "gemini-1.5-pro"):
        assert model in good


def test_scores_are_on_their_scale(tables):
    s = tables["benchmark_scores"]
    frac = s[s["score_scale"] == "fraction"]["score"]
    assert frac.between(0, 1).all()
    elo = s[s["score_scale"] == "elo"]["score"]
    assert elo.between(500, 2500).all()


def test_lmarena_stderr_is_ci_halfwidth_over_1_96(tables, raw):
    board = json.loads((raw / "lmarena_arena_catalog" / "leaderboard-text.json").read_text())
    r = board["full"]["gemini-3-pro"]
    row = tables["benchmark_scores"].query("model_id == 'gemini-3-pro' and benchmark == 'lmarena_full'").iloc[0]
    assert row["score"] == pytest.approx(r["rating"])
    assert row["stderr"] == pytest.approx((r["rating_q975"] - r["rating_q025"]) / 3.919928, rel=1e-6)


def test_prices_positive_and_blend_is_3_to_1(tables):
    c = tables["model_costs"]
    assert (c["input_usd_per_mtok"] > 0).all() and (c["output_usd_per_mtok"] > 0).all()
    np.testing.assert_allclose(c["blended_usd_per_mtok"], (3 * c["input_usd_per_mtok"] + c["output_usd_per_mtok"]) / 4)
    gpt4o = c.query("model_id == 'gpt-4o' and provider == 'openai' and source == 'litellm'").iloc[0]
    assert (gpt4o["input_usd_per_mtok"], gpt4o["output_usd_per_mtok"]) == pytest.approx((2.5, 10.0))
    assert gpt4o["blended_usd_per_mtok"] == pytest.approx(4.375)


def test_mmlu_pro_29_models_match_raw_accuracy(tables, raw):
    q = tables["query_records"].query("dataset == 'mmlu_pro'")
    assert q["model_id"].nunique() == 29
    assert q["query_id"].nunique() == 12032
    assert q["generation"].eq(0).all() and q["category"].nunique() == 14
    acc = q.groupby("model_id")["correct"].mean()
    assert acc.between(0.15, 0.75).all()
    pred = pd.read_csv(raw / "mmlu_pro" / "predictions_long.csv.gz")
    raw_acc = pred.groupby("model")["correct"].mean()
    assert acc["llama-3.1-70b-instruct"] == pytest.approx(raw_acc["Meta-Llama-3_1-70B-Instruct_5shots"])
    assert acc["gemma-7b"] == pytest.approx(raw_acc["gemma-7b_5shots"])
    assert len(q) == len(pred)


def test_mmlu_pro_models_have_hf_v2_capabilities_and_params(tables):
    q = tables["query_records"].query("dataset == 'mmlu_pro'")
    hf = tables["benchmark_scores"].query("source == 'open_llm_leaderboard_v2' and benchmark != 'hf_mmlu_pro'")
    n_hf = hf.groupby("model_id")["benchmark"].nunique()
    params = tables["models"].set_index("model_id")["params_b"]
    matched = [m for m in q["model_id"].unique() if n_hf.get(m, 0) == 5 and pd.notna(params.get(m))]
    assert len(matched) >= 15
    assert params["llama-3-70b"] == pytest.approx(70.554, abs=0.01)


def test_hf_v2_import_is_capped_and_raw_accuracies(tables, raw):
    hf = tables["benchmark_scores"].query("source == 'open_llm_leaderboard_v2'")
    assert 300 <= hf["model_id"].nunique() <= 450
    rows = pd.read_csv(raw / "open_llm_leaderboard_csv" / "huggingface_v2.csv")
    ref = rows[rows["model_name"] == "meta-llama/Meta-Llama-3-70B-Instruct"]
    got = hf.query("model_id == 'llama-3-70b-instruct' and benchmark == 'hf_ifeval'")["score"].iloc[0]
    assert got in set(ref["evaluations_ifeval_value"])


def test_livecodebench_expansion_reproduces_pass_at_1(tables, raw):
    q = tables["query_records"].query("dataset == 'livecodebench'")
    assert q["model_id"].nunique() == 45 and q["query_id"].nunique() == 400
    assert q["generation"].between(0, 9).all()
    data = json.loads(gzip.decompress((raw / "livecodebench" / "performances_generation_2024-04-17.json.gz").read_bytes()))
    perf = pd.DataFrame(data["performances"])
    names = tables["model_aliases"].set_index("alias")["model_id"]
    perf["model_id"] = perf["model"].map(names)
    cells = q.groupby(["model_id", "query_id"]).agg(mean=("correct", "mean"), n=("generation", "size"))
    merged = perf.join(cells, on=["model_id", "question_id"])
    np.testing.assert_allclose(merged["mean"], merged["pass@1"] / 100.0)
    one_sample = merged["model"].str.contains(r"\(n=1\)", case=False)
    assert (merged.loc[one_sample, "n"] == 1).all() and (merged.loc[~one_sample, "n"] == 10).all()
    assert q["cost_usd"].isna().all()


def test_cascades_nine_models_five_datasets_readme_sizes(tables):
    q = tables["query_records"]
    c = q[q["source"] == "rational_llm_cascades"]
    assert c["model_id"].nunique() == 9
    assert set(c["dataset"]) == {"mmlu", "medmcqa", "triviaqa", "truthfulqa", "gsm8k"}
    sizes = c.groupby(["dataset", "split"])["query_id"].nunique().to_dict()
    assert sizes == CASCADE_SIZES
    per_query = c.groupby(["dataset", "split", "query_id"])["model_id"].nunique()
    assert (per_query == 9).all()
    assert c["cost_usd"].gt(0).all() and c["confidence"].notna().all()
    chains = c.groupby("chain")["model_id"].agg(lambda m: set(m)).to_dict()
    assert chains == {
        "llama": {"llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "llama-3.1-8b-instruct",
                  "llama-3.1-70b-instruct", "llama-3.1-405b-instruct"},
        "qwen_oai": {"gpt-4o-mini", "qwen2.5-coder-32b-instruct", "qwen2.5-72b-instruct", "gpt-4o"},
    }


def test_wildbench_interactions(tables):
    w = tables["interactions"]
    assert set(w["dataset"]) == {"wildbench_v2.0522_gpt4t", "wildbench_v2.0522_gpt4o", "wildbench_v2.0625_gpt4o"}
    assert w.groupby("dataset")["model_id"].nunique().to_dict() == {
        "wildbench_v2.0522_gpt4t": 12, "wildbench_v2.0522_gpt4o": 9, "wildbench_v2.0625_gpt4o": 8}
    assert w["outcome"].between(1, 10).all() and (w["outcome_kind"] == "rubric_1_10").all()
    assert w["context_group"].isna().all()
    assert "response_len_chars" in json.loads(w["context"].iloc[0])
    agg = tables["benchmark_scores"].query("source == 'wildbench'")
    assert agg["benchmark"].str.startswith("wildbench_").all() and agg["model_id"].nunique() >= 50
