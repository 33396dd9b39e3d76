"""Each connector parses its upstream format from the real raw and snapshot files, and a renamed
field raises FormatChange naming the connector, the file and the field (never a silent empty table).

The upstream copies live outside the repository (COMPASS_SHARED_DATA, default /work/shared/data);
without them these tests skip. Expected values are read off the upstream files by hand (and noted),
not computed by the connector.
"""

from __future__ import annotations

import datetime as dt
import gzip
import os
from pathlib import Path

import pandas as pd
import pytest

from compass.ingest.connectors import CONNECTORS, FormatChange, Payload
from compass.ingest.connectors.local import local_payload

SHARED = Path(os.environ.get("COMPASS_SHARED_DATA", "/work/shared/data"))
RAW, SNAPSHOTS = SHARED / "raw", SHARED / "snapshots"
pytestmark = pytest.mark.skipif(not RAW.is_dir() or not SNAPSHOTS.is_dir(), reason=f"no upstream copies under {SHARED}")
DAY = dt.date(2026, 1, 1)


def payload(connector: str, path: Path, as_of: dt.date | None = DAY) -> Payload:
    return local_payload(CONNECTORS[connector], path, as_of)


def renamed(p: Payload, file: str, old: bytes, new: bytes) -> Payload:
    """The same payload with `old` replaced by `new` in one file (an upstream rename)."""
    return Payload(p.name, {**p.files, file: p.files[file].replace(old, new)}, p.as_of)


def assert_format_change(connector: str, p: Payload, file: str, field: str) -> None:
    with pytest.raises(FormatChange) as err:
        CONNECTORS[connector].parse(p)
    assert (err.value.connector, err.value.file, err.value.field) == (connector, file, field)
    assert connector in str(err.value) and field in str(err.value)


def row(df: pd.DataFrame, **where) -> pd.Series:
    hit = df
    for k, v in where.items():
        hit = hit[hit[k] == v]
    assert len(hit) == 1, (where, len(hit))
    return hit.iloc[0]


# ---- LiteLLM ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def litellm():
    return payload("litellm_prices", RAW / "litellm" / "model_prices_and_context_window.json")


def test_litellm_prices_per_million_tokens(litellm):
    out = CONNECTORS["litellm_prices"].parse(litellm)
    # upstream "gpt-4o": input_cost_per_token 2.5e-06, output 1e-05, litellm_provider openai
    gpt4o = row(out["model_costs"], raw_name="gpt-4o")
    assert (gpt4o["provider"], gpt4o["input_usd_per_mtok"], gpt4o["output_usd_per_mtok"]) == ("openai", 2.5, 10.0)
    assert gpt4o["cache_read_usd_per_mtok"] == 1.25  # cache_read_input_token_cost 1.25e-06 (issue 48)
    assert row(out["models"], raw_name="gpt-4o")["organization"] == "OpenAI"
    # tool use is LiteLLM's supports_function_calling (issue 48); deepseek-reasoner says false
    assert row(out["models"], raw_name="gpt-4o")["tool_use"] == True  # noqa: E712
    assert row(out["models"], raw_name="deepseek-reasoner")["tool_use"] == False  # noqa: E712
    assert (out["model_costs"]["as_of"] == DAY).all() and (out["model_costs"]["source"] == "litellm").all()
    assert out.dropped > 0 and (out["model_costs"]["input_usd_per_mtok"] > 0).all()


def test_litellm_renamed_price_field(litellm):
    name = litellm.name
    broken = renamed(litellm, name, b'"input_cost_per_token"', b'"input_cost_per_token_usd"')
    assert_format_change("litellm_prices", broken, name, "input_cost_per_token")


def test_litellm_truncated_body(litellm):
    name = litellm.name
    cut = Payload(name, {name: litellm.files[name][:100_000]}, DAY)
    with pytest.raises(FormatChange, match="not valid JSON"):
        CONNECTORS["litellm_prices"].parse(cut)


# ---- LMArena ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lmarena():
    return payload("lmarena_leaderboard", RAW / "lmarena_arena_catalog" / "leaderboard-text.json")


