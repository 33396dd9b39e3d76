"""resources.query_ingest: raw.query_records validated, coerced, resolved and merged in DuckDB gives the table the
pandas path (`compass.ingest.ingest.ingest_table`) gives, and rejects each bad cell naming the same file, row and
column, without the rows becoming a DataFrame (issue 45)."""

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from compass.ingest.aliases import alias_lookup
from compass.ingest.errors import IngestError
from compass.ingest.ingest import ingest_table
from compass.ingest.load import SourceFile
from resources.query_ingest import check_query_records, configure, stage_query_records
from resources.warehouse import _typed_nulls
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "tiny"
LOOKUP = alias_lookup(pd.read_csv(FIXTURE / "model_aliases.csv"), pd.read_csv(FIXTURE / "models.csv")["model_id"])

HEADER = "dataset,split,query_id,model_id,generation,correct,confidence,cost_usd,category\n"
GOOD = HEADER + "".join(f"d,{'test' if q % 3 else 'train'},q{q},{m},0,{q % 2},-0.{q + 1},0.0{q + 1}, cat{q % 2} \n"
                        for q in range(6) for m in ("gpt-4o", "Claude-3-5-Sonnet"))

def _sources(tmp_path: Path) -> list[SourceFile]:
    """Three files: a CSV, a Parquet file overriding two of its rows and adding a column, a CSV lacking optional
    columns with a provenance date from the config."""
    first = tmp_path / "a.csv"
    first.write_text(GOOD)
    second = pd.DataFrame({"dataset": ["d", "d", "e"], "split": ["test", "train", "all"], "query_id": ["q1", "q3", 7],
                           "model_id": ["gpt-4o", "claude-3-5-sonnet", "gpt-4o"], "generation": [0, 0, 0],
                           "correct": [1.0, float("nan"), 0.0], "confidence": [float("-inf"), -0.5, -0.25],
                           "latency_ms": [12.5, 3.0, None], "source": ["upstream", "upstream", "other"]})
    second["query_id"] = second["query_id"].astype(str)
    (tmp_path / "b.parquet").unlink(missing_ok=True)
    second.to_parquet(tmp_path / "b.parquet")
    third = tmp_path / "c.csv"
    third.write_text("dataset,query_id,model_id,correct,note\ne,q9,gpt-4o,1,hello\ne,q8,gpt-4o,,\n")
    return [SourceFile("query_records", first), SourceFile("query_records", tmp_path / "b.parquet"),
            SourceFile("query_records", third, pd.Timestamp("2026-03-01").date())]


def _staged(sources: list[SourceFile], tmp_path: Path) -> pd.DataFrame:
    with duckdb.connect() as con:
        configure(con, tmp_path / "spill")
        stage_query_records(con, sources, LOOKUP)
        return con.execute("select * from staged_records").df()


