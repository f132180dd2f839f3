"""Loopback OpenAI-compatible servers for tests: chat completions + embeddings, and the Evals API.

Real HTTP on 127.0.0.1 (a free port, one daemon thread), standard library only, so the code under test
goes through the real ``openai`` client: retries, timeouts, headers and JSON parsing included.

Example:
    ```python
    with ChatServer() as server:
        server.chat = lambda body: {"result": "good", "steps": []}   # reply content (str, dict or Reply)
        settings = LLMSettings(model="judge", base_url=server.base_url, api_key_env="TEST_KEY")
        ...
        server.queue("POST", "/chat/completions", Reply(429, headers={"retry-after-ms": "1"}))
        assert [r.path for r in server.requests] == ["/chat/completions", "/chat/completions"]
    ```

API:
    ``LoopbackServer``   base: ``base_url`` (``http://127.0.0.1:PORT/v1``), ``requests`` (every ``Recorded``
                         request in order), ``requests_to(method, path)``, ``queue(method, path, *replies,
                         repeat_last=False)`` (scripted replies served before the route's handler; with
                         ``repeat_last`` the last one is served forever), ``route(method, template, handler)``,
                         ``close()``; a context manager.
    ``Reply``            ``status``, ``json`` (body object), ``body`` (raw bytes: malformed JSON),
                         ``headers``, ``delay`` (seconds before answering; cut short by ``close()``).
    ``ChatServer``       ``POST /chat/completions`` answers ``chat(body)``; ``POST /embeddings`` answers
                         ``embed(text)`` per input (default ``letter_vector``).
    ``EvalsServer``      ``POST /evals``, ``POST /evals/{id}/runs``, ``GET /evals/{id}/runs/{run}``,
                         ``GET /evals/{id}/runs/{run}/output_items`` (paginated), ``DELETE /evals/{id}``;
                         knobs ``grade(criterion, item) -> (score, passed)``, ``polls_before_done``,
                         ``final_status`` (``completed``, ``failed``, ``canceled`` or ``never``), ``run_error``,
                         ``page_size``; state ``evals``, ``runs``, ``deleted``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "ChatServer",
    "EvalsServer",
    "LoopbackServer",
    "Recorded",
    "Reply",
    "chat_completion",
    "letter_vector",
]

Handler = Callable[["Recorded", dict[str, str]], "Reply"]


@dataclass
class Reply:
    """One scripted HTTP answer."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    """Raw body; overrides ``json`` (use it for malformed JSON)."""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Recorded:
    """A request as the server received it (``path`` without the ``/v1`` prefix and the query)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None


