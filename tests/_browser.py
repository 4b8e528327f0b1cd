"""A real headless Chromium driven over WebDriver (Debian's ``chromium`` + ``chromium-driver``).

A few W3C WebDriver calls over httpx, nothing downloaded at run time: chromedriver is started
on a free loopback port with a fresh profile directory; every wait is bounded and polls the
page's own state (an element, an attribute), never a fixed sleep.
"""

from __future__ import annotations

import base64
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1280,1600",
]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def available() -> bool:
    return Path(CHROMIUM).exists() and Path(DRIVER).exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Browser:
    """One WebDriver session."""

    def __init__(self, base: str, session: str, client: httpx.Client) -> None:
        self.base = base
        self.session = session
        self.http = client

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = f"{self.base}/session/{self.session}{path}"
        reply = self.http.request(method, url, json=body if body is not None else None)
        value = reply.json().get("value")
        if reply.status_code >= 400:
            raise RuntimeError(f"webdriver {method} {path}: {value}")
        return value

    def get(self, url: str) -> None:
        self._call("POST", "/url", {"url": url})

    def js(self, script: str, *args: Any) -> Any:
        return self._call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css: str) -> str:
        return str(self._call("POST", "/element", {"using": "css selector", "value": css})[ELEMENT])

    def click(self, css: str) -> None:
        self._call("POST", f"/element/{self.find(css)}/click", {})

    def type(self, css: str, text: str) -> None:
        element = self.find(css)
        self._call("POST", f"/element/{element}/clear", {})
        self._call("POST", f"/element/{element}/value", {"text": text})

    def screenshot(self, path: Path, css: str | None = None) -> None:
        """The whole page (through the DevTools protocol), or one element of it."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if css is not None:
            data = self._call("GET", f"/element/{self.find(css)}/screenshot")
        else:
            size = self._call(
                "POST", "/goog/cdp/execute", {"cmd": "Page.getLayoutMetrics", "params": {}}
            )
            page = size["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": page["width"], "height": page["height"], "scale": 1}
            params = {"format": "png", "captureBeyondViewport": True, "clip": clip}
            data = self._call(
                "POST", "/goog/cdp/execute", {"cmd": "Page.captureScreenshot", "params": params}
            )["data"]
        path.write_bytes(base64.b64decode(data))

    def wait(self, what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
        """Poll ``check`` (a read of the page) until it is truthy; fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never showed {what} within {timeout:.0f} s")
            time.sleep(0.05)  # a poll interval of the page's state, not a wait for an outcome

    def wait_js(self, what: str, script: str, timeout: float = 60.0) -> Any:
        return self.wait(what, lambda: self.js(script), timeout)


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium with a fresh profile; closed (and its profile removed) after."""
    port = _free_port()
    profile = Path(tempfile.mkdtemp(prefix="labwright-chromium-"))
    driver = subprocess.Popen(
        [DRIVER, f"--port={port}", "--allowed-ips=127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    client = httpx.Client(timeout=60.0)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if client.get(f"{base}/status").json()["value"]["ready"]:
                    break
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline or driver.poll() is not None:
                raise RuntimeError("chromedriver did not start")
            time.sleep(0.05)
        caps = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": CHROMIUM,
                        "args": [*FLAGS, f"--user-data-dir={profile}"],
                    },
                }
            }
        }
        created = client.post(f"{base}/session", json=caps).json()["value"]
        browser = Browser(base, created["sessionId"], client)
        try:
            yield browser
        finally:
            client.delete(f"{base}/session/{browser.session}")
    finally:
        client.close()
        driver.terminate()
        try:
            driver.wait(10)
        except subprocess.TimeoutExpired:
            driver.kill()
        shutil.rmtree(profile, ignore_errors=True)
