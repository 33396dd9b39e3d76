"""Parity of the out-of-core query_records path with the pandas path on the embedded data (issue 45).

raw.query_records as `compass.ingest.ingest.ingest_table` builds it vs `resources.query_ingest.stage_query_records`
(column names and DuckDB types, every row at its position), then each dataset's extract as datasets/records built it
(`extracts.own_columns` + sort) vs `resources.query_extract.records_stager`. The oracle, cascade and router assets
read these tables only, so equal tables here mean equal tables there.

Run: PYTHONPATH=. .venv/bin/python scripts/query_records_parity.py
"""

import tempfile
import time
from pathlib import Path

import duckdb
import pandas as pd

from compass.ingest.aliases import alias_lookup
from compass.ingest.extracts import own_columns
from compass.ingest.ingest import ingest_table
from compass.ingest.load import default_sources
from resources.query_extract import records_stager
from resources.query_ingest import configure, stage_query_records
from resources.warehouse import _typed_nulls

sources = default_sources()
models = ingest_table("models", sources, None)
lookup = alias_lookup(ingest_table("model_aliases", sources, None), models["model_id"])
t = time.time(); old = ingest_table("query_records", sources, lookup); t_old = time.time() - t
con = duckdb.connect(); configure(con, Path(tempfile.mkdtemp(prefix="compass-parity-")))
t = time.time(); stage_query_records(con, sources, lookup); t_new = time.time() - t
con.register("old_frame", _typed_nulls(old))
con.execute("create temp table old as select * from old_frame")
print("files", len([s for s in sources if s.table == "query_records"]), "rows old/new", len(old),
      con.execute("select count(*) from staged_records").fetchone()[0], f"time old {t_old:.1f}s new {t_new:.1f}s")
d_old = con.execute("describe old").fetchall(); d_new = con.execute("describe staged_records").fetchall()
print("types equal:", [r[:2] for r in d_old] == [r[:2] for r in d_new])
if [r[:2] for r in d_old] != [r[:2] for r in d_new]:
    print([r[:2] for r in d_old]); print([r[:2] for r in d_new])
cols = ", ".join(f'"{r[0]}"' for r in d_old)
q = f"select count(*) from (select row_number() over () as i, {cols} from old except all select row_number() over () as i, {cols} from staged_records)"
print("rows (with position) in old not in new:", con.execute(q).fetchone()[0])
q2 = f"select count(*) from (select {cols} from old except all select {cols} from staged_records)"
print("rows (as multiset) in old not in new:", con.execute(q2).fetchone()[0])
# the extract of every dataset: pandas (own_columns + sort, as datasets/records did) vs resources.query_extract
con.execute("create schema raw"); con.execute("create table raw.query_records as select * from staged_records")
bad = 0
datasets = [d for (d,) in con.execute("select distinct dataset from raw.query_records order by 1").fetchall()]
for d in datasets:
    raw = con.execute("select * from raw.query_records where dataset = ?", [d]).df()
    old_x = own_columns(raw).sort_values(["split", "query_id", "model_id", "generation"], na_position="first").reset_index(drop=True)
    new_x = con.execute(f"select * from {records_stager(d)(con)}").df()
    try:
        pd.testing.assert_frame_equal(old_x, new_x)
    except AssertionError as e:
        bad += 1; print(d, str(e)[:300])
print(f"extracts identical for {len(datasets) - bad} of {len(datasets)} datasets")