def test_lmarena_ratings_and_siblings(lmarena):
    assert "scatterplot-data.json" in lmarena.files  # found beside the leaderboard
    out = CONNECTORS["lmarena_leaderboard"].parse(lmarena)
    scores = out["benchmark_scores"]
    assert scores["benchmark"].nunique() == 29
    # upstream full/gemini-3-pro: rating 1486.6027, q025 1480.4027, q975 1492.8027
    top = row(scores, raw_name="gemini-3-pro", benchmark="lmarena_full")
    assert top["score"] == pytest.approx(1486.6027, abs=1e-3)
    assert top["stderr"] == pytest.approx((1492.8027 - 1480.4027) / 3.919928, abs=1e-3)
    assert {"models", "model_costs"} <= set(out)


def test_lmarena_renamed_rating_field(lmarena):
    broken = renamed(lmarena, lmarena.name, b'"rating_q975"', b'"rating_upper"')
    assert_format_change("lmarena_leaderboard", broken, lmarena.name, "rating_q975")


# ---- LiveBench -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def livebench():
    return payload("livebench", SNAPSHOTS / "livebench" / "2026-08-22" / "table_2026_06_25.csv", None)


def test_livebench_newest_release_with_costs(livebench):
    assert set(livebench.files) == {"table_2026_06_25.csv", "categories_2026_06_25.json", "cost_2026_06_25.csv"}
    out = CONNECTORS["livebench"].parse(livebench)
    scores = out["benchmark_scores"]
    assert scores["raw_name"].nunique() == 46
    assert (scores["as_of"] == dt.date(2026, 6, 25)).all()  # the release date in the file name
    fable = scores[(scores["raw_name"] == "claude-fable-5-max-effort") & scores["benchmark"].str.startswith("livebench_task_")]
    assert len(fable) == 23 and fable["score"].mean() == pytest.approx(0.83383, abs=1e-4)  # top task mean, README
    # global = mean of the 7 category means (each the mean of its tasks)
    assert scores["benchmark"].isin([f"livebench_{c}" for c in ("reasoning", "coding", "agentic_coding", "mathematics",
                                                                 "data_analysis", "language", "if", "global")]).sum() > 0
    costs = out["model_costs"]
    assert len(costs) == 45 and out.dropped == 1  # ox-alpha-max is listed at 0 / 0 USD
    assert (costs["provider"] == "list_price").all() and costs["cost_per_question_usd"].notna().all()
    # the per-task cost columns on the task rows (issue 49 review): questions per task, and each model's runs add up
    # to the file's cost per question
    tasks = scores[scores["benchmark"].str.startswith("livebench_task_")].dropna(subset=["run_usd"])
    assert tasks.groupby("benchmark")["n_questions"].first()[["livebench_task_python", "livebench_task_amps_hard"]] \
        .tolist() == [20.0, 100.0]
    totals = tasks.groupby("raw_name")[["run_usd", "n_questions"]].sum()
    per_question = costs.set_index("raw_name")["cost_per_question_usd"]
    both = totals.index.intersection(per_question.index)
    assert len(both) >= 40
    assert (totals.loc[both, "run_usd"] / totals.loc[both, "n_questions"]).to_numpy() == pytest.approx(
        per_question[both].to_numpy(), rel=0.03, abs=2e-4)
    rows = scores.dropna(subset=["run_usd"]).set_index(["raw_name", "benchmark"])
    one = rows.loc["claude-fable-5-max-effort"]  # a category sums its tasks (measuring it runs them all)
    assert one.loc["livebench_agentic_coding", "n_questions"] == 72.0  # javascript 22 + python 20 + typescript 30
    assert one.loc["livebench_global", "run_usd"] == pytest.approx(
        one.loc[one.index.str.startswith("livebench_task_"), "run_usd"].sum())
    tokens = tasks.dropna(subset=["input_tokens_per_question"])  # NaN where the input price is 0 (ox-alpha-max)
    assert len(tokens) >= 44 * 23 and (tokens["input_tokens_per_question"] >= 0).all()


def test_livebench_older_release_without_cost_file():
    p = payload("livebench", RAW / "livebench" / "table_2026_01_08.csv", None)
    out = CONNECTORS["livebench"].parse(p)
    assert "model_costs" not in out and out["benchmark_scores"]["raw_name"].nunique() == 127


def test_livebench_renamed_task_and_price(livebench):
    broken = renamed(livebench, livebench.name, b",zebra_puzzle", b",zebra")
    assert_format_change("livebench", broken, livebench.name, "zebra_puzzle")
    broken = renamed(livebench, "cost_2026_06_25.csv", b"input_price_per_million", b"input_usd_per_million")
    assert_format_change("livebench", broken, "cost_2026_06_25.csv", "input_price_per_million")


