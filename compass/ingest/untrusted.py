"""Untrusted bytes stay data: safe readers for what a source publishes (issue 36, item 4).

Everything fetched from a source is untrusted. These readers never execute anything: JSON goes through the
standard library's parser, YAML through `yaml.safe_load` (no Python tags, so `!!python/object` is an error, not an
object), and a ZIP archive is checked whole, every entry against path traversal, links, its count, its own size
and its compression ratio, *before* a single byte is decompressed. Nothing is ever unpickled. A violation raises
`UntrustedInput` (an `IngestError` naming the file and the entry).
"""

from __future__ import annotations

import gzip
import io
import json
import stat
import zipfile
from dataclasses import dataclass

import yaml

from compass.ingest.errors import IngestError, utf8_text


class UntrustedInput(IngestError):
    """Bytes from a source that break a safety rule (too large, an unsafe archive entry, an unsafe YAML tag)."""


@dataclass(frozen=True)
class ZipLimits:
    """What an archive may hold: entries, bytes once extracted (each and in all), and compression ratio."""

    max_entries: int = 10_000
    max_entry_bytes: int = 256 * 2**20
    max_total_bytes: int = 512 * 2**20
    max_ratio: float = 200.0


def load_json(data: bytes, file: str) -> object:
    """JSON text as Python values; a truncated or non-JSON body is an IngestError naming the file and position."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = getattr(exc, "lineno", None)
        raise IngestError(file, where, None, f"not valid JSON ({exc.__class__.__name__}: {exc})") from None


# The most a gzip body may expand to (the same bound as a whole ZIP archive's).
MAX_GUNZIP_BYTES = ZipLimits.max_total_bytes


def gunzip(data: bytes, file: str, max_bytes: int | None = None) -> bytes:
    """A gzip body decompressed, refused once it expands beyond `max_bytes` (a gzip bomb: ~1000:1 is easy, so a
    body under the fetch size cap could otherwise expand to tens of GB). Reads at most `max_bytes` + 1 bytes."""
    max_bytes = MAX_GUNZIP_BYTES if max_bytes is None else max_bytes
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            body = stream.read(max_bytes + 1)
    except (OSError, EOFError) as exc:
        raise IngestError(file, None, None, f"truncated or corrupt gzip ({exc})") from None
    if len(body) > max_bytes:
        raise UntrustedInput(file, None, None, f"gzip body expands beyond {max_bytes} bytes (a gzip bomb?)")
    return body


class _SafeLoader(yaml.SafeLoader):
    """yaml.SafeLoader whose impossible dates (YAML reads 2026-13-45 as a date) are YAML errors at their line, not a
    ValueError of the date constructor."""

    def construct_yaml_timestamp(self, node):
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as exc:
            raise yaml.MarkedYAMLError(None, None, f"{node.value!r} is not a date ({exc})", node.start_mark) from None


_SafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _SafeLoader.construct_yaml_timestamp)


def load_yaml(data: bytes, file: str) -> object:
    """YAML through the safe loader only: a Python tag (!!python/object...) is refused, never constructed. Text that
    is not UTF-8, malformed YAML and impossible dates are IngestErrors naming the file, line and character."""
    text = utf8_text(data, file)
    try:
        return yaml.load(text, Loader=_SafeLoader)  # noqa: S506 - a SafeLoader
    except yaml.constructor.ConstructorError as exc:
        raise UntrustedInput(file, *_yaml_mark(exc), f"unsafe YAML tag refused: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise IngestError(file, *_yaml_mark(exc), f"malformed YAML: {getattr(exc, 'problem', exc)}") from None


def _yaml_mark(exc: yaml.YAMLError) -> tuple[int | None, str | None]:
    """(line, 'character N') of a YAML error, or (None, None)."""
    mark = getattr(exc, "problem_mark", None)
    return (mark.line + 1, f"character {mark.column + 1}") if mark is not None else (None, None)


def check_zip(data: bytes, file: str, limits: ZipLimits = ZipLimits()) -> list[zipfile.ZipInfo]:
    """The regular-file entries of an archive, after checking every entry (nothing is decompressed here).

    Refused: absolute paths, `..` components or drive letters (path traversal), symbolic links, more than
    `max_entries` entries, an entry or a total above the byte limits, an entry whose declared size is more than
    `max_ratio` times its compressed size (a decompression bomb)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise IngestError(file, None, None, f"not a ZIP archive ({exc})") from None
    infos = archive.infolist()
    if len(infos) > limits.max_entries:
        raise UntrustedInput(file, None, None, f"{len(infos)} entries, more than the limit of {limits.max_entries}")
    total = 0
    for info in infos:
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or (len(name) > 1 and name[1] == ":"):
            raise UntrustedInput(file, None, name, "entry path leaves the archive (path traversal)")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise UntrustedInput(file, None, name, "symbolic link entry refused")
        if info.file_size > limits.max_entry_bytes:
            raise UntrustedInput(file, None, name, f"entry of {info.file_size} bytes exceeds {limits.max_entry_bytes}")
        if info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise UntrustedInput(file, None, name, f"compression ratio above {limits.max_ratio:g} (a ZIP bomb?)")
        total += info.file_size
        if total > limits.max_total_bytes:
            raise UntrustedInput(file, None, name, f"archive expands beyond {limits.max_total_bytes} bytes")
    return [i for i in infos if not i.is_dir()]


def extract_zip(data: bytes, file: str, limits: ZipLimits = ZipLimits()) -> dict[str, bytes]:
    """Every regular file of a checked archive (`check_zip`) in memory, keyed by its path inside the archive;
    nothing touches disk.
    A read is capped at the declared size, so an entry lying about its size cannot expand further."""
    infos = check_zip(data, file, limits)
    out: dict[str, bytes] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in infos:
            with archive.open(info) as entry:
                body = entry.read(info.file_size + 1)
            if len(body) > info.file_size:
                raise UntrustedInput(file, None, info.filename, "entry expands beyond its declared size")
            out[info.filename] = body
    return out
