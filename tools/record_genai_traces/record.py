#!/usr/bin/env python3
"""Record real OpenTelemetry GenAI traces from small agents talking to a fake OpenAI.

Usage::

    python tools/record_genai_traces/record.py --out packages/agentevals-cli/tests/data/traces/genai
    python tools/record_genai_traces/record.py --out /tmp/traces --only langchain_openllmetry

A loopback OpenAI-compatible server (``fake_openai.py``) answers the first model call
with a ``get_weather({"city": "Paris"})`` tool call and the second one with a final
answer. Every recording runs in its own subprocess (instrumentors patch libraries
globally) with a fresh TracerProvider / LoggerProvider whose in-memory exporters are
serialised to ``<name>.otlp.json`` (+ ``<name>.otlp-logs.json`` when log records were
emitted) and ``<name>.jaeger.json``.

Only 127.0.0.1 is ever contacted: each child process refuses any other socket
connection, and the SDKs' own cloud exporters are never registered.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

USER_MESSAGE = "What's the weather in Paris?"
CONVERSATION_ID = "conv-weather-paris-0001"
AGENT_NAME = "weather_agent"
MODEL = "gpt-4o-mini"
INSTRUCTIONS = "You are a helpful weather assistant. Use the get_weather tool to answer."
TOOL_RESULT = "sunny, 21°C"
DUMMY_API_KEY = "sk-dummy-not-a-real-key"
HTTP_TIMEOUT_S = 10.0

# Recordings: name -> (runner function, extra environment for the child, overlay or None).
# An "overlay" is a directory holding one extra package installed with
# `pip install --no-deps --target DIR REQ` (see overlays.txt). It is put first on the
# child's PYTHONPATH, so a recording can use a package version that cannot be installed
# next to the main requirements (an older release, or a package whose import name
# clashes with one in requirements.txt).
RECORDINGS: dict[str, tuple[str, dict[str, str], str | None]] = {
    # OpenAI Agents SDK. REC_API=responses is the SDK default (Responses API) ---------------
    "openai_agents_openinference": (
        "run_agents", {"REC_INSTR": "openinference", "REC_API": "responses"}, None),
    "openai_agents_chatcompletions_openinference": (
        "run_agents", {"REC_INSTR": "openinference", "REC_API": "chat_completions"}, None),
    "openai_agents_otel_genai": (
        "run_agents",
        {"REC_INSTR": "otel_genai", "REC_API": "responses",
         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event"}, None),
    "openai_agents_chatcompletions_otel_genai": (
        "run_agents",
        {"REC_INSTR": "otel_genai", "REC_API": "chat_completions",
         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event"}, None),
    "openai_agents_otel_processor": (
        "run_agents", {"REC_INSTR": "otel_processor", "REC_API": "responses"}, None),
    "openai_agents_chatcompletions_otel_processor": (
        "run_agents", {"REC_INSTR": "otel_processor", "REC_API": "chat_completions"}, None),
    "openai_agents_openllmetry": (
        "run_agents", {"REC_INSTR": "openllmetry", "REC_API": "responses", "TRACELOOP_TRACE_CONTENT": "true",
                       "TRACELOOP_METRICS_ENABLED": "false"}, "traceloop-openai-agents"),
    "openai_agents_chatcompletions_openllmetry": (
        "run_agents", {"REC_INSTR": "openllmetry", "REC_API": "chat_completions",
                       "TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_METRICS_ENABLED": "false"},
        "traceloop-openai-agents"),
    # LangChain v1 agent (langchain.agents.create_agent, a LangGraph graph) -----------------
    "langchain_openllmetry": (
        "run_langchain", {"REC_INSTR": "openllmetry", "TRACELOOP_TRACE_CONTENT": "true"}, None),
    "langchain_openllmetry_events": (
        "run_langchain", {"REC_INSTR": "openllmetry_events", "TRACELOOP_TRACE_CONTENT": "true"}, None),
    "langchain_openllmetry_legacy": (
        "run_langchain", {"REC_INSTR": "openllmetry", "TRACELOOP_TRACE_CONTENT": "true"},
        "openllmetry-langchain-legacy"),
    "langchain_openinference": ("run_langchain", {"REC_INSTR": "openinference"}, None),
    # Raw openai client + official OTel GenAI instrumentation ------------------------------
    "openai_otel_genai_v2_latest": (
        "run_openai_v2",
        {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event"}, None),
    "openai_otel_genai_v2_legacy": (
        "run_openai_v2", {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}, "openai-v2-legacy"),
    # Strands Agents' own tracer, default (pre-1.37) conventions: per-message span events
    # gen_ai.user.message / gen_ai.assistant.message / gen_ai.tool.message / gen_ai.choice whose
    # content is Strands' Bedrock-style content blocks ([{"text"}], toolUse, toolResult).
    "strands_legacy": ("run_strands", {}, "strands"),
}

# Environment variables that could make an SDK export somewhere else.
_SCRUBBED_ENV_PREFIXES = ("LANGCHAIN_", "LANGSMITH_", "OTEL_", "TRACELOOP_", "OPENAI_", "PHOENIX_", "ARIZE_")


# --------------------------------------------------------------------------- safety


REFUSED_CONNECTIONS: list[str] = []


def install_loopback_guard() -> None:
    """Refuse (and remember) every socket connection that is not to the loopback interface."""

    allowed_hosts = {"127.0.0.1", "::1", "localhost"}
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def _check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if host not in allowed_hosts:
                REFUSED_CONNECTIONS.append(str(host))
                raise ConnectionRefusedError(f"record.py: refusing non-loopback connection to {host!r}")

    def connect(self: socket.socket, address: Any) -> None:
        _check(self, address)
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check(self, address)
        return original_connect_ex(self, address)

    original_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        # No DNS look-ups either: only loopback names/addresses are resolved.
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and name not in allowed_hosts:
            REFUSED_CONNECTIONS.append(str(name))
            raise socket.gaierror(socket.EAI_NONAME, f"record.py: refusing to resolve {name!r}")
        return original_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]


# --------------------------------------------------------------------------- OTel setup


class Telemetry:
    """A fresh TracerProvider + LoggerProvider with in-memory exporters."""

    def __init__(self, service_name: str) -> None:
        from opentelemetry import trace
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.resource = Resource.create({"service.name": service_name})
        self.span_exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider(resource=self.resource)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.span_exporter))
        trace.set_tracer_provider(self.tracer_provider)

        self.log_exporter = InMemoryLogRecordExporter()
        self.logger_provider = LoggerProvider(resource=self.resource)
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.log_exporter))
        set_logger_provider(self.logger_provider)
        try:  # older instrumentations emit through the (deprecated) Events API
            from opentelemetry._events import set_event_logger_provider
            from opentelemetry.sdk._events import EventLoggerProvider

            set_event_logger_provider(EventLoggerProvider(self.logger_provider))
        except ImportError:
            pass

    def write(self, out_dir: Path, name: str) -> list[Path]:
        from serialize import logs_to_otlp_json, otlp_to_jaeger, spans_to_otlp_json

        self.tracer_provider.force_flush()
        self.logger_provider.force_flush()
        spans = self.span_exporter.get_finished_spans()
        if not spans:
            raise RuntimeError(f"{name}: no spans were recorded")
        otlp = spans_to_otlp_json(spans)
        written = [_dump(out_dir / f"{name}.otlp.json", otlp), _dump(out_dir / f"{name}.jaeger.json", otlp_to_jaeger(otlp))]
        logs = self.log_exporter.get_finished_logs()
        logs_path = out_dir / f"{name}.otlp-logs.json"
        if logs:
            written.append(_dump(logs_path, logs_to_otlp_json(logs)))
        elif logs_path.exists():
            logs_path.unlink()
        return written


def _dump(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- recordings


def run_agents(tel: Telemetry, base_url: str) -> None:
    """OpenAI Agents SDK agent with one function tool."""
    import asyncio

    from agents import (
        Agent,
        RunConfig,
        Runner,
        function_tool,
        set_default_openai_api,
        set_default_openai_client,
        set_trace_processors,
    )
    from openai import AsyncOpenAI

    instr = os.environ["REC_INSTR"]
    api = os.environ["REC_API"]

    # Drop the SDK's default processor (it exports to the OpenAI platform); the
    # OTel instrumentation below registers its own processor.
    set_trace_processors([])
    client = AsyncOpenAI(base_url=base_url, api_key=DUMMY_API_KEY, timeout=HTTP_TIMEOUT_S, max_retries=0)
    set_default_openai_client(client, use_for_tracing=False)
    set_default_openai_api(api)  # "responses" (SDK default) or "chat_completions"

    run_context: Callable[[], Any]
    if instr == "openinference":
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=tel.tracer_provider)
        run_context = lambda: using_session(CONVERSATION_ID)  # noqa: E731
    elif instr == "otel_genai":
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        host, port = base_url.split("//", 1)[1].split("/", 1)[0].split(":")
        OpenAIAgentsInstrumentor().instrument(
            tracer_provider=tel.tracer_provider,
            base_url=base_url,
            server_address=host,
            server_port=int(port),
        )
        run_context = _nullcontext
    elif instr == "openllmetry":
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=tel.tracer_provider)
        run_context = _nullcontext
    elif instr == "otel_processor":
        from agents import add_trace_processor
        from openai_agents_opentelemetry import OpenTelemetryTracingProcessor, ProcessorConfig

        config = ProcessorConfig(
            capture_prompts=True,
            capture_completions=True,
            capture_tool_inputs=True,
            capture_tool_outputs=True,
            baggage_keys=["session.id"],
        )
        # The processor takes its tracer from the global TracerProvider (set in Telemetry).
        add_trace_processor(OpenTelemetryTracingProcessor(config=config))
        run_context = lambda: _baggage("session.id", CONVERSATION_ID)  # noqa: E731
    else:
        raise SystemExit(f"unknown REC_INSTR {instr!r}")

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return TOOL_RESULT if city.lower() == "paris" else "unknown"

    agent = Agent(name=AGENT_NAME, instructions=INSTRUCTIONS, tools=[get_weather], model=MODEL)
    run_config = RunConfig(workflow_name="weather_workflow", group_id=CONVERSATION_ID)
    with run_context():
        result = asyncio.run(Runner.run(agent, USER_MESSAGE, run_config=run_config))
    print(f"  final output: {result.final_output!r}")


def run_strands(tel: Telemetry, base_url: str) -> None:
    """Strands Agents agent (OpenAI model provider) with one @tool; Strands' built-in tracer."""
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city name.
        """
        return TOOL_RESULT if city.lower() == "paris" else "unknown"

    model = OpenAIModel(client_args={"base_url": base_url, "api_key": DUMMY_API_KEY, "timeout": HTTP_TIMEOUT_S,
                                     "max_retries": 0}, model_id=MODEL)
    agent = Agent(model=model, tools=[get_weather], system_prompt=INSTRUCTIONS, name=AGENT_NAME,
                  callback_handler=None, trace_attributes={"session.id": CONVERSATION_ID})
    result = agent(USER_MESSAGE)
    print(f"  final output: {str(result).strip()!r}")


def run_langchain(tel: Telemetry, base_url: str) -> None:
    """LangChain v1 ``create_agent`` (LangGraph) agent with one @tool."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    instr = os.environ["REC_INSTR"]
    if instr == "openllmetry":
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        LangchainInstrumentor().instrument(tracer_provider=tel.tracer_provider)
    elif instr == "openllmetry_events":
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor

        # Message content as OTel log events instead of span attributes.
        LangchainInstrumentor(use_attributes=False).instrument(
            tracer_provider=tel.tracer_provider, logger_provider=tel.logger_provider)
    elif instr == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument(tracer_provider=tel.tracer_provider)
    else:
        raise SystemExit(f"unknown REC_INSTR {instr!r}")

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return TOOL_RESULT if city.lower() == "paris" else "unknown"

    model = ChatOpenAI(model=MODEL, base_url=base_url, api_key=DUMMY_API_KEY, timeout=HTTP_TIMEOUT_S,
                       max_retries=0, temperature=0)
    agent = create_agent(model, tools=[get_weather], system_prompt=INSTRUCTIONS, name=AGENT_NAME,
                         checkpointer=InMemorySaver())
    # LangGraph's thread_id is the conversation id (both instrumentations read it).
    result = agent.invoke({"messages": [{"role": "user", "content": USER_MESSAGE}]},
                          config={"configurable": {"thread_id": CONVERSATION_ID}})
    print(f"  final output: {result['messages'][-1].content!r}")


