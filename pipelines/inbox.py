"""The inbox: validate delivered files, accept them as extra sources or reject them with a report.

A file dropped into the inbox (COMPASS_INBOX, default var/inbox/; resources.settings) is a CSV or
Parquet file in one of the canonical formats (README "Data dictionary"). Its table
is named by the file-name prefix (`benchmark_scores_2026-11-22.csv`) or, failing
that, inferred from its columns when exactly one table fits.

Files are validated in TABLE_ORDER (models first, so a new model's scores resolve
against it) with the same ingest code the raw assets use, against the warehouse's
models and aliases plus those accepted earlier in the same batch. An accepted file
moves to <accepted>/<table>/ (env COMPASS_ACCEPTED, default var/sources/), where
`resources.sources.SourcesResource` appends it after the configured sources. A
rejected file moves to <inbox>/rejected/ with `<name>.error.txt` beside it holding
the IngestError (file, row, column). Nothing here writes to the warehouse: only
the raw assets do, when a run picks the accepted files up.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from compass.ingest.aliases import alias_lookup
from compass.ingest.errors import IngestError
from compass.ingest.load import TABLE_ORDER, SourceFile, read_file
from compass.ingest.schemas import RAW_TABLES
from compass.ingest.validate import validate_table
from resources import settings
from resources.sources import INPUT_SUFFIXES
from resources.warehouse import Warehouse

REJECTED = "rejected"
ERROR_SUFFIX = ".error.txt"


@dataclass
class InboxResult:
    """What one pass over the inbox did. Paths are where the files are now."""

    accepted: list[tuple[str, Path]] = field(default_factory=list)
    rejected: list[tuple[Path, str]] = field(default_factory=list)


def content_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (name excluded): the identity of a delivery."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def inbox_table(path: Path, columns: list[str]) -> str:
    """The canonical table a delivered file feeds.

    The longest table name that prefixes the file name wins (`model_costs_x.csv`
    is model_costs, not models). Otherwise the table is inferred from the
    columns: the one table whose required columns are all present and which has
    every column of the file. Anything else is an IngestError naming the file.
    """
    stem = path.name.lower()
    by_prefix = [t for t in RAW_TABLES if stem == t or stem.startswith((f"{t}_", f"{t}-", f"{t}."))]
    if by_prefix:
        return max(by_prefix, key=len)
    cols = set(columns)
    fits = [t for t, s in RAW_TABLES.items() if set(s.required_names) <= cols and cols <= set(s.column_names)]
    if len(fits) == 1:
        return fits[0]
    why = f"its columns fit {fits}" if fits else f"its columns {sorted(cols)} fit no table"
    raise IngestError(str(path), None, None,
                      f"cannot tell which table this file feeds ({why}); name it <table>_<anything>{path.suffix} "
                      f"with <table> one of {list(TABLE_ORDER)}")


def pending_files(inbox: Path, settle_s: float | None = None) -> list[Path]:
    """CSV / Parquet files waiting in the inbox (not in rejected/), by name, that nobody has written to for
    `settle_s` seconds (default `resources.settings.inbox_settle_s`, 5 s). A file still being copied in (a
    partial CSV) is left alone until it is complete,
    instead of being rejected as malformed; writers that can should still copy under another name
    (e.g. `.part`) and rename."""
    if not inbox.is_dir():
        return []
    settle_s = settings.inbox_settle_s() if settle_s is None else settle_s
    now = time.time()
    return sorted(p for p in inbox.iterdir() if p.is_file() and p.suffix.lower() in INPUT_SUFFIXES
                  and now - p.stat().st_mtime >= settle_s)


def _free_name(folder: Path, name: str) -> Path:
    """folder/name, or folder/<stem>.<n><suffix> when that is taken."""
    target, n = folder / name, 1
    while target.exists():
        target, n = folder / f"{Path(name).stem}.{n}{Path(name).suffix}", n + 1
    return target


def _reject(path: Path, inbox: Path, message: str) -> tuple[Path, str]:
    folder = inbox / REJECTED
    folder.mkdir(parents=True, exist_ok=True)
    target = _free_name(folder, path.name)
    shutil.move(str(path), target)
    (folder / (target.name + ERROR_SUFFIX)).write_text(message + "\n")
    return target, message


def _accept(path: Path, table: str, accepted_dir: Path) -> Path:
    folder = accepted_dir / table
    folder.mkdir(parents=True, exist_ok=True)
    target = _free_name(folder, path.name)
    shutil.move(str(path), target)
    now = time.time_ns()
    os.utime(target, ns=(now, now))  # acceptance order = source order (resources.sources.accepted_files)
    return target


def _known_models(wh: Warehouse) -> tuple[pd.DataFrame, pd.DataFrame]:
    models = wh.read("raw.models")
    aliases = wh.read("raw.model_aliases")
    models = models[["model_id"]] if "model_id" in models else pd.DataFrame({"model_id": pd.Series(dtype=str)})
    aliases = aliases[["alias", "model_id"]] if "alias" in aliases else pd.DataFrame({"alias": [], "model_id": []})
    return models, aliases


def _append(known: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    return new.reset_index(drop=True) if known.empty else pd.concat([known, new], ignore_index=True)


def process_inbox(
    inbox: Path,
    accepted_dir: Path,
    warehouse: Warehouse,
    already_applied: set[str] | frozenset[str] = frozenset(),
    settle_s: float | None = None,
) -> InboxResult:
    """Validate every pending inbox file; move it to accepted_dir/<table>/ or to <inbox>/rejected/.

    `already_applied`: content digests of earlier deliveries (the sensor's
    cursor); a file identical to one of them, or to a file already in
    accepted_dir, is rejected as a repeat so no delivery is applied twice.
    The warehouse is only read.
    """
    inbox, accepted_dir = Path(inbox), Path(accepted_dir)
    result = InboxResult()
    seen = set(already_applied) | {content_digest(p) for p in accepted_dir.rglob("*") if p.is_file()}
    queue: list[tuple[int, str, str, Path, pd.DataFrame]] = []
    for path in pending_files(inbox, settle_s):
        try:
            digest = content_digest(path)
            if digest in seen:
                raise IngestError(str(path), None, None,
                                  f"already applied: identical content was accepted before ({digest})")
            frame = read_file(SourceFile("unknown", path))
            table = inbox_table(path, [c for c in frame.columns if c not in ("source", "as_of")])
        except IngestError as exc:
            result.rejected.append(_reject(path, inbox, str(exc)))
            continue
        seen.add(digest)
        queue.append((TABLE_ORDER.index(table), path.name, table, path, frame))
    models, aliases = _known_models(warehouse)
    for _, _, table, path, frame in sorted(queue, key=lambda q: q[:2]):
        lookup = None if table == "models" else alias_lookup(aliases, models["model_id"])
        try:
            typed = validate_table(frame, RAW_TABLES[table], str(path), lookup)
        except IngestError as exc:
            result.rejected.append(_reject(path, inbox, str(exc)))
            continue
        if table == "models":
            models = _append(models, typed[["model_id"]])
        elif table == "model_aliases":
            aliases = _append(aliases, typed[["alias", "model_id"]])
        result.accepted.append((table, _accept(path, table, accepted_dir)))
    return result
