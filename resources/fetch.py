"""Fetching a source like a good citizen (issue 36, item 2): one HTTP GET per file with a timeout, bounded retries
with exponential backoff, conditional requests (If-None-Match / If-Modified-Since: a 304 re-uses the bytes kept),
a size cap, redirects followed only to http(s) URLs, and the bytes kept content-addressed under var/raw/<sha256>.

The client is `requests` (a maintained library that Dagster already installs). Redirects are followed by hand so
that each hop's scheme is checked before it is requested; the body is streamed and abandoned as soon as it passes
the cap; a body shorter than its Content-Length (a truncated transfer) is an error, never data.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests
import urllib3

# Transient answers worth another try; any other 4xx is final.
RETRY_STATUS = (408, 425, 429, 500, 502, 503, 504)
USER_AGENT = "llm-compass/0.1 (+https://github.com/; scheduled refresh of public LLM catalogs)"


@dataclass(frozen=True)
class FetchPolicy:
    """How one source is fetched: `timeout_s` per attempt (connect and each read), `transfer_s` for a whole body
    (a server trickling bytes, each read within the timeout, is cut off), `retries` after the first attempt
    with `backoff_s` * 2^i between them, `max_bytes` per file, at most `max_redirects` hops."""

    timeout_s: float = 30.0
    transfer_s: float = 600.0
    retries: int = 2
    backoff_s: float = 1.0
    max_bytes: int = 64 * 2**20
    max_redirects: int = 5


class FetchFailed(RuntimeError):
    """A file could not be fetched (after the retries): the message says why, one line."""


@dataclass(frozen=True)
class Validators:
    """What the last good answer for a URL said, sent back as a conditional request."""

    etag: str | None = None
    last_modified: str | None = None
    sha256: str | None = None


@dataclass
class Fetched:
    """One fetched file: status 200 (new bytes) or 304 (not modified: `sha256` is the kept bytes' hash)."""

    url: str
    status: int
    sha256: str
    size: int
    etag: str | None = None
    last_modified: str | None = None
    attempts: int = 1
    final_url: str = ""
    body: bytes | None = field(default=None, repr=False)


class RawStore:
    """Fetched bytes, content-addressed: <folder>/<sha256>. Written atomically; identical bytes are stored once."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def put(self, body: bytes) -> str:
        digest = hashlib.sha256(body).hexdigest()
        path = self.folder / digest
        if not path.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(body)
            os.replace(tmp, path)
        return digest

    def get(self, digest: str) -> bytes:
        path = self.folder / digest
        if not path.exists():
            raise FetchFailed(f"kept bytes {digest[:12]} are missing from {self.folder}")
        return path.read_bytes()

    def has(self, digest: str | None) -> bool:
        return digest is not None and (self.folder / digest).exists()


def check_scheme(url: str) -> None:
    """Only http and https are fetched (a redirect to file:, ftp: or data: is refused)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchFailed(f"refused to follow {url!r}: only http(s) URLs are fetched (scheme {scheme or 'none'!r})")


def fetch(url: str, previous: Validators | None, store: RawStore, policy: FetchPolicy = FetchPolicy(),
          session: requests.Session | None = None) -> Fetched:
    """GET `url` (conditionally when `previous` is known and its bytes are still kept), retrying transient
    failures; the new bytes go into `store`. Raises FetchFailed with a one-line reason."""
    conditional = previous if previous is not None and store.has(previous.sha256) else None
    own = session is None
    session = session or requests.Session()
    try:
        for attempt in range(policy.retries + 1):
            if attempt:
                time.sleep(policy.backoff_s * 2 ** (attempt - 1))
            try:
                result = _get(url, conditional, policy, session)
            except _Transient as exc:
                reason = str(exc)
                continue
            result.attempts = attempt + 1
            if result.status == 304:
                result.sha256, result.size = conditional.sha256, len(store.get(conditional.sha256))
                result.etag = result.etag or conditional.etag
                result.last_modified = result.last_modified or conditional.last_modified
            else:
                result.sha256 = store.put(result.body)
            return result
        raise FetchFailed(f"{reason} (after {policy.retries + 1} attempts)")
    finally:
        if own:
            session.close()


class _Transient(Exception):
    """A failure worth retrying: a timeout, a dropped or truncated connection, a 5xx / 429."""


def _get(url: str, conditional: Validators | None, policy: FetchPolicy, session: requests.Session) -> Fetched:
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if conditional is not None:
        if conditional.etag:
            headers["If-None-Match"] = conditional.etag
        if conditional.last_modified:
            headers["If-Modified-Since"] = conditional.last_modified
    current = url
    for _ in range(policy.max_redirects + 1):
        check_scheme(current)
        try:
            response = session.get(current, headers=headers, timeout=policy.timeout_s, stream=True,
                                   allow_redirects=False)
        except requests.Timeout:
            raise _Transient(f"timed out after {policy.timeout_s:g} s") from None
        except requests.ConnectionError as exc:
            raise _Transient(f"connection failed: {_first_line(exc)}") from None
        with response:
            if response.is_redirect:
                current = urljoin(current, response.headers.get("Location", ""))
                continue
            if response.status_code in RETRY_STATUS:
                raise _Transient(f"HTTP {response.status_code} {response.reason}")
            if response.status_code == 304 and conditional is not None:
                return Fetched(url, 304, "", 0, response.headers.get("ETag"), response.headers.get("Last-Modified"),
                               final_url=current)
            if response.status_code != 200:
                raise FetchFailed(f"HTTP {response.status_code} {response.reason}")
            body = _read_capped(response, policy.max_bytes, policy.transfer_s)
            return Fetched(url, 200, "", len(body), response.headers.get("ETag"),
                           response.headers.get("Last-Modified"), final_url=current, body=body)
    raise FetchFailed(f"more than {policy.max_redirects} redirects")


def _read_capped(response: requests.Response, max_bytes: int, transfer_s: float) -> bytes:
    """The body, refusing one above `max_bytes` (declared or actual), one still arriving after `transfer_s` and one
    shorter than its Content-Length. Read with urllib3's read1 (whatever has arrived, at most 64 KiB, decoded),
    so the transfer deadline is checked after every network read, not only after a full 64 KiB."""
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise FetchFailed(f"body of {int(declared)} bytes exceeds the size cap of {max_bytes} bytes")
    chunks, size, deadline = [], 0, time.monotonic() + transfer_s
    try:
        while chunk := response.raw.read1(2**16, decode_content=True):
            size += len(chunk)
            if size > max_bytes:
                raise FetchFailed(f"body exceeds the size cap of {max_bytes} bytes")
            if time.monotonic() > deadline:
                raise _Transient(f"body still arriving after {transfer_s:g} s ({size} bytes)")
            chunks.append(chunk)
    except urllib3.exceptions.ReadTimeoutError:
        raise _Transient(f"timed out reading the body after {size} bytes") from None
    except (urllib3.exceptions.ProtocolError, urllib3.exceptions.DecodeError, OSError) as exc:
        raise _Transient(f"truncated body after {size} bytes: {_first_line(exc)}") from None
    if declared is not None and declared.isdigit() and size < int(declared):
        raise _Transient(f"truncated body: {size} of {declared} bytes")
    return b"".join(chunks)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else exc.__class__.__name__