def chat_completion(content: str, *, model: str = "judge") -> dict[str, Any]:
    """A ``chat.completion`` object whose single choice says ``content``."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def letter_vector(text: str) -> list[float]:
    """Counts of a..z in ``text`` (lower-cased): a deterministic embedding whose cosine is easy to check."""
    counts = [0.0] * 26
    for char in text.lower():
        if "a" <= char <= "z":
            counts[ord(char) - 97] += 1
    return counts


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 that records requests and answers from routes or a queue."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self._queued: dict[tuple[str, str], list[Reply]] = {}
        self._repeat: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def route(self, method: str, template: str, handler: Handler) -> None:
        """Answer ``method template`` (``/evals/{eval_id}``) with ``handler(request, params)``."""
        pattern = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template) + "$")
        self._routes.append((method, pattern, handler))

    def queue(self, method: str, path: str, *replies: Reply, repeat_last: bool = False) -> None:
        """Serve ``replies`` (in order) to the next requests to ``method path``, before the route."""
        with self._lock:
            self._queued.setdefault((method, path), []).extend(replies)
            if repeat_last:
                self._repeat.add((method, path))

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path == path]

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _answer(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            key = (request.method, request.path)
            queued = self._queued.get(key)
            if queued:
                if len(queued) > 1 or key not in self._repeat:
                    return queued.pop(0)
                return queued[0]
        for method, pattern, handler in self._routes:
            match = pattern.match(request.path)
            if method == request.method and match:
                return handler(request, match.groupdict())
        return Reply(404, {"error": {"message": f"no route {request.method} {request.path}", "type": "test"}})


def _make_handler(owner: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 10

        def _handle(self) -> None:
            url = urlsplit(self.path)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = url.path[3:] if url.path.startswith("/v1/") else url.path
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                reply = owner._answer(Recorded(self.command, path, query, headers, raw))
            except Exception as exc:  # a bug in a test handler: answer 599 so the test sees it
                reply = Reply(599, {"error": {"message": f"test handler failed: {exc!r}"}})
            if reply.delay and owner._stop.wait(reply.delay):
                return
            body = reply.body if reply.body is not None else json.dumps(reply.json).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the client gave up (deadline) before the answer
                self.close_connection = True

        do_GET = do_POST = do_DELETE = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return _Handler


class ChatServer(LoopbackServer):
    """``POST /chat/completions`` and ``POST /embeddings``."""

    def __init__(self) -> None:
        super().__init__()
        self.chat: Callable[[dict[str, Any]], Any] = lambda body: "ok"
        """Reply for a chat request body: a str (the content), another object (JSON content) or a Reply."""
        self.embed: Callable[[str], list[float]] = letter_vector
        self.route("POST", "/chat/completions", self._chat)
        self.route("POST", "/embeddings", self._embeddings)

    def _chat(self, request: Recorded, params: dict[str, str]) -> Reply:
        body = request.json
        answer = self.chat(body)
        if isinstance(answer, Reply):
            return answer
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return Reply(json=chat_completion(content, model=body.get("model", "judge")))

    def _embeddings(self, request: Recorded, params: dict[str, str]) -> Reply:
        body = request.json
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": i, "embedding": self.embed(t)} for i, t in enumerate(texts)]
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        return Reply(json={"object": "list", "data": data, "model": body.get("model"), "usage": usage})


class EvalsServer(LoopbackServer):
    """An in-memory Evals API: evals, runs that finish after a few polls, output items, deletion."""

    def __init__(self) -> None:
        super().__init__()
        self.grade: Callable[[dict[str, Any], dict[str, Any]], tuple[float, bool]] = lambda criterion, item: (
            1.0,
            True,
        )
        self.polls_before_done = 1
        self.final_status = "completed"
        self.run_error: dict[str, str] | None = None
        self.page_size = 100
        self.evals: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.deleted: list[str] = []
        self.route("POST", "/evals", self._create_eval)
        self.route("DELETE", "/evals/{eval_id}", self._delete_eval)
        self.route("POST", "/evals/{eval_id}/runs", self._create_run)
        self.route("GET", "/evals/{eval_id}/runs/{run_id}", self._get_run)
        self.route("GET", "/evals/{eval_id}/runs/{run_id}/output_items", self._output_items)

    def _create_eval(self, request: Recorded, params: dict[str, str]) -> Reply:
        body = request.json
        eval_id = f"eval_{len(self.evals) + 1}"
        self.evals[eval_id] = body
        config = {"type": "custom", "schema": body["data_source_config"]["item_schema"]}
        return Reply(
            json={
                "object": "eval",
                "id": eval_id,
                "name": body.get("name", ""),
                "created_at": 1,
                "data_source_config": config,
                "testing_criteria": body["testing_criteria"],
                "metadata": body.get("metadata") or {},
            }
        )

    def _delete_eval(self, request: Recorded, params: dict[str, str]) -> Reply:
        self.deleted.append(params["eval_id"])
        return Reply(json={"object": "eval.deleted", "deleted": True, "eval_id": params["eval_id"]})

    def _create_run(self, request: Recorded, params: dict[str, str]) -> Reply:
        if params["eval_id"] not in self.evals:
            return Reply(404, {"error": {"message": "eval not found", "type": "invalid_request_error"}})
        run_id = f"evalrun_{len(self.runs) + 1}"
        content = request.json["data_source"]["source"]["content"]
        criterion = self.evals[params["eval_id"]]["testing_criteria"][0]
        grades = [self.grade(criterion, row["item"]) for row in content]
        self.runs[run_id] = {
            "eval_id": params["eval_id"],
            "body": request.json,
            "polls": 0,
            "status": "queued",
            "grades": grades,
        }
        return Reply(json=self._run_object(run_id))

    def _get_run(self, request: Recorded, params: dict[str, str]) -> Reply:
        run = self.runs[params["run_id"]]
        run["polls"] += 1
        if run["polls"] > self.polls_before_done and self.final_status != "never":
            run["status"] = self.final_status
        else:
            run["status"] = "in_progress"
        return Reply(json=self._run_object(params["run_id"]))

    def _run_object(self, run_id: str) -> dict[str, Any]:
        run = self.runs[run_id]
        passed = sum(1 for _, ok in run["grades"] if ok)
        failed = run["status"] == "failed"
        return {
            "object": "eval.run",
            "id": run_id,
            "eval_id": run["eval_id"],
            "status": run["status"],
            "name": run["body"].get("name", ""),
            "created_at": 1,
            "model": None,
            "metadata": {},
            "report_url": f"https://example.invalid/evals/{run['eval_id']}",
            "data_source": run["body"]["data_source"],
            "error": (self.run_error or {"code": "run_failed", "message": "grading failed"})
            if failed
            else None,
            "result_counts": {
                "total": len(run["grades"]),
                "errored": 0,
                "passed": passed,
                "failed": len(run["grades"]) - passed,
            },
            "per_model_usage": None,
            "per_testing_criteria_results": [],
        }

    def _output_items(self, request: Recorded, params: dict[str, str]) -> Reply:
        run = self.runs[params["run_id"]]
        content = run["body"]["data_source"]["source"]["content"]
        criterion = self.evals[params["eval_id"]]["testing_criteria"][0]
        items = []
        for index, (row, (score, passed)) in enumerate(zip(content, run["grades"], strict=True)):
            result = {
                "name": criterion["name"],
                "type": criterion["type"],
                "score": score,
                "passed": passed,
                "sample": None,
            }
            items.append(
                {
                    "object": "eval.run.output_item",
                    "id": f"outputitem_{index}",
                    "run_id": params["run_id"],
                    "eval_id": params["eval_id"],
                    "created_at": 1,
                    "status": "pass" if passed else "fail",
                    "datasource_item_id": index,
                    "datasource_item": row["item"],
                    "results": [result],
                    "sample": {"input": [], "output": [], "error": {"code": "", "message": ""}},
                }
            )
        items.reverse()  # the API's default order is newest first: callers must not rely on the order
        start = 0
        if "after" in request.query:
            start = next(i for i, item in enumerate(items) if item["id"] == request.query["after"]) + 1
        limit = min(int(request.query.get("limit", self.page_size)), self.page_size)
        page = items[start : start + limit]
        return Reply(
            json={
                "object": "list",
                "data": page,
                "has_more": start + limit < len(items),
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }
        )
