"""The bad-input corpus (issue 17): one entry per way a user file can be wrong, across every raw table and the
source config. Each entry is the file's name, its bytes (CSV text, raw bytes or a Parquet-writing function) and
what the one-line error must name: (row, column), or None for the file-level errors. `accepted` entries are
edge cases that are valid on purpose (a UTF-8 byte-order mark, values exactly at a limit, a later file
correcting an earlier one) and must load."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

SCORES = "model_id,benchmark,score,score_scale\ngpt-4o,gpqa_diamond,0.49,fraction\n"
COSTS = "model_id,provider,input_usd_per_mtok,output_usd_per_mtok\ngpt-4o,openai,2.5,10\n"
MODELS = "model_id,display_name,organization,release_date,open_weights\nnew-model,New,Org,2025-01-01,true\n"
INTERACTIONS = "dataset,interaction_id,model_id,outcome\nchat,i1,gpt-4o,1\n"
RECORDS = "dataset,split,query_id,model_id,generation,correct\nds,test,q1,gpt-4o,0,1\n"
ALIASES = "alias,model_id\nGPT4o-latest,gpt-4o\n"
LABELS = ("dataset,query_id,query_text,model_p,model_a,label_kind,outcome\n"
          "r,q1,hello,gpt-4o,llama-3.1-70b-instruct,gold,2\nr,q2,bye,gpt-4o,llama-3.1-70b-instruct,preference,1\n")


def _labels(embeddings: list) -> Callable[[Path], None]:
    rows = [line.split(",") for line in LABELS.splitlines()[1:]]
    frame = pd.DataFrame(rows, columns=LABELS.splitlines()[0].split(",")).assign(outcome=[2.0, 1.0])
    return _parquet(frame.assign(query_text=None, embedding=embeddings))


def _parquet(frame: pd.DataFrame) -> Callable[[Path], None]:
    return lambda path: frame.to_parquet(path, index=False)


@dataclass(frozen=True)
class Case:
    id: str
    table: str
    name: str
    content: str | bytes | Callable[[Path], None]
    where: tuple[int | None, str | None] | None  # (row, column) the message must name; None: the file only
    accepted: bool = False
    config_text: str | bytes | None = None  # config-level cases: these lines instead of the file's source entry
    names: str | None = None  # the file the message names, if not the default (the config, or the case's file)

    def write(self, folder: Path) -> Path:
        path = folder / self.name
        if callable(self.content):
            self.content(path)
        elif isinstance(self.content, bytes):
            path.write_bytes(self.content)
        else:
            path.write_text(self.content)
        return path


CORPUS = [
    # files that are not data
    Case("empty_file", "models", "empty.csv", "", None),
    Case("header_only", "benchmark_scores", "header_only.csv", "model_id,benchmark,score,score_scale\n", None),
    Case("invalid_utf8", "models", "latin1.csv", MODELS.encode() + b"caf\xe9-model,Caf\xe9,Org,2025-01-01,true\n",
         (2, None)),
    Case("byte_order_mark", "models", "bom.csv", b"\xef\xbb\xbf" + MODELS.encode(), None, accepted=True),
    Case("ragged_row", "benchmark_scores", "ragged.csv", SCORES + "gpt-4o,mmlu,0.5,fraction,extra,more\n", (2, None)),
    Case("unsupported_type", "models", "models.xlsx", b"PK\x03\x04", None),
    # wrong types, in CSV and in Parquet
    Case("score_not_numeric", "benchmark_scores", "bad_score.csv", SCORES.replace("0.49", "high"), (1, "score")),
    Case("parquet_score_strings", "benchmark_scores", "scores.parquet",
         _parquet(pd.DataFrame({"model_id": ["gpt-4o"], "benchmark": ["mmlu"], "score": ["high"]})), (1, "score")),
    Case("parquet_bool_for_price", "model_costs", "costs.parquet",
         _parquet(pd.DataFrame({"model_id": ["gpt-4o"], "provider": ["x"], "input_usd_per_mtok": ["cheap"],
                                "output_usd_per_mtok": [1.0]})), (1, "input_usd_per_mtok")),
    Case("bool_not_boolean", "models", "bool.csv", MODELS.replace(",true", ",maybe"), (1, "open_weights")),
    Case("date_not_date", "models", "date.csv", MODELS.replace("2025-01-01", "2025-13-45"), (1, "release_date")),
    Case("generation_fractional", "query_records", "gen.csv", RECORDS.replace(",0,1", ",1.5,1"), (1, "generation")),
    Case("outcome_not_numeric", "interactions", "outcome.csv", INTERACTIONS.replace(",1\n", ",good\n"), (1, "outcome")),
    # NaN, infinity, limits
    Case("score_nan", "benchmark_scores", "nan.csv", SCORES.replace("0.49", "nan"), (1, "score")),
    Case("score_infinite", "benchmark_scores", "inf.csv", SCORES.replace("0.49", "inf"), (1, "score")),
    Case("score_above_one", "benchmark_scores", "above.csv", SCORES.replace("0.49", "1.0000001"), (1, "score")),
    Case("score_at_limits", "benchmark_scores", "limits.csv", SCORES + "gpt-4o,mmlu,1.0,fraction\n"
         "gpt-4o,hle,0,fraction\n", None, accepted=True),
    Case("price_infinite", "model_costs", "inf_price.csv", COSTS.replace("2.5", "inf"), (1, "input_usd_per_mtok")),
    Case("price_negative", "model_costs", "neg_price.csv", COSTS.replace("10", "-0.01"), (1, "output_usd_per_mtok")),
    Case("price_absurd", "model_costs", "absurd.csv", COSTS.replace("10", "10000000"), (1, "output_usd_per_mtok")),
    Case("context_window_infinite", "models", "ctx.csv", "model_id,context_window\nnew-model,inf\n", (1, "context_window")),
    Case("generation_huge", "query_records", "gen_huge.csv", RECORDS.replace(",0,1", ",1e30,1"), (1, "generation")),
    Case("outcome_infinite", "interactions", "outcome_inf.csv", INTERACTIONS.replace(",1\n", ",inf\n"), (1, "outcome")),
    Case("latency_infinite", "model_costs", "latency.csv", COSTS.replace("per_mtok\n", "per_mtok,latency_s\n")
         .replace(",10\n", ",10,inf\n"), (1, "latency_s")),
    Case("confidence_log_zero", "query_records", "logp.csv", RECORDS.replace("correct\n", "correct,confidence\n")
         .replace(",0,1\n", ",0,1,-inf\n"), None, accepted=True),  # a log-probability of 0, as in the shipped data
    Case("cost_usd_negative", "query_records", "cost.csv", RECORDS.replace("correct\n", "correct,cost_usd\n")
         .replace(",0,1\n", ",0,1,-1\n"), (1, "cost_usd")),
    Case("correct_not_binary", "query_records", "correct.csv", RECORDS.replace(",0,1\n", ",0,2\n"), (1, "correct")),
    # identities and keys
    Case("sql_looking_dataset", "query_records", "sql.csv", RECORDS.replace("ds,", "x'; drop table raw.models; --,"),
         (1, "dataset")),
    Case("unknown_model", "benchmark_scores", "unknown.csv", SCORES.replace("gpt-4o", "no-such-model"),
         (1, "model_id")),
    Case("alias_to_unknown_model", "model_aliases", "alias.csv", ALIASES.replace(",gpt-4o", ",no-such-model"),
         (1, "model_id")),
    Case("duplicate_key_in_file", "benchmark_scores", "dup.csv", SCORES + "GPT-4O-2024-08-06,gpqa_diamond,0.5,fraction\n",
         (2, "model_id")),
    Case("duplicate_key_without_optional_columns", "query_records", "dup_records.csv",
         "dataset,query_id,model_id,correct\nds,q1,gpt-4o,1\nds,q1,gpt-4o,0\n", (2, "dataset")),
    Case("missing_required_column", "model_costs", "nocol.csv", "model_id,provider,input_usd_per_mtok\ngpt-4o,x,1\n",
         (None, "output_usd_per_mtok")),
    # routing labels (raw.route_labels, seed 003)
    Case("preference_outside_unit", "route_labels", "pref.csv", LABELS.replace("preference,1", "preference,1.5"),
         (2, "outcome")),
    Case("no_gold_rows", "route_labels", "nogold.csv", LABELS.replace(",gold,2", ",preference,1"), (1, "label_kind")),
    Case("no_preference_rows", "route_labels", "nopref.csv", LABELS.replace(",preference,", ",gold,"),
         (1, "label_kind")),
    Case("unknown_label_kind", "route_labels", "kind.csv", LABELS.replace(",gold,", ",golden,"), (1, "label_kind")),
    Case("pair_disagrees", "route_labels", "pair.csv", LABELS.replace("q2,bye,gpt-4o,llama-3.1-70b-instruct",
                                                                      "q2,bye,gpt-4o,claude-3-5-sonnet"), (2, "model_p")),
    Case("neither_text_nor_embedding", "route_labels", "notext.csv", LABELS.replace("q2,bye,", "q2,,"),
         (2, "query_text")),
    Case("embedding_nan", "route_labels", "nan_emb.parquet", _labels([[0.1, 0.2], [0.3, float("nan")]]),
         (2, "embedding")),
    Case("embedding_unequal_length", "route_labels", "ragged_emb.parquet", _labels([[0.1, 0.2], [0.3]]),
         (2, "embedding")),
    Case("duplicate_query_label", "route_labels", "dup_label.csv", LABELS + "r,q1,again,gpt-4o,llama-3.1-70b-instruct,gold,1\n",
         (3, "dataset")),
    Case("route_labels_with_embeddings", "route_labels", "emb.parquet", _labels([[0.1, 0.2], [0.3, 0.4]]), None,
         accepted=True),
    # the source config itself
    Case("config_unknown_table", "models", "models.csv", MODELS, (5, "table"), config_text="  - {table: modles, path: x.csv}\n"),
    Case("config_missing_file", "models", "models.csv", MODELS, None,
         config_text="  - {table: models, path: /nonexistent/models.csv}\n"),
    Case("config_entry_without_path", "models", "models.csv", MODELS, (5, "sources"), config_text="  - {table: models}\n"),
    Case("config_not_yaml", "models", "models.csv", MODELS, None, config_text="  - {table: models, path: [unclosed\n"),
    Case("config_not_utf8", "models", "models.csv", MODELS, (8, None), config_text=b"# caf\xe9\n"),
    Case("config_max_bytes_infinite", "models", "models.csv", MODELS, (5, "max_bytes"),
         config_text="  - {connector: litellm_prices, url: 'https://example.org/p.json', max_bytes: .inf}\n"),
    Case("config_as_of_impossible", "models", "models.csv", MODELS, (8, "character 46"),
         config_text="  - {table: models, path: models.csv, as_of: 2026-13-45}\n"),
    Case("config_aliases_folder", "models", "models.csv", MODELS, (None, "aliases"), config_text="aliases: .\n"),
    Case("aliases_not_utf8", "model_aliases", "aliases.csv", b"alias,model_id\ncaf\xe9,gpt-4o\n", (1, None),
         config_text="aliases: aliases.csv\n", names="aliases.csv"),
]
