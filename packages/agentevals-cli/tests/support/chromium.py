"""Headless Chromium driven over the DevTools protocol (websocket-client): open a page, run JS, collect
every console message and uncaught exception. Uses Debian's ``chromium`` package; no browser download."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from typing import Any, Optional

__all__ = ["Browser", "find_chromium"]


def find_chromium() -> Optional[str]:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """``with Browser() as b: b.open(url); b.js("1 + 1")``; ``b.errors`` lists console errors and exceptions."""

    def __init__(self, executable: Optional[str] = None, *, timeout: float = 30.0) -> None:
        self.executable = executable or find_chromium()
        if self.executable is None:
            raise RuntimeError("chromium is not installed (apt-get install chromium)")
        self.timeout = timeout
        self.messages: list[dict[str, Any]] = []
        self._id = 0

    def __enter__(self) -> Browser:
        import websocket

        self.profile = tempfile.mkdtemp(prefix="agentevals-chromium-")
        args = [self.executable, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1", f"--user-data-dir={self.profile}",
                "--window-size=1200,900", "about:blank"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        port = None
        deadline = time.monotonic() + self.timeout
        assert self.proc.stderr is not None
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            match = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if match:
                port = int(match.group(1))
        if port is None:
            self.close()
            raise RuntimeError("chromium did not open its DevTools port")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            pages = [t for t in json.load(resp) if t["type"] == "page"]
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=self.timeout,
                                              suppress_origin=True)
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
        self.proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        my_id = self._id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def _event(self, msg: dict[str, Any]) -> None:
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.messages.append({"level": params.get("type"), "text": text})
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.messages.append({"level": "exception",
                                  "text": details.get("exception", {}).get("description") or details.get("text")})
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            self.messages.append({"level": entry.get("level"), "text": entry.get("text"), "url": entry.get("url")})

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["level"] in ("error", "exception", "assert")]

    def open(self, url: str, *, ready: str = "document.readyState === 'complete'") -> None:
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.holds(ready):
                return
            time.sleep(0.05)
        raise TimeoutError(f"page {url} not ready within {self.timeout:g}s")

    def holds(self, expression: str) -> bool:
        """Whether ``expression`` is true now: False while the page is navigating away, which cuts an evaluation
        off ("Inspected target navigated or closed": a click on a link, a form posted)."""
        try:
            return bool(self.js(expression))
        except RuntimeError as exc:
            if "navigated or closed" in str(exc):
                return False
            raise

    def js(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JS error: {result['exceptionDetails'].get('text')}: {expression}")
        return result.get("result", {}).get("value")

    def screenshot(self, path: str) -> None:
        import base64

        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))
