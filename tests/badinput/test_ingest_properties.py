"""Property-based tests of the CSV and Parquet ingest (issue 17): any generated file is either accepted and
round-trips (values as written, model names canonical) or rejected with an IngestError naming the file."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compass.ingest.errors import IngestError
from compass.ingest.ingest import ingest_table
from compass.ingest.load import SourceFile, read_config
from compass.ingest.schemas import RAW_TABLES
from compass.ingest.validate import RANGES

MODELS = ["gpt-4o", "claude-3-5-sonnet"]
LOOKUP = {m: m for m in MODELS}
# Scores: anything a file might hold, in range or not, text or not.
CELL = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                 st.sampled_from(["", "nan", "inf", "-0", "1e-3", "0.5", " 0.7 "]))
ROW = st.tuples(st.sampled_from([*MODELS, "unknown-model"]), st.text(min_size=0, max_size=8), CELL)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(path: Path, rows: list[tuple]) -> None:
    try:
        frame = ingest_table("benchmark_scores", [SourceFile("benchmark_scores", path)], LOOKUP)
    except IngestError as exc:
        assert exc.file == str(path) and str(exc).startswith(str(path))
        return
    # accepted: every row kept (keys unique), known models, finite fractions as written
    assert len(frame) == len(rows)
    assert set(frame["model_id"]) <= set(MODELS)
    scores = frame["score"].to_numpy(dtype=float)
    assert np.isfinite(scores).all() and ((scores >= 0) & (scores <= 1)).all()
    written = pd.to_numeric(pd.Series([str(r[2]).strip() for r in rows]), errors="coerce").to_numpy(dtype=float)
    np.testing.assert_allclose(np.sort(scores), np.sort(written), rtol=1e-12)


@SETTINGS
@given(st.lists(ROW, min_size=1, max_size=6))
def test_csv_ingest_accepts_and_round_trips_or_rejects_cleanly(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("csv") / "scores.csv"
    pd.DataFrame(rows, columns=["model_id", "benchmark", "score"]).to_csv(path, index=False)
    _check(path, rows)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from([*MODELS, "unknown-model"]), st.text(min_size=1, max_size=8),
                          st.floats(allow_nan=True, allow_infinity=True)), min_size=1, max_size=6))
def test_parquet_ingest_accepts_and_round_trips_or_rejects_cleanly(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("pq") / "scores.parquet"
    pd.DataFrame(rows, columns=["model_id", "benchmark", "score"]).to_parquet(path, index=False)
    _check(path, rows)


# One valid row per raw table holding every numeric column (route_labels: a gold and a preference row), into
# whose first row a generated cell is written.
ROWS = {
    "models": {"model_id": "m1", "params_b": 1, "context_window": 1000},
    "model_costs": {"model_id": "gpt-4o", "provider": "x", "input_usd_per_mtok": 1, "output_usd_per_mtok": 2,
                    "blended_usd_per_mtok": 1.25, "throughput_tps": 50, "latency_s": 0.5},
    "benchmark_scores": {"model_id": "gpt-4o", "benchmark": "b", "score": 0.5, "stderr": 0.01},
    "interactions": {"dataset": "chat", "interaction_id": "i1", "model_id": "gpt-4o", "outcome": 1},
    "query_records": {"dataset": "ds", "split": "test", "query_id": "q1", "model_id": "gpt-4o", "generation": 0,
                      "correct": 1, "score": 0.5, "confidence": -0.1, "cost_usd": 0.01, "latency_ms": 100,
                      "tokens_in": 10, "tokens_out": 20},
    "route_labels": {"dataset": "r", "query_id": "q1", "query_text": "hi", "model_p": "gpt-4o",
                     "model_a": "claude-3-5-sonnet", "label_kind": "gold", "outcome": 2, "tokens_out_p": 10,
                     "tokens_out_a": 5},
}
NUMERIC = [(t, c.name) for t in ROWS for c in RAW_TABLES[t].columns if c.kind in ("float", "int") and c.name in ROWS[t]]
NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30),
                   st.sampled_from(["inf", "-inf", "nan", "1e30", "1e400", "-1e-300", "", "abc", "0x10"]))


@SETTINGS
@given(st.sampled_from(NUMERIC), NUMBER)
@example(("models", "context_window"), "inf")  # issue 43: OverflowError in the Int64 cast
@example(("query_records", "generation"), "1e30")  # issue 43: TypeError in the Int64 cast
@example(("interactions", "outcome"), "inf")  # issue 43: accepted
@example(("model_costs", "latency_s"), "inf")  # issue 43: accepted
@example(("query_records", "confidence"), "-inf")  # a log-probability of 0: accepted, as in the shipped data
def test_a_number_is_finite_and_in_its_stated_range_or_rejected_naming_its_cell(tmp_path_factory, where, cell):
    table, column = where
    rows = [{**ROWS[table], column: cell}]
    if table == "route_labels":
        rows.append({**ROWS[table], "label_kind": "preference", "outcome": 1})
    path = tmp_path_factory.mktemp("num") / f"{table}.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    if table == "query_records":  # issue 45: the pipeline's DuckDB path rejects what pandas rejects, at the same cell
        _same_verdict_in_duckdb(path)
    try:
        frame = ingest_table(table, [SourceFile(table, path)], None if table == "models" else LOOKUP)
    except IngestError as exc:
        assert (exc.file, exc.row, exc.column) == (str(path), 1, column) and "\n" not in str(exc), str(exc)
        return
    value = frame[column].astype(float).iloc[0]
    low, high = RANGES.get(table, {}).get(column, (-np.inf, np.inf))
    assert np.isnan(value) or (low <= value <= high and (np.isfinite(value) or (column, value) == ("confidence", -np.inf)))


def _same_verdict_in_duckdb(path: Path) -> None:
    """check_query_records (resources.query_ingest) accepts what ingest_table accepts, and rejects the rest naming
    the same file, row and column in one line."""
    import duckdb

    from resources.query_ingest import check_query_records

    sources = [SourceFile("query_records", path)]
    try:
        ingest_table("query_records", sources, LOOKUP)
        expected = None
    except IngestError as exc:
        expected = (exc.file, exc.row, exc.column)
    try:
        with duckdb.connect() as con:
            check_query_records(con, sources, LOOKUP)
        got = None
    except IngestError as exc:
        assert "\n" not in str(exc)
        got = (exc.file, exc.row, exc.column)
    assert got == expected


KEY_CELLS = st.sampled_from(["a", "b", ""])


@SETTINGS
@given(st.lists(st.tuples(KEY_CELLS, KEY_CELLS, KEY_CELLS), min_size=1, max_size=5), st.booleans())
@example([("a", "", ""), ("a", "", "")], False)  # issue 43: `boolean value of NA is ambiguous` without split, generation
def test_duplicate_keys_with_or_without_the_optional_key_columns_are_one_line(tmp_path_factory, keys, optional):
    rows = [{"dataset": "ds", "query_id": q or "q", "model_id": "gpt-4o", "correct": 1,
             **({"split": s or None, "generation": g and "0"} if optional else {})} for q, s, g in keys]
    path = tmp_path_factory.mktemp("dup") / "records.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    try:
        frame = ingest_table("query_records", [SourceFile("query_records", path)], LOOKUP)
    except IngestError as exc:
        assert exc.file == str(path) and exc.row is not None and exc.column in ("dataset", "split", "generation"), str(exc)
        return
    assert not frame.duplicated(["dataset", "split", "query_id", "model_id", "generation"]).any()


YAML_VALUE = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True, allow_infinity=True),
                       st.text(max_size=6), st.sampled_from(["2026-13-45", "2026-01-01", "folder", "x.csv", "http://h/x"]),
                       st.lists(st.integers(), max_size=2))
ENTRY_KEYS = ["table", "path", "as_of", "connector", "url", "max_bytes", "timeout_s", "retries", "backoff_s"]
CONFIG_KEYS = ["replace_defaults", "aliases", "stale_after_hours", "match_threshold"]


def _config_text(top: dict, entries: list[dict]) -> str:
    """YAML by hand: values as YAML spells them (`.inf`, an unquoted 2026-13-45), as a person writes them."""
    def spell(v):
        return {True: "true", False: "false", None: "null"}.get(v, v) if isinstance(v, bool) or v is None else (
            ".nan" if isinstance(v, float) and v != v else ".inf" if v == float("inf") else "-.inf"
            if v == float("-inf") else json.dumps(v) if isinstance(v, (str, list)) and not str(v)[:4].isdigit() else v)
    lines = [f"{k}: {spell(v)}" for k, v in top.items()]
    return "\n".join(lines + ["sources:"] + ["  - {" + ", ".join(f"{k}: {spell(v)}" for k, v in e.items()) + "}"
                                             for e in entries]) + "\n"


@SETTINGS
@given(st.dictionaries(st.sampled_from(CONFIG_KEYS), YAML_VALUE, max_size=2),
       st.lists(st.dictionaries(st.sampled_from(ENTRY_KEYS), YAML_VALUE, max_size=4), max_size=2),
       st.sampled_from([b"", b"# caf\xe9\n", b"\xff\xfe"]))
@example({}, [{"connector": "litellm_prices", "url": "https://x/p.json", "max_bytes": float("inf")}], b"")  # issue 43
@example({}, [{"table": "models", "path": "x.csv", "as_of": "2026-13-45"}], b"")  # issue 43: ValueError in YAML
@example({"aliases": "folder"}, [], b"")  # issue 43: IsADirectoryError
@example({}, [], b"# caf\xe9\n")  # issue 43: UnicodeDecodeError
def test_a_config_file_is_accepted_or_rejected_in_one_line_naming_it(tmp_path_factory, top, entries, tail):
    folder = tmp_path_factory.mktemp("config")
    (folder / "folder").mkdir()
    path = folder / "config.yaml"
    path.write_bytes(_config_text(top, entries).encode() + tail)
    try:
        read_config(path)
    except IngestError as exc:
        assert exc.file == str(path) and str(exc).startswith(str(path)) and "\n" not in str(exc), str(exc)
