"""Ingest one raw table from its source files: read, validate, resolve model ids, merge."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

import pandas as pd

from compass.ingest.aliases import alias_lookup
from compass.ingest.errors import IngestWarning
from compass.ingest.load import TABLE_ORDER, SourceFile, read_file
from compass.ingest.schemas import RAW_TABLES, empty_frame
from compass.ingest.validate import check_route_datasets, validate_table

# A price moving by more than this factor against the previous snapshot is flagged.
PRICE_MOVE_FACTOR = 10.0


# A refresh validates every file first (`validate_all`), then each raw asset ingests its table again; in one
# process the second pass reuses the first's result while neither the files nor the model lookup changed.
_LAST: dict[str, tuple[tuple, pd.DataFrame]] = {}


def _fingerprint(table: str, sources: list[SourceFile], lookup: dict[str, str] | None) -> tuple:
    files = tuple((str(s.path), s.as_of, s.path.stat().st_size, s.path.stat().st_mtime_ns) if s.path.exists()
                  else (str(s.path),) for s in sources if s.table == table)
    return files, None if lookup is None else hash(frozenset(lookup.items()))


def ingest_table(table: str, sources: list[SourceFile], lookup: dict[str, str] | None) -> pd.DataFrame:
    """Validated union of every source file of `table`.

    Files are applied in config order; a later file's row replaces an earlier
    row with the same key (so a user file can correct a default value).
    """
    key = _fingerprint(table, sources, lookup)
    if table in _LAST and _LAST[table][0] == key:
        return _LAST[table][1].copy()
    schema = RAW_TABLES[table]
    frames = [validate_table(read_file(s), schema, str(s.path), lookup).assign(_file=str(s.path))
              for s in sources if s.table == table]
    if not frames:
        return empty_frame(schema)
    merged = pd.concat([f.assign(_row=range(1, len(f) + 1)) for f in frames], ignore_index=True)
    merged = merged.drop_duplicates(subset=list(schema.key), keep="last").reset_index(drop=True)
    if table == "route_labels":
        check_route_datasets(merged, merged["_file"], merged["_row"])
    out = merged.drop(columns=["_file", "_row"])
    _LAST[table] = (key, out.copy())
    return out


def validate_all(sources: list[SourceFile], tables: list[str] | None = None,
                 checks: Mapping[str, Callable[[list[SourceFile], dict[str, str] | None], None]] | None = None) -> None:
    """Validate every file of a source config before any table is written (a config applies whole or not at all).

    Tables go in TABLE_ORDER with model names resolved through the config's own
    raw.models and raw.model_aliases, as the raw assets will resolve them; `tables`
    limits the others to those about to be written; `checks` validates a table its own way
    (table -> check(sources, lookup), e.g. out of core) instead of `ingest_table`. Raises the first
    IngestError (file, row, column); warnings are left to the assets.
    """
    lookup: dict[str, str] | None = None
    frames: dict[str, pd.DataFrame] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IngestWarning)
        for table in TABLE_ORDER:
            if tables is not None and table not in (*tables, "models", "model_aliases"):
                continue
            if checks and table in checks:
                checks[table](sources, lookup)
                continue
            frames[table] = ingest_table(table, sources, lookup)
            if table == "models":
                lookup = alias_lookup(pd.DataFrame({"alias": [], "model_id": []}), frames["models"]["model_id"])
            elif table == "model_aliases":
                lookup = alias_lookup(frames["model_aliases"], frames["models"]["model_id"])


def price_moves(new: pd.DataFrame, previous: pd.DataFrame, factor: float = PRICE_MOVE_FACTOR) -> pd.DataFrame:
    """Rows whose blended price moved more than `factor`x against the previous snapshot (a warning)."""
    if previous.empty or new.empty:
        return new.iloc[0:0]
    key = ["model_id", "provider"]
    joined = new.merge(previous[key + ["blended_usd_per_mtok"]], on=key, suffixes=("", "_previous"))
    ratio = joined["blended_usd_per_mtok"] / joined["blended_usd_per_mtok_previous"]
    moved = joined[(ratio > factor) | (ratio < 1.0 / factor)]
    for row in moved.itertuples():
        warnings.warn(
            f"price of {row.model_id} at {row.provider} moved from {row.blended_usd_per_mtok_previous:g} "
            f"to {row.blended_usd_per_mtok:g} USD/Mtok (more than {factor:g}x)",
            IngestWarning,
            stacklevel=2,
        )
    return moved
