"""Schema conformance, referential integrity and size of the default data in data/."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from compass.ingest.schemas import RAW_TABLES

from .conftest import DATA, TABLES

KIND_CHECK = {
    "str": lambda s: s.map(lambda v: isinstance(v, str)).all(),
    "float": pd.api.types.is_float_dtype,
    "int": pd.api.types.is_integer_dtype,
    "bool": pd.api.types.is_bool_dtype,
    "date": lambda s: s.map(lambda v: isinstance(v, dt.date)).all(),
}


@pytest.mark.parametrize("name", TABLES)
def test_schema_columns_kinds_and_key(tables, name):
    df, schema = tables[name], RAW_TABLES[name]
    assert not set(schema.column_names) - set(df.columns), f"{name} lacks schema columns"
    for col in schema.columns:
        values = df[col.name]
        if not col.nullable:
            assert values.notna().all(), f"{name}.{col.name} has nulls"
        present = values.dropna()
        if len(present) and col.kind in ("str", "date"):
            assert KIND_CHECK[col.kind](present), f"{name}.{col.name} is not {col.kind}"
        elif len(present):
            assert KIND_CHECK[col.kind](values), f"{name}.{col.name} dtype {values.dtype} is not {col.kind}"
    assert not df.duplicated(list(schema.key)).any(), f"{name} key {schema.key} not unique"


@pytest.mark.parametrize("name", TABLES)
def test_every_row_has_source_and_snapshot_date(tables, name):
    df = tables[name]
    assert df["source"].notna().all() and df["as_of"].notna().all()
    assert df["as_of"].map(lambda d: dt.date(2024, 1, 1) <= d <= dt.date(2026, 12, 31)).all()


@pytest.mark.parametrize("name", [t for t in TABLES if t != "models"])
def test_every_model_id_is_in_models(tables, name):
    known = set(tables["models"]["model_id"])
    unknown = set(tables[name]["model_id"]) - known
    assert not unknown, f"{name}: unknown ids {sorted(unknown)[:5]}"


def test_model_ids_are_lowercase_slugs_without_provider_prefix(tables):
    ids = tables["models"]["model_id"]
    assert (ids == ids.str.lower()).all()
    assert not ids.str.contains("/").any()
    assert not ids.str.contains(" ").any()


def test_data_folder_is_small():
    total = sum(p.stat().st_size for p in DATA.iterdir() if p.is_file())
    assert total < 20 * 2**20, f"data/ is {total / 2**20:.1f} MB"


def test_unmatched_report_lists_source_name_reason():
    report = pd.read_csv(DATA / "unmatched_names.csv")
    assert list(report.columns) == ["source", "raw_name", "reason"]
    assert report["reason"].notna().all() and len(report) > 0


def test_runtime_ingest_accepts_the_default_data():
    """The runtime validator (compass.ingest) takes every embedded table without error."""
    from compass.ingest.aliases import alias_lookup
    from compass.ingest.ingest import ingest_table
    from compass.ingest.load import TABLE_ORDER, default_sources

    sources = [s for s in default_sources(DATA) if s.table != "query_records"]  # the 570k-row table is checked above
    models = ingest_table("models", sources, None)
    lookup = alias_lookup(ingest_table("model_aliases", sources, None), models["model_id"])
    for table in TABLE_ORDER[2:5]:
        assert len(ingest_table(table, sources, lookup)) > 0
