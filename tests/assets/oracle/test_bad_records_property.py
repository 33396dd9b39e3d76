"""Bad per-query records at the oracle asset's level (paper 002; the bad-input contract): on generated record sets
that break a rule (`tests.resources.record_sets`, every set perturbed), materializing the records' ingest, the
dataset extracts and the oracle partition of their dataset fails with the one line the row path gives for those
records (the ingest's `validate_table` when it rejects the file, else `prepare` on the ingested records with the
extract's prices), and no oracle table and no oracle data version changes, the dataset's own included (materialized
from a valid set first)."""

import itertools
import shutil

import dagster as dg
import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings

from assets.datasets import DATASET_PRICES, DATASET_RECORDS
from compass.ingest.errors import IngestError
from compass.ingest.extracts import dataset_prices
from compass.ingest.load import SourceFile, read_file
from compass.ingest.schemas import RAW_TABLES
from compass.ingest.validate import validate_table
from pipelines.definitions import defs
from pipelines.refresh import DATA_VERSION_TAG, RefreshReport, run_selection
from resources.readers import model_lookup
from resources.warehouse import Warehouse
from tests.assets.oracle.conftest import CONFIG, ENV, ORACLE_KEYS, materialize_oracle, write_config
from tests.assets.oracle.test_bad_input import oracle_tables
from tests.pipelines.helpers import assert_same_tables, materialize_branch, throwaway_instance
from tests.resources.record_sets import MODELS, PERTURBATIONS, clean_records, record_sets
from tests.resources.test_oracle_extract import PRICED, _prices, _rows_path

# The generated models (and the strays of a sparse table) as canonical models, a..e priced.
EXTRAS = [("models", "model_id\n" + "".join(f"{m}\n" for m in MODELS + tuple(f"z{k}" for k in range(10)))),
          ("model_costs", _prices().drop(columns="blended_usd_per_mtok").to_csv(index=False))]
RECORDS_FILE = f"extra_query_records_{len(EXTRAS)}.csv"
# The perturbations in turn (`record_sets`): one the preparation rejects (a NULL correctness, a NaN cost, a stray
# generation) or, in some sets, accepts (a missing record drops its prompt, models answering one prompt each are
# dropped) between two the ingest rejects (a NULL generation, a repeated key, a non-binary correctness, ...).
KINDS = ("null_correct", "null_generation", "nan_cost", "duplicate_record", "stray_generation", "not_binary",
         "missing_record", "null_query_id", "null_correct", "negative_generation", "nan_cost", "fractional_generation",
         "stray_generation", "no_generation_no_cost", "sparse_models", "empty_split")
assert sorted(set(KINDS)) == sorted(PERTURBATIONS)
_KINDS = itertools.count()
OUTPUTS = [k for k in ORACLE_KEYS if k.path[0] == "oracle"]


def _extras(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """The extra sources of a config with `frame`'s records, in a file without the columns `frame` has no value in
    (a NULL split is one the file does not give: an empty cell in a split column is an ingest error)."""
    return EXTRAS + [("query_records", frame.dropna(axis="columns", how="all").to_csv(index=False))]


@pytest.fixture(scope="module")
def records_env(baseline, tmp_path_factory):
    """A copy of the oracle baseline plus dataset p, materialized from a valid set (costs from tokens x price, one
    model unpriced): (instance, db, folder for the examples' files, the monkeypatch pointing at them)."""
    folder = tmp_path_factory.mktemp("bad_records")
    shutil.copytree(baseline, folder / "copy")
    valid = clean_records(["a", "b", "f"], 6, 2, False, False, True, True, np.random.default_rng(0))
    assert set(PRICED) & {"a", "b"} and "f" not in PRICED
    with pytest.MonkeyPatch.context() as mp, throwaway_instance(mp, folder / "copy", CONFIG, ENV) as instance:
        mp.setenv("COMPASS_CONFIG", str(write_config(folder, _extras(valid))))
        materialize_oracle(instance, ["p"], raw_tables=["models", "model_costs", "query_records"])
        yield instance, folder / "copy" / "warehouse.duckdb", folder, mp


def data_versions(instance: dg.DagsterInstance) -> dict[tuple[str, str | None, int], str | None]:
    """Every oracle materialization: (asset, partition, storage id) -> its data version."""
    out = {}
    for key in OUTPUTS:
        for record in instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=10_000).records:
            event = record.asset_materialization
            out[(key.to_user_string(), event.partition, record.storage_id)] = event.tags.get(DATA_VERSION_TAG)
    return out


