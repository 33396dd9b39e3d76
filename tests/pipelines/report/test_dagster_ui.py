"""`dagster dev` on 127.0.0.1 over a materialized instance (a copy of compass_small): the asset lineage page
loads, and an asset's metadata shows its figure, in headless Chromium."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.pipelines.conftest import compass_small_env
from tests.pipelines.report.browser import Browser, chromium_binary

pytestmark = pytest.mark.skipif(chromium_binary() is None,
                                reason="chromium is not installed; `make test` installs it (apt-get install chromium)")
STARTUP_S = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(1)
    raise AssertionError(f"{what} within {timeout:.0f} s")


@pytest.fixture(scope="module")
def dagster_ui(compass_small_baseline, tmp_path_factory):
    """The URL of `dagster dev` serving a copy of the baseline instance (its daemon may write: never the original)."""
    baseline, _ = compass_small_baseline
    root = tmp_path_factory.mktemp("ui") / "compass_small"
    shutil.copytree(baseline, root)
    port = free_port()
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "PYTHONPATH": str(ROOT), **compass_small_env(root),
           "COMPASS_ARCHETYPES": os.environ.get("COMPASS_ARCHETYPES", "")}
    dagster = Path(sys.executable).with_name("dagster")
    log = open(root / "dagster_dev.log", "w")
    server = subprocess.Popen([str(dagster), "dev", "-h", "127.0.0.1", "-p", str(port)], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert server.poll() is None, (root / "dagster_dev.log").read_text()[-3000:]
        try:
            return urllib.request.urlopen(f"{url}/server_info", timeout=5).status == 200
        except OSError:
            return False

    try:
        wait_until(up, STARTUP_S, "dagster dev did not answer")
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # dagster dev, its webserver, daemon and code server
        try:  # it outlived a 60 s wait in the suite; the instance is a throwaway copy, so 10 s is enough
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = Browser(tmp_path_factory.mktemp("chromium_profile_ui"))
    yield chromium
    chromium.close()


def body_text(browser: Browser) -> str:
    return browser.evaluate("document.body.innerText") or ""


def test_the_asset_lineage_page_loads_with_every_group(dagster_ui, browser):
    browser.open(f"{dagster_ui}/asset-groups")
    groups = ["compass", "oracle", "report"]
    wait_until(lambda: all(g in body_text(browser) for g in groups), 120, f"the lineage page did not show {groups}")
    assert "Global asset lineage" in body_text(browser)


def test_an_assets_metadata_shows_its_figure(dagster_ui, browser):
    """compass/cost_side's tiered_frontier metadata is Markdown with an inline PNG: opened, it draws the image."""
    browser.open(f"{dagster_ui}/assets/compass/cost_side?partition=small_open")
    click = """(text, within) => {  // the innermost element showing `text` (inside a row mentioning `within`)
        const rows = within ? [...document.querySelectorAll('tr')].filter(r => r.innerText.includes(within)) : [document];
        const hits = rows.flatMap(r => [...r.querySelectorAll('*')].filter(e => e.innerText?.trim() === text));
        if (hits.length) hits[hits.length - 1].click();
        return hits.length > 0; }"""
    wait_until(lambda: "tiered_frontier" in body_text(browser), 120, "the cost_side metadata did not load")
    browser.evaluate(f"({click})('Skip', null)")  # the UI's first-visit newsletter dialog, if shown
    wait_until(lambda: browser.evaluate(f"({click})('[Show Markdown]', 'tiered_frontier')"), 60,
               "the tiered_frontier metadata row did not appear")
    figure = """[...document.querySelectorAll('img')].filter(i => i.src.startsWith('data:image/png')
                 && i.complete && i.naturalWidth > 300).map(i => [i.alt, i.naturalWidth, i.naturalHeight])"""
    images = wait_until(lambda: browser.evaluate(figure), 60, "the figure did not render")
    assert [alt for alt, _, _ in images] == ["tiered_frontier"] and images[0][2] > 200
