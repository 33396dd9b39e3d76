"""Every rejected input names its file, row and column (issue: Foundation, bad-input list)."""

from pathlib import Path

import pandas as pd
import pytest

from compass.ingest.aliases import alias_key, alias_lookup
from compass.ingest.errors import IngestError, IngestWarning
from compass.ingest.ingest import ingest_table, price_moves
from compass.ingest.load import SourceFile, load_config
from tests.paths import ROOT, FIXTURES

FIXTURE = FIXTURES / "tiny"
LOOKUP = alias_lookup(pd.read_csv(FIXTURE / "model_aliases.csv"), pd.read_csv(FIXTURE / "models.csv")["model_id"])

GOOD_SCORES = "model_id,benchmark,score,score_scale\ngpt-4o,gpqa_diamond,0.49,fraction\nclaude-3-5-sonnet,gpqa_diamond,0.54,fraction\n"
GOOD_COSTS = "model_id,provider,input_usd_per_mtok,output_usd_per_mtok\ngpt-4o,openai,2.5,10\nclaude-3-5-sonnet,anthropic,3,15\n"


def ingest_text(tmp_path: Path, table: str, text: str, name: str = "input.csv") -> pd.DataFrame:
    path = tmp_path / name
    path.write_text(text)
    return ingest_table(table, [SourceFile(table, path)], LOOKUP)


def rejected(tmp_path: Path, table: str, text: str) -> IngestError:
    with pytest.raises(IngestError) as info:
        ingest_text(tmp_path, table, text)
    assert "input.csv" in str(info.value)
    return info.value


def test_alias_spellings_resolve_to_one_canonical_id():
    for spelling in ("gpt-4o-2024-08-06", "GPT-4O-2024-08-06", "openai/gpt-4o", "gpt-4o", " GPT-4o "):
        assert LOOKUP[alias_key(spelling)] == "gpt-4o"
    assert alias_key("meta-llama/Meta-Llama-3.1-70B-Instruct") == "meta-llama-3.1-70b-instruct"


def test_good_file_resolves_aliases_and_blends_price(tmp_path):
    costs = ingest_text(tmp_path, "model_costs", GOOD_COSTS.replace("gpt-4o,", "openai/gpt-4o,"))
    assert list(costs["model_id"]) == ["gpt-4o", "claude-3-5-sonnet"]
    # blended = (3 * input + output) / 4
    assert costs["blended_usd_per_mtok"].tolist() == pytest.approx([(3 * 2.5 + 10) / 4, (3 * 3 + 15) / 4])
    assert set(costs["source"]) == {"input"}


def test_missing_column(tmp_path):
    err = rejected(tmp_path, "benchmark_scores", "model_id,benchmark\ngpt-4o,gpqa\n")
    assert (err.row, err.column) == (None, "score")


def test_misnamed_column_is_named(tmp_path):
    err = rejected(tmp_path, "benchmark_scores", GOOD_SCORES.replace(",score,", ",scor,"))
    assert err.column == "score" and "scor" in str(err)


def test_non_numeric_score(tmp_path):
    err = rejected(tmp_path, "benchmark_scores", GOOD_SCORES.replace("0.54", "high"))
    assert (err.row, err.column) == (2, "score") and "'high'" in str(err)


def test_out_of_range_score(tmp_path):
    err = rejected(tmp_path, "benchmark_scores", GOOD_SCORES.replace("0.49", "49"))
    assert (err.row, err.column) == (1, "score")


def test_negative_price(tmp_path):
    err = rejected(tmp_path, "model_costs", GOOD_COSTS.replace("3,15", "-3,15"))
    assert (err.row, err.column) == (2, "input_usd_per_mtok")


def test_absurd_price(tmp_path):
    err = rejected(tmp_path, "model_costs", GOOD_COSTS.replace("2.5,10", "2.5,10000000"))
    assert (err.row, err.column) == (1, "output_usd_per_mtok")


def test_duplicate_keys(tmp_path):
    err = rejected(tmp_path, "benchmark_scores", GOOD_SCORES + "GPT-4O-2024-08-06,gpqa_diamond,0.5,fraction\n")
    assert err.row == 3 and "first seen at row 1" in str(err)


def test_unknown_model_id(tmp_path):
    err = rejected(tmp_path, "benchmark_scores", GOOD_SCORES + "mystery-model-9000,gpqa_diamond,0.3,fraction\n")
    assert (err.row, err.column) == (3, "model_id") and "mystery-model-9000" in str(err)


def test_correctness_outside_binary(tmp_path):
    text = "dataset,query_id,model_id,correct\nd,q1,gpt-4o,1\nd,q2,gpt-4o,0.5\n"
    err = rejected(tmp_path, "query_records", text)
    assert (err.row, err.column) == (2, "correct")


def test_empty_file(tmp_path):
    err = rejected(tmp_path, "benchmark_scores", "")
    assert "empty" in str(err)
    err = rejected(tmp_path, "benchmark_scores", "model_id,benchmark,score\n")
    assert "empty" in str(err)


def test_malformed_yaml_names_line(tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("sources:\n  - table: models\n    path: [unclosed\n")
    with pytest.raises(IngestError) as info:
        load_config(config)
    assert "bad.yaml" in str(info.value) and info.value.row is not None and "malformed YAML" in str(info.value)


def test_config_unknown_table_names_entry(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("sources:\n  - {table: model_costs, path: a.csv}\n  - {table: pricez, path: b.csv}\n")
    with pytest.raises(IngestError) as info:
        load_config(config)
    assert (info.value.row, info.value.column) == (2, "table")


def test_price_moved_over_10x_warns(tmp_path):
    new = ingest_text(tmp_path, "model_costs", GOOD_COSTS.replace("2.5,10", "30,120"))
    old = ingest_text(tmp_path, "model_costs", GOOD_COSTS, name="old.csv")
    with pytest.warns(IngestWarning, match="gpt-4o at openai moved"):
        moved = price_moves(new, old)
    assert moved["model_id"].tolist() == ["gpt-4o"]


def test_later_file_overrides_same_key(tmp_path):
    (tmp_path / "a.csv").write_text(GOOD_COSTS)
    (tmp_path / "b.csv").write_text("model_id,provider,input_usd_per_mtok,output_usd_per_mtok,source\ngpt-4o,openai,1,4,a\n")
    files = [SourceFile("model_costs", tmp_path / "a.csv"), SourceFile("model_costs", tmp_path / "b.csv")]
    costs = ingest_table("model_costs", files, LOOKUP).set_index("model_id")
    assert costs.loc["gpt-4o", "input_usd_per_mtok"] == 1.0 and len(costs) == 2


def test_readme_example_config_ingests_against_the_default_aliases():
    root = ROOT
    sources = [s for s in load_config(root / "examples" / "config.yaml") if "examples" in str(s.path)]
    lookup = alias_lookup(pd.read_parquet(root / "data" / "model_aliases.parquet"),
                          pd.read_parquet(root / "data" / "models.parquet")["model_id"])
    scores = ingest_table("benchmark_scores", sources, lookup)
    costs = ingest_table("model_costs", sources, lookup)
    assert set(scores["model_id"]) == {"gpt-4o"} and len(scores) == 2
    assert costs["blended_usd_per_mtok"].tolist() == [pytest.approx((3 * 2.0 + 8.0) / 4)]