def _as_stored(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame as DuckDB stores it (what publish writes), read back."""
    with duckdb.connect() as con:
        con.register("f", _typed_nulls(frame))
        return con.execute("select * from f").df()


def test_the_staged_table_is_the_pandas_table(tmp_path):
    sources = _sources(tmp_path)
    staged = _staged(sources, tmp_path)
    expected = _as_stored(ingest_table("query_records", sources, LOOKUP))
    pd.testing.assert_frame_equal(staged, expected)
    assert list(staged["model_id"].unique()) == ["gpt-4o", "claude-3-5-sonnet"]  # the spellings resolved
    assert len(staged) == 12 + 1 + 2  # two rows of a.csv replaced by b.parquet, one new there, two in c.csv


def test_no_row_becomes_a_dataframe(tmp_path, monkeypatch):
    """The rows are read by DuckDB and pyarrow only: pandas' readers are never called on a valid input."""
    sources = _sources(tmp_path)

    def refused(*args, **kwargs):
        raise AssertionError("pandas read the rows")

    monkeypatch.setattr(pd, "read_csv", refused)
    monkeypatch.setattr(pd, "read_parquet", refused)
    with duckdb.connect() as con:
        check_query_records(con, sources, LOOKUP)


BAD_CELLS = [  # (row, column, replacement of the row's text in GOOD)
    (3, "generation", ("q1,gpt-4o,0,", "q1,gpt-4o,0.5,")),
    (3, "generation", ("q1,gpt-4o,0,", "q1,gpt-4o,1e30,")),
    (3, "correct", ("q1,gpt-4o,0,1,", "q1,gpt-4o,0,0.5,")),
    (3, "correct", ("q1,gpt-4o,0,1,", "q1,gpt-4o,0,yes,")),
    (3, "cost_usd", ("-0.2,0.02", "-0.2,-0.02")),
    (3, "confidence", ("-0.2,0.02", "inf,0.02")),
    (5, "model_id", ("q2,gpt-4o", "q2,gpt-5-unknown")),
    (5, "query_id", ("d,test,q2,gpt-4o", "d,test,,gpt-4o")),
    (7, "dataset", ("d,train,q3,gpt-4o", "d/x,train,q3,gpt-4o")),
    (4, "dataset", ("d,test,q1,Claude-3-5-Sonnet", "d,train,q0,GPT-4o")),  # row 4 repeats row 1's key, resolved
]


@pytest.mark.parametrize("row,column,edit", BAD_CELLS)
def test_a_bad_cell_is_named_as_the_pandas_path_names_it(tmp_path, row, column, edit):
    text = GOOD.replace(*edit, 1)
    assert text != GOOD
    path = tmp_path / "input.csv"
    path.write_text(text)
    sources = [SourceFile("query_records", path)]
    with pytest.raises(IngestError) as pandas_error:
        ingest_table("query_records", sources, LOOKUP)
    with pytest.raises(IngestError) as sql_error, duckdb.connect() as con:
        check_query_records(con, sources, LOOKUP)
    assert (pandas_error.value.file, pandas_error.value.row, pandas_error.value.column) == (str(path), row, column)
    assert (sql_error.value.file, sql_error.value.row, sql_error.value.column) == (str(path), row, column)


def test_a_bad_row_in_a_parquet_file_is_named(tmp_path):
    frame = pd.DataFrame({"dataset": ["d"] * 4, "query_id": ["q1", "q2", "q3", "q4"], "model_id": ["gpt-4o"] * 4,
                          "correct": [1.0, 0.0, 2.0, 1.0]})
    frame.to_parquet(tmp_path / "r.parquet")
    with pytest.raises(IngestError) as info, duckdb.connect() as con:
        check_query_records(con, [SourceFile("query_records", tmp_path / "r.parquet")], LOOKUP)
    assert (info.value.row, info.value.column) == (3, "correct") and "1 bad row" in str(info.value)


def test_missing_column_and_empty_file_are_the_pandas_messages(tmp_path):
    for text in ("dataset,queryid,model_id\nd,q1,gpt-4o\n", HEADER, ""):
        path = tmp_path / "input.csv"
        path.write_text(text)
        sources = [SourceFile("query_records", path)]
        with pytest.raises(IngestError) as pandas_error:
            ingest_table("query_records", sources, LOOKUP)
        with pytest.raises(IngestError) as sql_error, duckdb.connect() as con:
            check_query_records(con, sources, LOOKUP)
        assert str(sql_error.value) == str(pandas_error.value)


def test_the_integrity_check_counts_in_duckdb_what_pandas_counts(tmp_path):
    """raw.<table>'s blocking check: rows repeating a key (nulls equal) and model names not in raw.models."""
    from resources.readers import key_and_model_faults
    from resources.warehouse import Warehouse

    rows = pd.DataFrame({"dataset": ["d"] * 6, "split": [None, None, "test", "test", "test", "test"],
                         "query_id": ["q1", "q1", "q1", "q1", "q2", "q3"],
                         "model_id": ["gpt-4o", "gpt-4o", "gpt-4o", "gpt-4o", "nobody", None], "generation": 0})
    wh = Warehouse(tmp_path / "w.duckdb")
    with wh.connect() as con:
        con.execute("create schema raw")
        con.execute("create table raw.models as select 'gpt-4o' as model_id")
        con.register("rows_frame", rows)
        con.execute("create table raw.query_records as select * from rows_frame")
        con.execute("create table raw.empty as select * from rows_frame limit 0")
    key = ["dataset", "split", "query_id", "model_id", "generation"]
    expected_dup = int(rows.duplicated(subset=key).sum())
    expected_unknown = int((~rows["model_id"].isin(["gpt-4o"])).sum())
    assert (expected_dup, expected_unknown) == (2, 2)
    assert key_and_model_faults(wh, "raw.query_records", key, ["model_id"]) == (6, expected_dup, expected_unknown)
    assert key_and_model_faults(wh, "raw.empty", key, ["model_id"]) == (0, 0, 0)


@pytest.mark.parametrize("hashed", ["real", "all rows collide"])
def test_the_duplicate_check_finds_what_pandas_finds_and_a_collision_is_no_error(tmp_path, monkeypatch, hashed):
    """The duplicate check groups on a 64-bit hash of the key and verifies on the full key: with every row's hash
    forced equal, a file without repeats still passes and a repeated key is the error of the check before hashing
    (the pandas path's file, row and column; the pandas message spells the generation np.int64(0))."""
    import resources.query_ingest as qi

    if hashed != "real":
        monkeypatch.setattr(qi, "_key_hash", lambda key: "0::ubigint")
    path = tmp_path / "input.csv"
    path.write_text(GOOD)
    with duckdb.connect() as con:
        check_query_records(con, [SourceFile("query_records", path)], LOOKUP)  # no repeats: no error
    path.write_text(GOOD + "d,test,q5, gpt-4o ,0,0,-0.1,0.01,x\nd,test,q4,GPT-4o,0,0,-0.1,0.01,x\n")
    sources = [SourceFile("query_records", path)]
    with pytest.raises(IngestError) as pandas_error:
        ingest_table("query_records", sources, LOOKUP)
    with pytest.raises(IngestError) as sql_error, duckdb.connect() as con:
        check_query_records(con, sources, LOOKUP)
    assert (sql_error.value.file, sql_error.value.row, sql_error.value.column) == \
        (pandas_error.value.file, pandas_error.value.row, pandas_error.value.column) == (str(path), 13, "dataset")
    assert str(sql_error.value) == str(IngestError(str(path), 13, "dataset", (
        "duplicate key ('d', 'test', 'q5', 'gpt-4o', 0) over columns ['dataset', 'split', 'query_id', 'model_id', "
        "'generation']; first seen at row 11")))
