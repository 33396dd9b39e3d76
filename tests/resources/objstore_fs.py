"""A folder that behaves as an object store for resources.stage's tests: `objtest:///path`.

Like S3: a move is a copy, then a delete of the source that succeeds when the source is gone (S3's DeleteObject of a
missing key), with a pause in between (the latency that lets two movers both copy); there is no hard link; an
exclusive create (open "xb") is a conditional PUT: the file appears whole at its close, or the close fails with
FileExistsError. Importing this module registers the protocol (also in a subprocess).
"""

from __future__ import annotations

import contextlib
import io
import os
import time
import uuid

import fsspec
from fsspec.implementations.local import LocalFileSystem

PROTOCOL = "objtest"
MOVE_PAUSE_S = 0.05  # between a move's copy and its delete


class ObjectStoreLikeFileSystem(LocalFileSystem):
    protocol = (PROTOCOL,)
    root_marker = "/"

    @classmethod
    def _strip_protocol(cls, path):
        path = fsspec.utils.stringify_path(path)
        if path.startswith(f"{PROTOCOL}://"):
            path = path[len(f"{PROTOCOL}://"):]
        return LocalFileSystem._strip_protocol(path)

    def mv(self, path1, path2, recursive=False, maxdepth=None, **kwargs):
        self.cp_file(path1, path2)
        time.sleep(MOVE_PAUSE_S)
        with contextlib.suppress(FileNotFoundError):
            self.rm_file(path1)

    rename = move = mv

    def link(self, src, dst, **kwargs):
        raise NotImplementedError("an object store has no hard link")

    def _open(self, path, mode="rb", block_size=None, **kwargs):
        if "x" not in mode:
            return super()._open(path, mode, block_size, **kwargs)
        return _ConditionalPut(self._strip_protocol(path))


class _ConditionalPut(io.BytesIO):
    """The bytes written, created at `path` at close unless a file is there (then FileExistsError), never partly."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    def close(self):
        if self.closed:
            return
        tmp = f"{os.path.dirname(self.path)}/.put-{uuid.uuid4().hex}"
        try:
            with open(tmp, "wb") as f:
                f.write(self.getvalue())
            os.link(tmp, self.path)  # the store's atomic check-and-create
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            super().close()


fsspec.register_implementation(PROTOCOL, ObjectStoreLikeFileSystem, clobber=True)
