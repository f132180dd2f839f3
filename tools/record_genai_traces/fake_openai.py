"""A tiny loopback OpenAI-compatible server used by ``record.py``.

It implements just enough of ``POST /v1/chat/completions`` and ``POST /v1/responses``
(non-streaming and SSE streaming) for a one-tool agent loop:

* a request whose messages contain no tool result is answered with a call to the
  ``get_weather`` tool with arguments ``{"city": "Paris"}``;
* a request that already contains the tool result is answered with the final text.

Only the standard library is used. The server binds to 127.0.0.1 on a free port.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOOL_NAME = "get_weather"
TOOL_ARGUMENTS = json.dumps({"city": "Paris"}, separators=(",", ":"))
FINAL_ANSWER = "It is sunny in Paris, 21°C."

# Fixed, realistic-looking ids so that the recordings are easy to grep.
CHAT_TOOL_CALL_ID = "call_wX7kQ2pParisWeather01"
RESP_TOOL_CALL_ID = "call_rT9mZ4pParisWeather02"
RESP_FUNCTION_ITEM_ID = "fc_68a1b2c3d4e5f60718293a4b5c6d7e8f"
RESP_MESSAGE_ITEM_ID = "msg_68a1b2c3d4e5f60718293a4b5c6d7e90"

# Fixed token usage per turn: (input, output).
USAGE_TOOL_TURN = (57, 16)
USAGE_FINAL_TURN = (92, 11)


def _chat_has_tool_result(body: dict[str, Any]) -> bool:
    return any(m.get("role") == "tool" for m in body.get("messages") or [])


def _responses_has_tool_result(body: dict[str, Any]) -> bool:
    items = body.get("input")
    if not isinstance(items, list):
        return False
    return any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counter = 0
        self.requests: list[dict[str, Any]] = []

    def next_id(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter


def _chat_completion(body: dict[str, Any], n: int) -> dict[str, Any]:
    model = body.get("model") or "gpt-4o-mini"
    if _chat_has_tool_result(body):
        message: dict[str, Any] = {
            "role": "assistant",
            "content": FINAL_ANSWER,
            "refusal": None,
            "annotations": [],
        }
        finish = "stop"
        usage = USAGE_FINAL_TURN
    else:
        message = {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "annotations": [],
            "tool_calls": [
                {
                    "id": CHAT_TOOL_CALL_ID,
                    "type": "function",
                    "function": {"name": TOOL_NAME, "arguments": TOOL_ARGUMENTS},
                }
            ],
        }
        finish = "tool_calls"
        usage = USAGE_TOOL_TURN
    return {
        "id": f"chatcmpl-fake{n:04d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake0001",
        "service_tier": "default",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
    }


def _chat_completion_chunks(full: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """Split a chat.completion into chat.completion.chunk objects (SSE streaming)."""
    base = {k: full[k] for k in ("id", "created", "model", "system_fingerprint")}
    base["object"] = "chat.completion.chunk"
    choice = full["choices"][0]
    msg = choice["message"]
    chunks: list[dict[str, Any]] = []

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    if msg.get("tool_calls"):
        tc = msg["tool_calls"][0]
        chunks.append(chunk({"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": tc["id"], "type": "function",
             "function": {"name": tc["function"]["name"], "arguments": ""}}]}))
        chunks.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": tc["function"]["arguments"]}}]}))
    else:
        chunks.append(chunk({"role": "assistant", "content": ""}))
        text = msg["content"]
        for i in range(0, len(text), 8):
            chunks.append(chunk({"content": text[i : i + 8]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**base, "choices": [], "usage": full["usage"]})
    return chunks


def _response(body: dict[str, Any], n: int) -> dict[str, Any]:
    model = body.get("model") or "gpt-4o-mini"
    if _responses_has_tool_result(body):
        output: list[dict[str, Any]] = [
            {
                "type": "message",
                "id": RESP_MESSAGE_ITEM_ID,
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": FINAL_ANSWER, "annotations": [], "logprobs": []}],
            }
        ]
        usage = USAGE_FINAL_TURN
    else:
        output = [
            {
                "type": "function_call",
                "id": RESP_FUNCTION_ITEM_ID,
                "call_id": RESP_TOOL_CALL_ID,
                "name": TOOL_NAME,
                "arguments": TOOL_ARGUMENTS,
                "status": "completed",
            }
        ]
        usage = USAGE_TOOL_TURN
    return {
        "id": f"resp_fake{n:04d}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": bool(body.get("store", True)),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice") or "auto",
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": usage[0],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage[1],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage[0] + usage[1],
        },
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _response_events(full: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The Responses API SSE event sequence for a finished response."""
    in_progress = {**full, "status": "in_progress", "output": [], "usage": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": in_progress}),
        ("response.in_progress", {"type": "response.in_progress", "response": in_progress}),
    ]
    for idx, item in enumerate(full["output"]):
        events.append(("response.output_item.added", {
            "type": "response.output_item.added", "output_index": idx,
            "item": {**item, "status": "in_progress", **({"content": []} if item["type"] == "message" else {})}}))
        if item["type"] == "function_call":
            events.append(("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "item_id": item["id"],
                "output_index": idx, "delta": item["arguments"]}))
            events.append(("response.function_call_arguments.done", {
                "type": "response.function_call_arguments.done", "item_id": item["id"],
                "output_index": idx, "arguments": item["arguments"]}))
        else:
            text = item["content"][0]["text"]
            events.append(("response.content_part.added", {
                "type": "response.content_part.added", "item_id": item["id"], "output_index": idx,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}))
            events.append(("response.output_text.delta", {
                "type": "response.output_text.delta", "item_id": item["id"], "output_index": idx,
                "content_index": 0, "delta": text, "logprobs": []}))
            events.append(("response.output_text.done", {
                "type": "response.output_text.done", "item_id": item["id"], "output_index": idx,
                "content_index": 0, "text": text, "logprobs": []}))
            events.append(("response.content_part.done", {
                "type": "response.content_part.done", "item_id": item["id"], "output_index": idx,
                "content_index": 0, "part": item["content"][0]}))
        events.append(("response.output_item.done", {
            "type": "response.output_item.done", "output_index": idx, "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": full}))
    for seq, (_, data) in enumerate(events):
        data["sequence_number"] = seq
    return events


