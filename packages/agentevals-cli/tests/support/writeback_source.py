"""A test-only trace backend for ``--write-back``: a ``PullSource`` plugin installed as a real distribution (a
``*.dist-info`` with ``entry_points.txt`` in group ``agentevals.trace_sources`` on a subprocess's PYTHONPATH)
and the loopback HTTP server it reads from and writes to.

The server is a stand-in of no real product: it serves the real shipped Jaeger traces (one trace per document,
exactly as in ``examples/traces``) and stores the verdicts posted to it with upsert semantics keyed by
(run id, trace id, evaluator), as the base's contract and the real backends' write-backs key them (Phoenix's
annotation identifier, Langfuse's score id), so a test can assert what arrived and that writing the same
run back again updated rather than duplicated. Two sources: ``acme+http://`` stores verdicts (``writes_back = "verdicts"``), ``acmeotel+http://``
stores none (``writes_back = ""``, like Jaeger and Tempo: its results go out as OpenTelemetry events).

    backend = Backend.start([EXAMPLES / "traces/helm.json"])
    site = install_plugin(tmp_path / "site")
    ... agentevals run "acme+http://127.0.0.1:PORT?project=demo" --write-back  (PYTHONPATH=site)
    backend.verdicts   # {(run_id, trace_id, evaluator): verdict dict}
    backend.stop()
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PLUGIN = '''\
"""Test-only pull sources: the loopback backend of tests/support/writeback_source.py."""
from dataclasses import asdict
from typing import ClassVar

from agentevals.trace_sources.pull import PulledTrace, PullSource


class AcmeSource(PullSource):
    name: ClassVar[str] = "acme"
    summary: ClassVar[str] = "test backend (stores verdicts)"
    uri_form: ClassVar[str] = "acme+http://HOST:PORT?project=NAME"
    parameters: ClassVar[frozenset] = frozenset({"project"})
    writes_back: ClassVar[str] = "verdicts"

    def pull(self):
        project = self.query.param("project", "default")
        for trace_id in self.client.get_json("/api/traces", params={"project": project})["ids"]:
            yield PulledTrace(trace_id, self.client.get_json(f"/api/traces/{trace_id}"))

    def write_back(self, verdicts):
        answer = self.client.post_json("/api/verdicts", {"project": self.query.param("project", "default"),
                                                         "verdicts": [asdict(v) for v in verdicts]})
        return answer["written"]


class AcmeOtelSource(AcmeSource):
    name: ClassVar[str] = "acmeotel"
    summary: ClassVar[str] = "test backend (stores no verdicts: OpenTelemetry events, like Jaeger)"
    writes_back: ClassVar[str] = ""

    def write_back(self, verdicts):  # never called: the engine routes these results to --emit-otel
        raise AssertionError("write_back called on a source that writes nothing back")
'''


def install_plugin(site: Path) -> Path:
    """Write the plugin as an installed distribution into ``site`` (put it on PYTHONPATH)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "acme_backend.py").write_text(PLUGIN)
    info = site / "acme_backend-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-backend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agentevals.trace_sources]\nacme = acme_backend:AcmeSource\n"
                                           "acmeotel = acme_backend:AcmeOtelSource\n")
    return site


class Backend:
    """The loopback server: ``GET /api/traces`` (ids), ``GET /api/traces/{id}`` (a Jaeger JSON document),
    ``POST /api/verdicts`` (upsert by run id, trace id and evaluator; 403 with ``refuse_writes``, no answer with
    ``hang_writes``)."""

    def __init__(self, files: list[Path]) -> None:
        self.traces: dict[str, Any] = {}
        for path in files:  # the shipped Jaeger exports, one document per trace (as Jaeger's /api/traces/{id})
            for trace in json.loads(Path(path).read_text())["data"]:
                self.traces[trace["traceID"]] = {"data": [trace], "total": 0, "limit": 0, "offset": 0, "errors": None}
        self.verdicts: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.posts = 0
        self.refuse_writes = False
        self.hang_writes = threading.Event()
        """Set: a POST of verdicts gets no answer until the server stops (a backend that hangs)."""
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                if path == "/api/traces":
                    self.answer(200, {"ids": list(backend.traces)})
                elif path.startswith("/api/traces/") and path.rsplit("/", 1)[1] in backend.traces:
                    self.answer(200, backend.traces[path.rsplit("/", 1)[1]])
                else:
                    self.answer(404, {"message": f"not found: {path}"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if urlsplit(self.path).path != "/api/verdicts":
                    self.answer(404, {"message": "not found"})
                    return
                if backend.hang_writes.is_set():
                    backend.stopping.wait(60)
                    return
                if backend.refuse_writes:
                    self.answer(403, {"message": "this API key may not write verdicts"})
                    return
                with backend.lock:
                    backend.posts += 1
                    for verdict in body["verdicts"]:
                        backend.verdicts[(verdict["run_id"], verdict["trace_id"], verdict["evaluator"])] = verdict
                self.answer(200, {"written": len(body["verdicts"])})

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @classmethod
    def start(cls, files: list[Path]) -> Backend:
        backend = cls(files)
        backend.thread.start()
        return backend

    def uri(self, scheme: str = "acme", project: str = "demo") -> str:
        return f"{scheme}+http://127.0.0.1:{self.port}?project={project}"

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
