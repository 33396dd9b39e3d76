"""One dataset's prepared oracle arrays and cascade records, built once per partition and data version and shared by
the partition's assets (issue 45).

Every oracle asset (4) and every cascade asset (9) of a partition prepared its own copy of the same rows (a coded
read of datasets.query_records, then `prepare` / `prepare_records`: 13 s and 18 s at 10 M rows). Under the
multiprocess executor each asset is its own process, so the first one to need a preparation builds it and saves it
beside the warehouse (`<warehouse>.prepared/`) as plain numeric arrays in a compressed .npz (no pickle either way:
strings as int32 codes into a fixed-width label array, None as code −1; nullable integers and booleans as values, a
mask and the dtype's name); the others load it. The file's name carries the key: the dataset, the extract's data
version (datasets.query_records_versions, the pin its datasets/records run published), the prices' data versions
(oracle), a hash of the source of the modules that build and encode the preparation (`PREPARATION_MODULES`,
this one included) and the versions of the libraries that shape its arrays (`SHAPING_LIBRARIES`: a numpy, DuckDB,
pandas or pyarrow upgrade may round, order or type them otherwise); a new version of any of them is a new file, and the older files of the same dataset are removed
when it is written. A file lock per (kind, dataset) makes concurrent assets wait for the one that builds; a file that
does not load (truncated, corrupt) is built again. Without a pinned extract (an old layout, a test warehouse) or when
a listed table is not versioned (no data_version column) nothing is stored. The cascade's preparation is its
(query x model) matrices (`compass.cascades.wide.WideRecords`, `encode_wide`: numeric arrays as they are, the
labels fixed-width str, the query ids UTF-8 bytes and offsets).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa

from compass.cascades.wide import WideRecords
from compass.oracle.prepare import ModelSet, Prepared
from compass.oracle.records import OracleArrays
from resources.query_extract import PINS
from resources.warehouse import Warehouse

# The modules whose code reads, builds and encodes the stored preparations (readers' `_prepare_oracle` and
# `cascade_records`, this one): a change to any of their files is a new key (`code_hash`).
PREPARATION_MODULES = ("compass.oracle.prepare", "compass.oracle.records", "compass.oracle.dense",
                       "compass.ingest.extracts", "compass.cascades.wide", "compass.cascades.data",
                       "resources.cascade_matrix", "resources.query_frames", "resources.oracle_extract",
                       "resources.readers", "resources.prepared_store")
SHAPING_LIBRARIES = ("numpy", "duckdb", "pandas", "pyarrow")  # their versions are in the key (`library_versions`)
_MASKED = ("boolean", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64")
_UNREADABLE = (OSError, ValueError, KeyError, zipfile.BadZipFile)  # what np.load / decode raise on a damaged file
_ARRAY_FIELDS = ("successes", "trials", "outcomes", "gen_cost", "mean_cost")
_STRING_FIELDS = ("prompt_ids", "model_ids", "topics")
_NONE = "none"  # the stored form of a preparation that found nothing to prepare (cascade: no confidence)

T = TypeVar("T")


def store_dir(wh: Warehouse) -> Path:
    return wh.path.with_name(wh.path.name + ".prepared")


def shared(wh: Warehouse, kind: str, dataset: str, build: Callable[[], T],
           encode: Callable[[T], dict[str, np.ndarray]], decode: Callable[[dict[str, np.ndarray]], T],
           tables: tuple[str, ...] = ()) -> T:
    """`build()` once per (kind, dataset, data versions): loaded from the store when a sibling asset built it (None
    too: a dataset without confidences is found so once)."""
    versions = _versions(wh, dataset, tables)
    if versions is None:
        return build()
    stem = f"{kind}-{hashlib.sha256(dataset.encode()).hexdigest()[:12]}"
    key = hashlib.sha256(json.dumps([code_hash(), library_versions(), kind, dataset, versions]).encode()
                         ).hexdigest()[:16]
    path = store_dir(wh) / f"{stem}-{key}.npz"
    with _locked(store_dir(wh) / f"{stem}.lock"):
        if path.exists():
            try:
                with np.load(path, allow_pickle=False) as stored:
                    return None if _NONE in stored.files else decode({name: stored[name] for name in stored.files})
            except _UNREADABLE:
                pass  # built again and replaced
        value = build()
        _save(path, {_NONE: np.array(True)} if value is None else encode(value))
        for old in path.parent.glob(f"{stem}-*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    return value


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Written whole or not at all: a temporary file, flushed to disk, then renamed over `path`."""
    tmp = path.with_suffix(".tmp.npz")
    try:
        with open(tmp, "wb") as out:
            np.savez_compressed(out, allow_pickle=False, **arrays)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@functools.cache
