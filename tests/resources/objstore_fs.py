"""A folder that behaves as an object store for resources.stage's tests: `objtest:///path`.

Like S3: a move is a copy, then a delete of the source that succeeds when the source is gone (S3's DeleteObject of a
missing key), with a pause in between (the latency that lets two movers both copy); there is no hard link; an
exclusive create (open "xb") is a conditional PUT: the file appears whole at its close, or the close fails with
FileExistsError (or as `FAULT` says: real S3 may answer a lost create with a 409 or a 412 that s3fs raises as a plain
OSError, and a create's response may be lost after it succeeded). Importing this module registers the protocol (also
in a subprocess).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import time
import uuid

import fsspec
from fsspec.implementations.local import LocalFileSystem

PROTOCOL = "objtest"
MOVE_PAUSE_S = 0.05  # between a move's copy and its delete
# How an exclusive create misbehaves (tests set it): None, "conflict-as-oserror" (a lost create raises OSError EIO, not
# FileExistsError), "lost-response" (a create that succeeded raises OSError), "fails" (every create raises OSError
# and creates nothing)
FAULT: str | None = None


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
            if FAULT == "fails":
                raise OSError(errno.EIO, "Service Unavailable", self.path)
            with open(tmp, "wb") as f:
                f.write(self.getvalue())
            try:
                os.link(tmp, self.path)  # the store's atomic check-and-create
            except FileExistsError:
                if FAULT == "conflict-as-oserror":  # s3fs: a 409 ConditionalRequestConflict
                    raise OSError(errno.EIO, "ConditionalRequestConflict", self.path) from None
                raise
            if FAULT == "lost-response":
                raise OSError(errno.EIO, "Read timeout on endpoint URL", self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            super().close()


fsspec.register_implementation(PROTOCOL, ObjectStoreLikeFileSystem, clobber=True)