def oracle_errors(instance: dg.DagsterInstance) -> dict[str, str]:
    """Dataset p's records ingested and extracted, then every oracle step of its partition run (none stops the
    others): what failed, with the message the CLI prints (`RefreshReport`); an oracle asset that materialized
    is named with None."""
    materialize_branch(instance, [DATASET_RECORDS, DATASET_PRICES], ["p"], ["query_records"])
    result = run_selection(defs, instance, OUTPUTS, "p", False, raise_on_error=False)
    report = RefreshReport()
    report.add(defs, instance, result.run_id, OUTPUTS, "p")
    return {**report.errors, **dict.fromkeys(report.materialized)}


def row_path_error(path, wh: Warehouse) -> ValueError | None:
    """The row path's error on the records file `path`: the ingest's (`validate_table`), else the preparation's
    on the ingested records with the prices the extract derives from them; None when both accept the file."""
    try:
        records = validate_table(read_file(SourceFile("query_records", path)), RAW_TABLES["query_records"], str(path),
                                 model_lookup(wh))
    except IngestError as exc:
        return exc
    prices = dataset_prices(records, wh.read("raw.model_costs"))
    with duckdb.connect(config={"threads": 1}) as con:
        con.register("records", records)
        con.execute("create table t as select * from records")
        try:
            _rows_path(con, "p", prices=prices)
        except ValueError as exc:
            return exc
    return None


def test_bad_records_fail_with_the_row_paths_line_and_change_no_oracle_table(records_env):
    instance, db, folder, mp = records_env
    tables, versions = oracle_tables(db), data_versions(instance)
    assert (tables["oracle.summary"]["dataset"] == "p").sum() >= 1
    examples, stages = itertools.count(), []

    @settings(max_examples=8, deadline=None, derandomize=True, database=None)
    @given(record_sets(_KINDS, KINDS, perturbed_share=1.0, null_split_share=0.0))
    def check(frame):
        work = folder / f"example_{next(examples)}"
        work.mkdir()
        mp.setenv("COMPASS_CONFIG", str(write_config(work, _extras(frame))))
        expected = row_path_error(work / RECORDS_FILE, Warehouse(db))
        assume(expected is not None)
        if isinstance(expected, IngestError):  # the SQL ingest spells values its own way (test_query_ingest)
            with pytest.raises(IngestError) as info:
                materialize_branch(instance, [DATASET_RECORDS, DATASET_PRICES], ["p"], ["query_records"])
            error = info.value
            assert (error.file, error.row, error.column) == (expected.file, expected.row, expected.column), error
            errors = {"raw/query_records": str(error)}
        else:
            errors = oracle_errors(instance)
            assert errors == dict.fromkeys(errors, str(expected)) and len(errors) == len(OUTPUTS), errors
        assert all("\n" not in m and "Traceback" not in m for m in errors.values()), errors
        assert_same_tables(tables, oracle_tables(db))
        assert data_versions(instance) == versions
        stages.append(type(expected).__name__)

    check()
    # both stages met (measured: 4 ingest errors, 4 preparation errors in 8 sets; 1 more set the preparation accepted)
    assert len(stages) == 8 and min(stages.count("IngestError"), stages.count("ValueError")) >= 3, stages