def code_hash(modules: tuple[str, ...] = PREPARATION_MODULES) -> str:
    """sha256 of the source files of `modules` (found without importing them), once per process."""
    digest = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ModuleNotFoundError(f"prepared_store: no source for {name}")
        digest.update(name.encode() + b"\0" + Path(spec.origin).read_bytes())
    return digest.hexdigest()


@functools.cache
def library_versions(libraries: tuple[str, ...] = SHAPING_LIBRARIES) -> list[str]:
    """"name==version" of each installed library of `libraries`, once per process."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in libraries]


def _versions(wh: Warehouse, dataset: str, tables: tuple[str, ...]) -> list[object] | None:
    """The extract's pinned data version and those of `tables` for the dataset; None when the extract has no pin or
    a table has no data versions to tell its contents apart (no data_version column)."""
    if not wh.table_exists(PINS):
        return None
    pinned = wh.data_versions(PINS, {"dataset": dataset})
    if not pinned:
        return None
    versions = [wh.data_versions(t, {"dataset": dataset}) for t in tables]
    return None if any(v is None for v in versions) else [pinned, *versions]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# ---------------------------------------------------------------- encodings


def _strings(values: np.ndarray | pd.Index | pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(int32 codes, fixed-width labels) of an array of strings and nulls (code −1); TypeError on anything else."""
    codes, labels = pd.factorize(np.asarray(values, dtype=object))
    labels = np.asarray(labels, dtype=object)
    if not all(isinstance(v, str) for v in labels):
        raise TypeError("only strings and nulls can be stored as labels")
    return codes.astype(np.int32), labels.astype(str) if labels.size else np.array([], dtype="<U1")


