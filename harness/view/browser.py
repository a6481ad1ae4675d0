"""Driving Debian's headless Chromium over the DevTools protocol (a websocket, with aiohttp): for the viewer's tests
and ``arena bench view``. No browser download, no Selenium: the system's ``chromium`` (``make browser-tools``).

:func:`browser_problem` says why no browser can run here (None when one can); :class:`Browser` starts one with a
fresh profile and opens pages; :class:`Page` evaluates JavaScript, waits for a condition, takes screenshots and
keeps every console error and uncaught exception the page raised.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import aiohttp

T = TypeVar("T")
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")
LAUNCH_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
)
INSTALL_HINT = "install Debian's chromium (make browser-tools, or apt-get install -y chromium)"


class BrowserError(RuntimeError):
    """The browser could not be started or driven, or a page did not do what was waited for."""


def chromium_path() -> str | None:
    """The system's Chromium (``$ARENA_CHROMIUM`` first), or None."""
    wanted = os.environ.get("ARENA_CHROMIUM")
    if wanted:
        return shutil.which(wanted)
    return next((found for name in BROWSER_NAMES if (found := shutil.which(name))), None)


def browser_problem() -> str | None:
    """Why no headless Chromium can run here, or None when one can."""
    path = chromium_path()
    if path is None:
        return f"no chromium on PATH: {INSTALL_HINT}"
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{path} --version failed: {error}"
    return None if done.returncode == 0 else f"{path} --version exited {done.returncode}: {done.stderr.strip()[:200]}"


class Browser:
    """A headless Chromium with a new empty profile, ended (and its profile removed) on ``close``."""

    def __init__(self, window: tuple[int, int] = (1400, 1000), start_timeout_s: float = 60.0) -> None:
        path = chromium_path()
        if path is None:
            raise BrowserError(f"no chromium on PATH: {INSTALL_HINT}")
        self._profile = tempfile.mkdtemp(prefix="arena-chromium-")
        flags = [*LAUNCH_FLAGS, f"--user-data-dir={self._profile}", f"--window-size={window[0]},{window[1]}", "about:blank"]
        self._process = subprocess.Popen([path, *flags], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._loop = asyncio.new_event_loop()
        self._session: aiohttp.ClientSession | None = None
        try:
            self.port = self.run(self._wait_for_port(start_timeout_s))
        except BaseException:
            self.close()
            raise

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(coroutine)

    async def _wait_for_port(self, timeout_s: float) -> int:
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = self._loop.time() + timeout_s
        while self._loop.time() < deadline:
            if self._process.poll() is not None:
                stderr = self._process.stderr.read().decode(errors="replace") if self._process.stderr else ""
                raise BrowserError(f"chromium exited with code {self._process.returncode}: {stderr.strip()[-400:]}")
            if port_file.exists() and (text := port_file.read_text().split()):
                return int(text[0])
            await asyncio.sleep(0.05)
        raise BrowserError(f"chromium did not open its DevTools port within {timeout_s:.0f} s")

    async def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    def new_page(self) -> Page:
        """A new tab (about:blank), its console and exceptions recorded from the start."""

        async def create() -> Page:
            session = await self._http()
            async with session.put(f"http://127.0.0.1:{self.port}/json/new?about:blank") as response:
                target = await response.json()
            socket = await session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
            page = Page(self, socket)
            for method in ("Page.enable", "Runtime.enable", "Log.enable"):
                await page.call(method)
            return page

        return self.run(create())

    def close(self) -> None:
        if self._session is not None:
            self.run(self._session.close())
            self._session = None
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._process.stderr is not None:
            self._process.stderr.close()
        self._loop.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()


class Page:
    """One tab: ``goto``, ``evaluate``, ``wait_for``, ``screenshot``; ``errors`` lists console errors and exceptions."""

    def __init__(self, browser: Browser, socket: aiohttp.ClientWebSocketResponse) -> None:
        self._browser, self._socket = browser, socket
        self._ids = itertools.count(1)
        self.errors: list[str] = []
        self.console: list[str] = []

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result (events that arrive meanwhile are recorded)."""
        call_id = next(self._ids)
        await self._socket.send_str(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = await self._socket.receive()
            if message.type != aiohttp.WSMsgType.TEXT:
                raise BrowserError(f"the DevTools connection closed during {method}")
            data = json.loads(message.data)
            if data.get("id") == call_id:
                if "error" in data:
                    raise BrowserError(f"{method}: {data['error'].get('message')}")
                result: dict[str, Any] = data.get("result", {})
                return result
            self._event(data)

    def _event(self, data: dict[str, Any]) -> None:
        method, params = data.get("method"), data.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
            self.console.append(f"{params.get('type')}: {text}")
            if params.get("type") in ("error", "assert"):
                self.errors.append(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())

    def goto(self, url: str) -> None:
        self._browser.run(self.call("Page.navigate", url=url))

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the page (promises awaited), as JSON."""

        async def run() -> Any:
            result = await self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
            if "exceptionDetails" in result:
                details = result["exceptionDetails"]
                raise BrowserError(f"{expression[:80]}: {details.get('exception', {}).get('description') or details.get('text')}")
            return result.get("result", {}).get("value")

        return self._browser.run(run())

    def wait_for(self, expression: str, timeout_s: float = 30.0) -> Any:
        """Evaluate ``expression`` until it is truthy; its value, or BrowserError after ``timeout_s``."""

        async def run() -> Any:
            deadline = asyncio.get_running_loop().time() + timeout_s
            while True:
                result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
                value = result.get("result", {}).get("value")
                if value:
                    return value
                if asyncio.get_running_loop().time() > deadline:
                    raise BrowserError(f"waited {timeout_s:.0f} s for {expression!r}; page errors: {self.errors or 'none'}")
                await asyncio.sleep(0.02)

        return self._browser.run(run())

    def screenshot(self, path: str | Path) -> Path:
        """A PNG of the page as it is (the whole page)."""

        async def run() -> str:
            metrics = await self.call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
            clip = {"x": 0, "y": 0, "width": size.get("width", 1400), "height": min(size.get("height", 1000), 4000), "scale": 1}
            result = await self.call("Page.captureScreenshot", format="png", clip=clip, captureBeyondViewport=True)
            return str(result["data"])

        path = Path(path)
        path.write_bytes(base64.b64decode(self._browser.run(run())))
        return path