# ---- Epoch -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def epoch():
    return payload("epoch_benchmarks", SNAPSHOTS / "epoch_ai_benchmarking_hub" / "2026-05-14", dt.date(2026, 5, 14))


def test_epoch_export(epoch):
    out = CONNECTORS["epoch_benchmarks"].parse(epoch)
    scores, models = out["benchmark_scores"], out["models"]
    eci = scores[scores["benchmark"] == "eci"]
    assert len(eci) == 369  # 608 ECI rows, 369 scored (snapshot README)
    best = eci.sort_values("score").iloc[-1]
    assert best["raw_name"].startswith("gpt-5.5-pro") and best["score"] == pytest.approx(158.7, abs=0.05)
    fractions = scores[scores["score_scale"] == "fraction"]["score"]
    assert fractions.between(0, 1).all()  # percent files divided by 100
    assert row(models, raw_name="gpt-5.5-pro_xhigh")["organization"] == "OpenAI"  # upstream spells it "OpenAI"


def test_epoch_update_drops_vendor_rows_and_replaces_the_older_export(epoch):
    from compass.ingest.connectors.epoch_benchmarks import merge_update

    update = CONNECTORS["epoch_benchmarks"].parse_update(
        payload("epoch_benchmarks", SNAPSHOTS / "epoch_ai_benchmarking_hub" / "2026-09", dt.date(2026, 9, 3)))
    gpqa = update["benchmark_scores"].query("benchmark == 'gpqa_diamond'")
    # gpt-6-astra_max: Epoch's run 0.9577 (id 3h8STJpG2VzY9LiBUzwotv) kept, the vendor row 0.96 (Source URL) dropped
    assert row(gpqa, raw_name="gpt-6-astra_max")["score"] == pytest.approx(0.9577, abs=1e-4)
    assert len(gpqa) == 311  # 312 rows, one vendor row
    assert {"frontiermath_v2", "frontiermath_tier_4_v2"} <= set(update["benchmark_scores"]["benchmark"])
    meta = row(update["models"], raw_name="gemini-3.7-flash_high")  # the file's Release date / Organization columns
    assert (meta["release_date"], meta["organization"]) == (dt.date(2026, 8, 13), "Google")
    merged = merge_update(CONNECTORS["epoch_benchmarks"].parse(epoch), update)["benchmark_scores"]
    gemma = merged.query("raw_name == 'gemma-3-27b-it' and benchmark == 'gpqa_diamond'")
    assert gemma["score"].tolist() == [pytest.approx(0.4773, abs=1e-4)]  # the 2026-09 re-run (0.4886 in 2026-05-14)
    assert row(merged.query("benchmark == 'eci'"), raw_name="gpt-5.5-pro_xhigh")["score"] > 150  # rest kept


def test_epoch_renamed_column_and_missing_file(epoch):
    broken = renamed(epoch, "gpqa_diamond.csv", b"mean_score", b"score_mean")
    assert_format_change("epoch_benchmarks", broken, "gpqa_diamond.csv", "mean_score")
    missing = Payload(epoch.name, {k: v for k, v in epoch.files.items() if k != "hle_external.csv"}, epoch.as_of)
    assert_format_change("epoch_benchmarks", missing, epoch.name, "hle_external.csv")


# ---- models.dev ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def models_dev():
    return payload("models_dev", SNAPSHOTS / "models_dev" / "2026-07-02" / "data.json.gz", None)


def test_models_dev_prices(models_dev):
    out = CONNECTORS["models_dev"].parse(models_dev)
    # upstream deepseek/deepseek-v4-pro cost {input 0.435, output 0.87} (snapshot README: was 1.74 / 3.48)
    v4 = row(out["model_costs"], raw_name="deepseek-v4-pro", provider="deepseek")
    assert (v4["input_usd_per_mtok"], v4["output_usd_per_mtok"], v4["cache_read_usd_per_mtok"]) == (0.435, 0.87, 0.003625)
    assert row(out["models"], raw_name="claude-fable-5")["organization"] == "Anthropic"
    # tool use is models.dev's tool_call (issue 48): true for claude-fable-5, false for a Workers AI embedding model
    assert row(out["models"], raw_name="claude-fable-5")["tool_use"] == True  # noqa: E712
    assert row(out["models"], raw_name="workers-ai/@cf/baai/bge-m3")["tool_use"] == False  # noqa: E712
    assert out["models"]["as_of"].iloc[0] == dt.date(2026, 6, 30)  # newest last_updated when no date is given