def run_openai_v2(tel: Telemetry, base_url: str) -> None:
    """Raw ``openai`` client, manual two-turn tool loop, official OTel GenAI instrumentation.

    The ``chat`` spans come from ``opentelemetry-instrumentation-openai-v2``.

    * latest (openai-v2 2.4b0, GenAI semconv "latest experimental"): the enclosing
      ``invoke_agent`` span and the ``execute_tool`` span come from
      ``opentelemetry-util-genai``'s ``TelemetryHandler`` -- the API that framework
      instrumentations are built on -- driven by this loop the way a framework would.
      The conversation id is set on the ``invoke_agent`` span only.
    * legacy (openai-v2 2.3b0 overlay, semconv 1.30 events): there is no agent/tool API, so
      the two ``chat`` spans are grouped under one attribute-less root span made here;
      message content is only in ``gen_ai.*.message`` / ``gen_ai.choice`` log events.
    """
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    legacy = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "") != "gen_ai_latest_experimental"
    OpenAIInstrumentor().instrument(tracer_provider=tel.tracer_provider, logger_provider=tel.logger_provider)
    client = OpenAI(base_url=base_url, api_key=DUMMY_API_KEY, timeout=HTTP_TIMEOUT_S, max_retries=0)

    tools = [{
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": USER_MESSAGE},
    ]

    def call_tool(call: Any) -> str:
        args = json.loads(call.function.arguments)
        return TOOL_RESULT if str(args.get("city", "")).lower() == "paris" else "unknown"

    if legacy:
        tracer = tel.tracer_provider.get_tracer("record_genai_traces")
        with tracer.start_as_current_span(AGENT_NAME):
            first = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
            call = first.choices[0].message.tool_calls[0]
            messages.append(first.choices[0].message.model_dump(exclude_none=True))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": call_tool(call)})
            second = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
            answer = second.choices[0].message.content
        print(f"  final output: {answer!r}")
        return

    from opentelemetry.util.genai.handler import TelemetryHandler
    from opentelemetry.util.genai.types import InputMessage, OutputMessage, Text

    handler = TelemetryHandler(tracer_provider=tel.tracer_provider, logger_provider=tel.logger_provider)
    with handler.invoke_local_agent(agent_name=AGENT_NAME, request_model=MODEL) as agent_run:
        agent_run.conversation_id = CONVERSATION_ID
        if handler.should_capture_content():
            agent_run.input_messages = [InputMessage(role="user", parts=[Text(content=USER_MESSAGE)])]
        first = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
        call = first.choices[0].message.tool_calls[0]
        messages.append(first.choices[0].message.model_dump(exclude_none=True))
        with handler.tool(call.function.name, tool_call_id=call.id, tool_type="function") as tool_run:
            result = call_tool(call)
            if handler.should_capture_content():
                tool_run.arguments = json.loads(call.function.arguments)
                tool_run.tool_result = result
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        second = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
        answer = second.choices[0].message.content
        if handler.should_capture_content():
            agent_run.output_messages = [OutputMessage(role="assistant", parts=[Text(content=answer)],
                                                       finish_reason="stop")]
    print(f"  final output: {answer!r}")


# --------------------------------------------------------------------------- helpers


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class _baggage:
    def __init__(self, key: str, value: str) -> None:
        self.key, self.value, self.token = key, value, None

    def __enter__(self) -> None:
        from opentelemetry import baggage, context

        self.token = context.attach(baggage.set_baggage(self.key, self.value))

    def __exit__(self, *exc: object) -> None:
        from opentelemetry import context

        context.detach(self.token)


# --------------------------------------------------------------------------- driver


def child_main(name: str, base_url: str, out_dir: Path) -> None:
    install_loopback_guard()
    runner_name = RECORDINGS[name][0]
    tel = Telemetry(service_name=f"weather-agent-{name.replace('_', '-')}")
    globals()[runner_name](tel, base_url)
    for path in tel.write(out_dir, name):
        print(f"  wrote {path.name} ({path.stat().st_size} bytes)")
    if REFUSED_CONNECTIONS:
        raise SystemExit(f"{name}: refused non-loopback connections to {sorted(set(REFUSED_CONNECTIONS))}")


def read_overlays() -> dict[str, str]:
    """overlays.txt: ``<overlay name> <pip requirement> [<pip requirement> ...]`` per line."""
    overlays = {}
    for line in (HERE / "overlays.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, requirement = line.split(None, 1)
            overlays[name] = requirement.strip()
    return overlays


def _child_env(name: str, base_url: str, overlay_dir: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED_ENV_PREFIXES)}
    env.pop("PYTHONPATH", None)
    if overlay_dir is not None:
        env["PYTHONPATH"] = str(overlay_dir)
    env.update(RECORDINGS[name][1])
    env.update({
        "OPENAI_API_KEY": DUMMY_API_KEY,
        "OPENAI_BASE_URL": base_url,
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "LANGCHAIN_TRACING_V2": "false",
        "LANGSMITH_TRACING": "false",
        "PYTHONUNBUFFERED": "1",
    })
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--only", nargs="+", choices=sorted(RECORDINGS), help="record only these")
    parser.add_argument("--timeout", type=float, default=180.0, help="per-recording timeout in seconds")
    parser.add_argument("--overlay-root", type=Path, default=Path(sys.prefix) / "record_genai_overlays",
                        help="directory holding the overlays of overlays.txt (default: %(default)s)")
    parser.add_argument("--skip-missing-overlays", action="store_true",
                        help="skip, instead of failing, recordings whose overlay is not installed")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    if args.child:
        child_main(args.child, args.base_url, args.out)
        return 0

    from fake_openai import FakeOpenAIServer

    overlays = read_overlays()
    failures, skipped = [], []
    with FakeOpenAIServer() as server:
        for name in args.only or list(RECORDINGS):
            print(f"[{name}]", flush=True)
            overlay = RECORDINGS[name][2]
            overlay_dir = None
            if overlay is not None:
                overlay_dir = (args.overlay_root / overlay).resolve()
                if not overlay_dir.is_dir():
                    print(f"  overlay {overlay!r} missing; install it with:\n"
                          f"    {sys.executable} -m pip install --no-deps --target {overlay_dir} "
                          f"{overlays[overlay]}", flush=True)
                    (skipped if args.skip_missing_overlays else failures).append(name)
                    continue
            started = time.monotonic()
            before = len(server.state.requests)
            cmd = [sys.executable, str(Path(__file__).resolve()), "--out", str(args.out),
                   "--child", name, "--base-url", server.base_url]
            try:
                proc = subprocess.run(cmd, env=_child_env(name, server.base_url, overlay_dir), timeout=args.timeout)
                ok = proc.returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
            calls = server.state.requests[before:]
            print(f"  model calls: {[(c['path'], 'stream' if c['stream'] else 'json') for c in calls]}"
                  f" ({time.monotonic() - started:.1f}s)", flush=True)
            if not ok:
                failures.append(name)
                print(f"  FAILED: {name}", flush=True)
    if skipped:
        print(f"skipped recordings (overlay missing): {', '.join(skipped)}", file=sys.stderr)
    if failures:
        print(f"failed recordings: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
