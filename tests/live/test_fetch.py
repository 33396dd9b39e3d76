"""The fetch client (resources/fetch.py) and the untrusted-bytes readers (compass/ingest/untrusted.py) against a
local server: conditional requests, retries, the size cap, truncated bodies, redirects only to http(s), ZIP path
traversal and bombs, unsafe YAML tags."""

import dataclasses
import io
import time
import zipfile

import pytest

from compass.ingest.errors import IngestError
from compass.ingest.untrusted import UntrustedInput, ZipLimits, extract_zip, load_json, load_yaml
from resources.fetch import FetchFailed, FetchPolicy, RawStore, Validators, fetch
from tests.live.server import serve

FAST = FetchPolicy(timeout_s=0.5, retries=1, backoff_s=0.01, max_bytes=10_000)


@pytest.fixture
def site(tmp_path):
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "prices.json").write_bytes(b'{"gpt-4o": {"input_cost_per_token": 2.5e-06}}')
    with serve(folder, slow_s=1.5) as server:
        yield server, folder, RawStore(tmp_path / "raw")


def test_a_second_fetch_is_a_304_that_reuses_the_kept_bytes(site):
    server, folder, store = site
    first = fetch(server.url("prices.json"), None, store, FAST)
    assert first.status == 200 and (store.folder / first.sha256).read_bytes() == (folder / "prices.json").read_bytes()
    again = fetch(server.url("prices.json"), Validators(first.etag, first.last_modified, first.sha256), store, FAST)
    assert (again.status, again.sha256, again.size) == (304, first.sha256, first.size)
    assert server.log[-1] == ("/prices.json", 304)
    (folder / "prices.json").write_bytes(b'{"gpt-4o": {"input_cost_per_token": 1e-07}}')
    changed = fetch(server.url("prices.json"), Validators(first.etag, first.last_modified, first.sha256), store, FAST)
    assert changed.status == 200 and changed.sha256 != first.sha256


def test_a_host_without_etags_gets_if_modified_since(site):
    server, folder, store = site
    server.modes["/prices.json"] = "noetag"
    first = fetch(server.url("prices.json"), None, store, FAST)
    assert first.etag is None and first.last_modified
    again = fetch(server.url("prices.json"), Validators(None, first.last_modified, first.sha256), store, FAST)
    assert (again.status, again.sha256, server.log[-1]) == (304, first.sha256, ("/prices.json", 304))


def test_a_conditional_request_needs_the_kept_bytes(site):
    server, _, store = site
    got = fetch(server.url("prices.json"), Validators('"whatever"', None, "0" * 64), store, FAST)
    assert got.status == 200  # the validators' bytes are not in the store: an unconditional GET


@pytest.mark.parametrize("mode, message", [("500", "HTTP 500"), ("slow", "timed out"), ("truncate", "truncated")])
def test_transient_failures_are_retried_then_fail_with_one_line(site, mode, message):
    server, _, store = site
    server.modes["/prices.json"] = mode
    with pytest.raises(FetchFailed, match=message) as failure:
        fetch(server.url("prices.json"), None, store, FAST)
    assert "after 2 attempts" in str(failure.value) and "\n" not in str(failure.value)
    assert list(store.folder.glob("*")) == [] if store.folder.exists() else True  # nothing kept


def test_a_trickling_body_is_cut_off_at_the_transfer_deadline(site):
    server, _, store = site
    server.modes["/prices.json"] = "trickle"  # ~2.5 s for the body, each byte well within the 0.5 s timeout
    started = time.monotonic()
    with pytest.raises(FetchFailed, match="still arriving after 0.3 s"):
        fetch(server.url("prices.json"), None, store, dataclasses.replace(FAST, transfer_s=0.3, retries=0))
    assert time.monotonic() - started < 1.5


def test_oversize_bodies_are_refused(site):
    server, folder, store = site
    (folder / "big.json").write_bytes(b"[" + b"0," * 6000 + b"0]")
    with pytest.raises(FetchFailed, match="size cap"):  # refused on its Content-Length
        fetch(server.url("big.json"), None, store, FAST)
    server.modes["/big.json"] = "nolength"
    with pytest.raises(FetchFailed, match="size cap"):  # refused while streaming
        fetch(server.url("big.json"), None, store, FAST)


def test_redirects_are_followed_only_to_http(site):
    server, _, store = site
    server.modes["/moved.json"] = "redirect:/prices.json"
    assert fetch(server.url("moved.json"), None, store, FAST).status == 200
    server.modes["/evil.json"] = "redirect:file:///etc/passwd"
    with pytest.raises(FetchFailed, match="only http"):
        fetch(server.url("evil.json"), None, store, FAST)


def _zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in entries.items():
            archive.writestr(name, body)
    return out.getvalue()


def test_zip_path_traversal_is_refused_before_extraction():
    for name in ("../../etc/cron.d/x.csv", "/abs/x.csv", "ok/../../x.csv"):
        with pytest.raises(UntrustedInput, match="path traversal"):
            extract_zip(_zip({"a.csv": b"x", name: b"y"}), "export.zip")
    for name in ("..\\..\\x.csv", "\\\\host\\share\\x.csv", "C:\\x.csv", "C:x.csv"):  # Windows spellings
        with pytest.raises(UntrustedInput, match="path traversal"):
            extract_zip(_zip({name: b"y"}), "export.zip")
    assert extract_zip(_zip({"data/a.csv": b"x,y\n"}), "export.zip") == {"data/a.csv": b"x,y\n"}


def test_zip_symlinks_are_refused():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        link = zipfile.ZipInfo("data/a.csv")
        link.create_system, link.external_attr = 3, (0o120777 << 16)  # a Unix symlink to /etc/passwd
        archive.writestr(link, "/etc/passwd")
    with pytest.raises(UntrustedInput, match="symbolic link"):
        extract_zip(out.getvalue(), "export.zip")


def test_zip_bombs_are_refused_before_extraction():
    bomb = _zip({"zeros.csv": b"0" * 5_000_000})  # compresses ~1000:1
    with pytest.raises(UntrustedInput, match="ZIP bomb"):
        extract_zip(bomb, "export.zip")
    with pytest.raises(UntrustedInput, match="expands beyond"):
        extract_zip(_zip({f"{i}.csv": bytes(range(256)) * 40 for i in range(4)}), "export.zip",
                    ZipLimits(max_total_bytes=30_000))


def test_unsafe_yaml_tags_are_refused_and_json_errors_name_the_file():
    with pytest.raises(UntrustedInput, match="unsafe YAML tag"):
        load_yaml(b"- !!python/object/apply:os.system ['touch /tmp/pwned']\n", "leaderboard.yml")
    assert load_yaml(b"- model: gpt-4o\n  pass_rate_2: 71.4\n", "leaderboard.yml") == [
        {"model": "gpt-4o", "pass_rate_2": 71.4}]
    with pytest.raises(IngestError, match="prices.json.*not valid JSON"):
        load_json(b'{"gpt-4o": {"input_cost', "prices.json")
