"""Headless Chromium driven over the DevTools protocol (Debian's `chromium` package; nothing downloaded).

One browser per test module; `Tab.open` loads a page and records what the tests check: console errors and
uncaught exceptions, and every network request the page made. The browser runs with every host name
unresolvable and a dead proxy, so a request for anything off the machine could not succeed even if a page
tried; the tests still fail on the attempt.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

from websockets.sync.client import connect

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--window-size=1280,900",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """A Chromium process and a DevTools session on its first tab."""

    def __init__(self, profile: Path):
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("chromium is not installed")
        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        for line in self.process.stderr:
            if m := re.search(r"DevTools listening on (ws://\S+)", line):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("chromium did not start its DevTools endpoint within 60 s")
        else:
            raise RuntimeError("chromium exited before its DevTools endpoint came up")
        self._open = contextlib.ExitStack()
        self.socket = self._open.enter_context(connect(m.group(1), max_size=2**28))
        self._id = 0
        self.events: list[dict] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=True)

    def send(self, method: str, params: dict | None = None, session: bool = False, timeout: float = 60) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            reply = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic()))))

    def open(self, url: str) -> "PageVisit":
        """Load `url` and wait for its load event; what it logged and requested is in the returned visit."""
        self.events = []
        self.send("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")
        self.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 100)))")  # charts drawn
        return PageVisit(url, list(self.events))

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, selector: str):
        """A PIL image of the element matching `selector` (clip in page coordinates)."""
        from PIL import Image

        box = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                            " return [r.x + window.scrollX, r.y + window.scrollY, r.width, r.height]; })()")
        clip = dict(zip(("x", "y", "width", "height"), box), scale=1)
        shot = self.send("Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True},
                         session=True)
        return Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")

    def close(self) -> None:
        self._open.close()
        self.process.terminate()
        self.process.wait(timeout=30)


class PageVisit:
    """What one page load logged and requested."""

    def __init__(self, url: str, events: list[dict]):
        self.url, self.events = url, events

    @property
    def errors(self) -> list[str]:
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(params["exceptionDetails"].get("exception", {}).get("description", "exception"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                out.append(params["entry"]["text"])
        return out

    @property
    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]
