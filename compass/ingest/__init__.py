"""Data ingest (not a paper; the papers are referenced in compass/__init__.py): the canonical raw
tables every paper package reads (models, model aliases, benchmark scores, model costs,
interactions, query records). `schemas` is the public contract of each table, `load` reads source
files named by a YAML config, `validate` checks and coerces one table (columns, types, ranges,
duplicate keys, model ids), `aliases` resolves model names to canonical ids, `ingest` merges one
table from its sources and flags large price moves, and `extracts` splits the shared query records
and prices by dataset. Bad input raises `IngestError` (naming the file, row and column); suspicious
but admissible input warns with `IngestWarning`.
"""

from compass.ingest.aliases import alias_key, alias_lookup, resolve_model_ids
from compass.ingest.errors import IngestError, IngestWarning
from compass.ingest.extracts import cheapest_prices, dataset_prices, own_columns
from compass.ingest.ingest import ingest_table, price_moves
from compass.ingest.load import SourceFile, default_sources, file_digest, load_config, read_file
from compass.ingest.schemas import RAW_TABLES, Column, TableSchema, empty_frame
from compass.ingest.validate import validate_table

__all__ = [
    "RAW_TABLES", "TableSchema", "Column", "empty_frame",
    "SourceFile", "default_sources", "load_config", "read_file", "file_digest",
    "validate_table", "alias_key", "alias_lookup", "resolve_model_ids",
    "ingest_table", "price_moves", "cheapest_prices", "dataset_prices", "own_columns",
    "IngestError", "IngestWarning",
]