def test_models_dev_reads_every_provider_first_party_first(models_dev):
    out = CONNECTORS["models_dev"].parse(models_dev)
    costs, meta = out["model_costs"], out["models"]
    # StepFun is on no old provider list: its own rows price its models (stepfun/step-3.5-flash input 0.10)
    assert row(costs, raw_name="step-3.5-flash", provider="stepfun")["input_usd_per_mtok"] == 0.10
    # kimi-k2.5 is listed by many resellers; its metadata row is Moonshot AI's own
    assert row(meta, raw_name="kimi-k2.5")["organization"] == "Moonshot AI"
    # a model no provider serves first-party (LMArena's step-3) is priced by the resellers that list it
    assert {"nano_gpt", "zenmux"} <= set(costs.loc[costs["raw_name"].str.endswith("step-3"), "provider"])
    # resellers of first-party models are left out (anthropic serves claude-opus-4-7 itself)
    from compass.ingest.canonical import canonical_id

    assert set(costs.loc[costs["raw_name"].map(canonical_id) == "claude-opus-4-7", "provider"]) == {"anthropic"}


def test_models_dev_renamed_models_key(models_dev):
    plain = gzip.decompress(models_dev.main())
    broken = Payload("api.json", {"api.json": plain.replace(b'"models":', b'"entries":')}, DAY)
    assert_format_change("models_dev", broken, "api.json", "302ai.models")  # first provider in sorted order (all are read)
    cut = Payload("data.json.gz", {"data.json.gz": models_dev.main()[:5000]}, DAY)
    with pytest.raises(FormatChange, match="gzip"):
        CONNECTORS["models_dev"].parse(cut)


# ---- Aider -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def aider():
    return payload("aider_polyglot", RAW / "aider" / "polyglot_leaderboard.yml")


def test_aider_polyglot(aider):
    scores = CONNECTORS["aider_polyglot"].parse(aider)["benchmark_scores"]
    # upstream: model "Gemini 2.0 Pro exp-02-05", command "aider --model gemini/gemini-2.0-pro-exp-02-05", pass_rate_2 35.6
    assert row(scores, raw_name="gemini/gemini-2.0-pro-exp-02-05")["score"] == pytest.approx(0.356)
    assert len(scores) == 69 - 3  # 69 runs, 3 of them architect + editor pairs (an `editor_model`)
    # "Qwen3 32B", command "aider --model openrouter/qwen/qwen3-32b"; "DeepSeek R1 + claude-3-5-sonnet" (--model r1) is a pair
    assert "openrouter/qwen/qwen3-32b" in set(scores["raw_name"])
    assert scores["score"].between(0, 1).all()


def test_aider_renamed_pass_rate(aider):
    broken = renamed(aider, aider.name, b"pass_rate_2:", b"pass_rate_two:")
    assert_format_change("aider_polyglot", broken, aider.name, "pass_rate_2")


def test_aider_yaml_tags_are_not_executed(aider):
    evil = b"- !!python/object/apply:os.system ['echo pwned']\n"
    with pytest.raises(FormatChange, match="not valid YAML"):
        CONNECTORS["aider_polyglot"].parse(Payload(aider.name, {aider.name: evil}, DAY))


def test_a_gzip_bomb_is_refused_not_expanded(monkeypatch):
    """A gzip JSON body expanding beyond the cap (~1000:1 is easy) fails its source; it is never expanded whole."""
    from compass.ingest.untrusted import UntrustedInput, gunzip

    bomb = gzip.compress(b" " * 3_000_000)  # ~3 kB on the wire
    assert len(bomb) < 20_000
    with pytest.raises(UntrustedInput, match="gzip bomb"):
        gunzip(bomb, "api.json.gz", max_bytes=1_000_000)
    assert gunzip(gzip.compress(b"[1]"), "api.json.gz") == b"[1]"
    monkeypatch.setattr("compass.ingest.untrusted.MAX_GUNZIP_BYTES", 1_000_000)
    with pytest.raises(UntrustedInput, match="gzip bomb"):  # the connectors' JSON reader uses the same cap
        CONNECTORS["models_dev"].parse(Payload("api.json.gz", {"api.json.gz": bomb}, DAY))