def _make_handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send_json(self, code: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", f"req_fake{state.counter:04d}")
            self.end_headers()
            self.wfile.write(data)

        def _send_sse(self, events: list[tuple[str | None, dict[str, Any]]], done_marker: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for name, data in events:
                line = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
                self.wfile.write(line.encode())
            if done_marker:
                self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send_json(400, {"error": {"message": "invalid JSON", "type": "invalid_request_error"}})
                return
            path = self.path.split("?", 1)[0].rstrip("/")
            n = state.next_id()
            state.requests.append({"path": path, "stream": bool(body.get("stream"))})
            if path.endswith("/chat/completions"):
                full = _chat_completion(body, n)
                if body.get("stream"):
                    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                    self._send_sse([(None, c) for c in _chat_completion_chunks(full, include_usage)], True)
                else:
                    self._send_json(200, full)
            elif path.endswith("/responses"):
                full = _response(body, n)
                if body.get("stream"):
                    self._send_sse(list(_response_events(full)), False)
                else:
                    self._send_json(200, full)
            else:
                self._send_json(404, {"error": {"message": f"unknown path {path}", "type": "invalid_request_error"}})

        def do_GET(self) -> None:
            self._send_json(404, {"error": {"message": "not implemented", "type": "invalid_request_error"}})

    return Handler


class FakeOpenAIServer:
    """Context manager running the fake server in a daemon thread on 127.0.0.1."""

    def __init__(self) -> None:
        self.state = _State()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self.state))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="fake-openai", daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
