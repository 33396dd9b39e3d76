"""A `Payload` from local files: what a source config's `path:` names, or the embedded-default build's
upstream copies. No network; ZIP archives are not opened here (safe extraction is the caller's job).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from compass.ingest.connectors.base import Connector, Payload
from compass.ingest.errors import IngestError


def local_payload(connector: Connector, path: Path, as_of: dt.date | None = None) -> Payload:
    """A file with the siblings the connector asks for that exist beside it, or a folder's top-level files."""
    path = Path(path)
    if path.is_dir():
        files = {f.name: f.read_bytes() for f in sorted(path.iterdir()) if f.is_file()}
        return Payload(path.name, files, as_of)
    if not path.is_file():
        raise IngestError(str(path), None, None, f"{connector.name}: no such file or folder")
    files = {path.name: path.read_bytes()}
    for name in connector.siblings(path.name):
        sibling = path.with_name(name)
        if sibling.is_file():
            files[name] = sibling.read_bytes()
    return Payload(path.name, files, as_of)