def _objects(codes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The object array `_strings` encoded: cells share one str per label, None at −1."""
    return np.append(labels.astype(object), None)[codes]


def encode_frame(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """A frame of numeric and string columns as arrays: `c:<i>` values, or `s:<i>` codes and `l:<i>` labels, or
    for a nullable column (Int32, boolean, ...) `m:<i>` values, `k:<i>` its null mask and `d:<i>` its dtype."""
    out = {"columns": np.array(list(frame.columns), dtype=str)}
    for i, col in enumerate(frame.columns):
        values = frame[col]
        if values.dtype == object:
            out[f"s:{i}"], out[f"l:{i}"] = _strings(values)
        elif isinstance(values.dtype, pd.api.extensions.ExtensionDtype) and values.dtype.name in _MASKED:
            mask = values.isna().to_numpy()
            out[f"m:{i}"] = values.to_numpy(dtype=values.dtype.numpy_dtype, na_value=0)
            out[f"k:{i}"], out[f"d:{i}"] = mask, np.array(values.dtype.name)
        elif not isinstance(values.dtype, pd.api.extensions.ExtensionDtype) and values.dtype.kind in "biuf":
            out[f"c:{i}"] = values.to_numpy()
        else:
            raise TypeError(f"column {col!r} of dtype {values.dtype} cannot be stored")
    return out


def decode_frame(arrays: dict[str, np.ndarray]) -> pd.DataFrame:
    columns = {}
    for i, col in enumerate(arrays["columns"].tolist()):
        if f"c:{i}" in arrays:
            columns[col] = arrays[f"c:{i}"]
        elif f"m:{i}" in arrays:
            columns[col] = pd.array(arrays[f"m:{i}"], dtype=str(arrays[f"d:{i}"]))
            columns[col][arrays[f"k:{i}"]] = pd.NA
        else:
            columns[col] = _objects(arrays[f"s:{i}"], arrays[f"l:{i}"])
    return pd.DataFrame(columns, copy=False)


def _encode_arrays(prefix: str, arrays: OracleArrays) -> dict[str, np.ndarray]:
    out = {}
    for name in _ARRAY_FIELDS:
        if (value := getattr(arrays, name)) is not None:
            out[f"{prefix}.{name}"] = value
    for name in _STRING_FIELDS:
        if (value := getattr(arrays, name)) is not None:
            out[f"{prefix}.{name}.codes"], out[f"{prefix}.{name}.labels"] = _strings(value)
    return out


def _decode_arrays(prefix: str, arrays: dict[str, np.ndarray]) -> OracleArrays:
    fields = {name: arrays.get(f"{prefix}.{name}") for name in _ARRAY_FIELDS}
    for name in _STRING_FIELDS:
        codes = arrays.get(f"{prefix}.{name}.codes")
        fields[name] = None if codes is None else _objects(codes, arrays[f"{prefix}.{name}.labels"])
    return OracleArrays(**fields)


def encode_prepared(prep: Prepared) -> dict[str, np.ndarray]:
    """`Prepared` as arrays: its OracleArrays (the full set, and each model set: as a mask of the full set's models
    when it is their selection, else in full), the per-model cost, and a JSON header (dataset, cost basis, the sets'
    names and flags, metadata)."""
    header = {"dataset": prep.dataset, "cost_basis": prep.cost_basis, "meta": prep.meta,
              "sets": [[s.name, s.cost_known] for s in prep.sets],
              "model_cost_names": [prep.model_cost.name, prep.model_cost.index.name]}
    out = {"header": np.array(json.dumps(header)), "model_cost": prep.model_cost.to_numpy(dtype=float),
           **_encode_arrays("full", prep.full)}
    for i, s in enumerate(prep.sets):
        keep = np.isin(prep.full.model_ids, s.arrays.model_ids)
        if keep.sum() >= 2 and _same(prep.full.select_models(keep), s.arrays):  # `all`: the full set's longest-G models
            out[f"set{i}.keep"] = keep
        else:  # `priced`: built apart, with real costs
            out.update(_encode_arrays(f"set{i}", s.arrays))
    return out


def _same(a: OracleArrays, b: OracleArrays) -> bool:
    """Every field of `a` equals `b`'s (NaN equal to NaN)."""
    for name in (*_ARRAY_FIELDS, *_STRING_FIELDS):
        x, y = getattr(a, name), getattr(b, name)
        if (x is None) != (y is None) or (x is not None and not (
                x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"))):
            return False
    return True


def decode_prepared(arrays: dict[str, np.ndarray]) -> Prepared:
    header = json.loads(str(arrays["header"]))
    full = _decode_arrays("full", arrays)
    sets = [ModelSet(name, full.select_models(arrays[f"set{i}.keep"]) if f"set{i}.keep" in arrays
                     else _decode_arrays(f"set{i}", arrays), known) for i, (name, known) in enumerate(header["sets"])]
    name, index_name = header["model_cost_names"]
    model_cost = pd.Series(arrays["model_cost"], index=pd.Index(full.model_ids, name=index_name), name=name)
    return Prepared(header["dataset"], header["cost_basis"], full, sets, model_cost, header["meta"])


def encode_wide(records: WideRecords) -> dict[str, np.ndarray]:
    """`WideRecords` as arrays: the split names and codes, the query ids (their UTF-8 bytes and offsets: a
    fixed-width array would size each by the longest), the models, the presence mask and each value matrix as
    `v:<column>` (its own dtype)."""
    ids = pa.array(records.query_ids, type=pa.large_string())
    offsets = np.frombuffer(ids.buffers()[1], np.int64)[:len(ids) + 1]
    data = np.frombuffer(ids.buffers()[2], np.uint8)[:offsets[-1]] if offsets[-1] else np.empty(0, np.uint8)
    out = {"split_names": np.array(records.split_names, dtype=str), "split_codes": records.split_codes,
           "query_ids.offsets": offsets, "query_ids.utf8": data, "models": np.array(records.models, dtype=str),
           "present": records.present}
    for column, values in records.values.items():
        out[f"v:{column}"] = values
    return out


def decode_wide(arrays: dict[str, np.ndarray]) -> WideRecords:
    offsets = arrays["query_ids.offsets"]
    ids = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets),
                                           pa.py_buffer(arrays["query_ids.utf8"]))
    return WideRecords(tuple(arrays["split_names"].tolist()), arrays["split_codes"],
                       ids.to_numpy(zero_copy_only=False), tuple(arrays["models"].tolist()), arrays["present"],
                       {name[2:]: value for name, value in arrays.items() if name.startswith("v:")})
