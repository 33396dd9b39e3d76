"""A local HTTP server on 127.0.0.1 serving a folder, for the live-source tests (no test reaches outside the
machine). `root` is the folder served (a test may point it at its own copy). It answers like a static file host (Last-Modified, an ETag, 304 to a matching conditional request) and
can be told to misbehave per path: `modes[path]` = "500", "slow" (sleeps past any test timeout), "truncate" (a
Content-Length longer than the body), "nolength" (no Content-Length: the body ends when the connection closes),
"trickle" (one byte every 50 ms), "noetag" (no ETag: a 304 only to If-Modified-Since, as many static hosts answer),
"redirect:<url>". `log` records (path, status) of every request."""

from __future__ import annotations

import email.utils
import hashlib
import http.server
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = self.path.split("?")[0]
        mode = self.server.modes.get(path, "")
        if mode == "500":
            return self._status(500)
        if mode == "slow":
            time.sleep(self.server.slow_s)
            return self._status(200, b"late")
        if mode.startswith("redirect:"):
            self.server.log.append((path, 302))
            self.send_response(302)
            self.send_header("Location", mode.split(":", 1)[1])
            return self.end_headers()
        file = Path(self.translate_path(path))
        if not file.is_file():
            return self._status(404)
        body, stat = file.read_bytes(), file.stat()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if self.headers.get("If-None-Match") == etag and mode not in ("truncate", "noetag"):
            return self._status(304)
        since = self.headers.get("If-Modified-Since")
        if mode == "noetag" and since and email.utils.parsedate_to_datetime(since).timestamp() >= int(stat.st_mtime):
            return self._status(304)
        self.server.log.append((path, 200))  # before answering: the client may read the log as soon as it has it
        self.send_response(200)
        if mode != "noetag":
            self.send_header("ETag", etag)
        self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
        if mode != "nolength":
            self.send_header("Content-Length", str(len(body) + (100 if mode == "truncate" else 0)))
        self.end_headers()
        if mode == "trickle":  # every read arrives well within any timeout, the whole body never does
            for i in range(len(body)):
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                time.sleep(0.05)
        else:
            self.wfile.write(body)
        if mode in ("truncate", "nolength"):
            self.close_connection = True

    def _status(self, code: int, body: bytes = b"") -> None:
        self.server.log.append((self.path, code))
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serve(folder: Path, slow_s: float = 3.0):
    """Serve `folder` on 127.0.0.1 (a free port) in a thread; yields the server (`root`, `url(path)`, `modes`,
    `log`)."""
    handler = lambda *a, **k: _Handler(*a, directory=str(server.root), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.root, server.modes, server.log, server.slow_s = folder, {}, [], slow_s
    server.url = lambda path="": f"http://127.0.0.1:{server.server_address[1]}/{path.lstrip('/')}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def place(src: Path, dest: Path, mtime: float) -> Path:
    """Copy `src` to `dest` with the modification time `mtime` (a served file's Last-Modified)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(src.read_bytes())
    os.utime(dest, (mtime, mtime))
    return dest
