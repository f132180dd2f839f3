"""The base of every trace backend's source (Jaeger, Tempo, Phoenix, MLflow, Langfuse): a query URI →
search → fetch → the same converters as files, one trace at a time (bounded memory however many match).

A backend is one module with one ``PullSource`` subclass and one line in ``TRACE_SOURCES``. The subclass
says which query parameters it takes and yields ``PulledTrace`` documents (OTLP JSON or Jaeger JSON, as the
files hold them); everything else is here: URI parsing and its one-line errors, the time window
(``since=``, ``start=``/``end=``, ``--since``/``--since last``), ``limit=``, de-duplication by trace id,
requests with a deadline and retries (429/5xx, ``Retry-After``), conversion, and what the run store
records about the read (``ReadContext.windows``).

Example::

    class DemoSource(PullSource):
        name: ClassVar[str] = "demo"
        summary: ClassVar[str] = "Demo's query API"
        uri_form: ClassVar[str] = "demo+http://HOST:PORT?app=NAME&since=2h"
        parameters: ClassVar[frozenset[str]] = frozenset({"app"})

        def pull(self) -> Iterator[PulledTrace]:
            start, end = self.window
            for hit in self.client.get_json("/search", params={"app": self.query.param("app")})["ids"]:
                yield PulledTrace(hit, self.client.get_json(f"/traces/{hit}"))

    agentevals.evaluate(["demo+http://127.0.0.1:8080?app=shop&since=1h"], metrics=[...])
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import re
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar, Optional, Union
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..errors import ConfigError, InputFileError
from ..results import InputError
from ..traces.formats import TRACE_FORMATS
from ..traces.model import ConvertedTrace
from ..traces.readers import ReadPosition, detect_format
from .base import ReadContext, TraceSource

__all__ = ["COMMON_PARAMETERS", "PullClient", "PullQuery", "PullSource", "PulledTrace", "SourceError",
           "SourceWindow", "Verdict", "check_since", "otlp_value", "parse_duration", "parse_time"]

log = logging.getLogger("agentevals.engine")

COMMON_PARAMETERS = frozenset({"since", "start", "end", "limit", "timeout", "retries"})
"""Query parameters every pull source takes (``since=2h``, ``start=``/``end=`` in RFC 3339, ``limit=N``,
``timeout=`` seconds per request, ``retries=`` after a 429/5xx/no answer)."""

DEFAULT_SINCE = timedelta(hours=1)
"""The window when a URI (and ``--since``) names none: the last hour."""
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 3
MAX_RETRY_AFTER = 60.0
"""A ``Retry-After`` longer than this is cut to it (the request's own deadline still applies)."""

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class SourceError(InputFileError):
    """A source that cannot be read (unreachable, 401/403, an unknown project, a bad query): one line that
    names the source. ``resolve`` turns it into the input's ``InputError``; the other inputs are read."""


def parse_duration(text: str) -> timedelta:
    """``"90s"``, ``"15m"``, ``"2h"``, ``"7d"``, ``"1w"`` → a ``timedelta``. Raises ``ValueError``."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r} (say 30s, 15m, 2h, 7d or 1w)")
    return timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)])


def parse_time(text: str) -> datetime:
    """RFC 3339 (``2026-11-26T08:00:00Z``, or a date) → an aware UTC ``datetime``. Raises ``ValueError``."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an RFC 3339 time: {text!r} (say 2026-11-26T08:00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def check_since(since: Optional[str], *, flag: str = "--since") -> Optional[str]:
    """``since`` if it is a duration (``24h``), an RFC 3339 time or ``last``; else a one-line ``ConfigError``."""
    if since is None or since == "last":
        return since
    for parse in (parse_duration, parse_time):
        try:
            parse(since)
            return since
        except ValueError:
            continue
    raise ConfigError(f"{flag} {since}: not a duration (30m, 24h, 7d), an RFC 3339 time (2026-11-26T00:00:00Z) "
                      "or 'last'")


@dataclass(frozen=True)
class PullQuery:
    """A source URI, parsed: ``jaeger+https://host:16686/prefix?service=a&since=2h`` →
    ``base_url="https://host:16686/prefix"``, ``params={"service": ["a"], "since": ["2h"]}``."""

    uri: str
    base_url: str
    params: Mapping[str, Sequence[str]]

    def param(self, key: str, default: Optional[str] = None) -> Optional[str]:
        """The last value of ``key`` (``None``/``default`` when absent)."""
        values = self.params.get(key)
        return values[-1] if values else default

    def attributes(self) -> dict[str, str]:
        """``attr.KEY=VALUE`` parameters → ``{KEY: VALUE}``."""
        return {k[len("attr."):]: v[-1] for k, v in self.params.items() if k.startswith("attr.") and v}

    @property
    def key(self) -> str:
        """The source without its window (``since``/``start``/``end``/``limit``): what ``--since last``
        keeps a watermark for."""
        keep = [(k, v) for k in sorted(self.params) if k not in COMMON_PARAMETERS for v in self.params[k]]
        scheme = self.uri.split("://", 1)[0]
        base = self.base_url.split("://", 1)[1]
        return f"{scheme}://{base}" + (f"?{urlencode(keep)}" if keep else "")


@dataclass
class SourceWindow:
    """What one read of a pull source covered, for the run store (``ReadContext.windows[uri]``)."""

    uri: str
    key: str
    start: datetime
    end: datetime
    traces: int = 0
    newest: Optional[datetime] = None
    """The latest start time among the traces read (``None``: unknown or none read)."""


@dataclass
class PulledTrace:
    """One trace as a backend returned it: a parsed JSON document in a trace format the files use
    (``otlp-json`` — ``resourceSpans``/``batches`` — or ``jaeger-json``), detected when ``format`` is None."""

    trace_id: str
    document: Any
    format: Optional[str] = None
    started: Optional[datetime] = None
    """When the trace began, if the backend said (the ``--since last`` watermark)."""


@dataclass(frozen=True)
class Verdict:
    """One result written back to the backend a trace came from (``--write-back``)."""

    trace_id: str
    evaluator: str
    """The evaluator's (or metric's) name."""
    score: Optional[float]
    passed: Optional[bool]
    """``True``/``False`` for PASSED/FAILED, ``None`` when not evaluated or failed to evaluate."""
    status: str
    """``PASSED``, ``FAILED``, ``NOT_EVALUATED`` or ``ERROR``."""
    run_id: str
    evaluator_version: Optional[str] = None
    explanation: Optional[str] = None
    case_id: Optional[str] = None
    judge: bool = False
    """Decided by an LLM judge (MLflow's ``LLM_JUDGE`` source) rather than code."""

    @property
    def label(self) -> str:
        return "pass" if self.passed else "fail" if self.passed is False else self.status.lower()


@dataclass
class PullClient:
    """Requests to one backend: JSON in and out, ``timeout`` seconds for each, ``retries`` more attempts
    after a 429, a 5xx or no answer (exponential backoff with jitter, or the server's ``Retry-After``).
    A failure is a ``SourceError`` naming the source: ``jaeger+http://h:16686: 401 Unauthorized: …``."""

    source: str
    base_url: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    auth_hint: str = ""
    """Said after a 401/403 (``set LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY``)."""
    backoff: float = 0.5
    """The first wait between attempts (doubled each time, with jitter)."""

    def url(self, path: str, params: Optional[Union[Mapping[str, Any], Sequence[tuple[str, Any]]]] = None) -> str:
        url = path if "://" in path else self.base_url.rstrip("/") + "/" + path.lstrip("/")
        if params:
            items = params.items() if isinstance(params, Mapping) else params
            pairs = [(k, v) for k, v in items if v is not None]
            if pairs:
                url += ("&" if "?" in url else "?") + urlencode(pairs)
        return url

    def send(self, method: str, path: str, *, params: Optional[Union[Mapping[str, Any], Sequence[tuple[str, Any]]]] = None,
             body: Any = None, headers: Optional[Mapping[str, str]] = None,
             ok: Sequence[int] = (), decode: Optional[Callable[[bytes], Any]] = None) -> tuple[int, Any]:
        """One request with retries → ``(status, parsed JSON or None)``. A status in ``ok`` (besides 2xx)
        is returned as it is (a 404 the caller reads as "not there"); any other non-2xx raises. ``decode``
        reads a body that is not one JSON document (Jaeger v3 streams several ``{"result": …}`` objects)."""
        from ..core._http import HttpError, request

        url = self.url(path, params)
        data = None if body is None else json.dumps(body).encode()
        sent_headers = {"Accept": "application/json", **self.headers, **(headers or {})}
        if data is not None:
            sent_headers.setdefault("Content-Type", "application/json")
        attempt = 0
        while True:
            wait: Optional[float] = None
            try:
                answer = request(method, url, timeout=self.timeout, deadline=self.timeout, headers=sent_headers,
                                 body=data, proxies=True)
            except HttpError as exc:
                problem = exc.detail
                failure = f"{self.source}: {exc.detail}"
            else:
                if answer.ok or answer.status in ok:
                    if decode is not None and answer.ok:
                        return answer.status, decode(answer.body)
                    return answer.status, _json(answer.body, self.source, url) if answer.body.strip() else None
                problem = f"{answer.status} {answer.reason}".strip()
                failure = f"{self.source}: {problem}{_said(answer.body)}"
                if answer.status in (401, 403) and self.auth_hint:
                    failure += f" ({self.auth_hint})"
                if answer.status != 429 and answer.status < 500:
                    raise SourceError(failure)
                wait = _retry_after(answer.headers.get("Retry-After"))
            if attempt >= self.retries:
                raise SourceError(failure + (f" (after {attempt + 1} attempts)" if attempt else ""))
            attempt += 1
            delay = wait if wait is not None else self.backoff * (2 ** (attempt - 1)) * (0.5 + random.random())
            log.info("%s: %s; attempt %d of %d in %.1fs", self.source, problem, attempt + 1, self.retries + 1, delay)
            time.sleep(min(delay, MAX_RETRY_AFTER))

    def get_json(self, path: str, params: Optional[Union[Mapping[str, Any], Sequence[tuple[str, Any]]]] = None,
                 **kwargs: Any) -> Any:
        return self.send("GET", path, params=params, **kwargs)[1]

    def post_json(self, path: str, body: Any, **kwargs: Any) -> Any:
        return self.send("POST", path, body=body, **kwargs)[1]


def _json(body: bytes, source: str, url: str) -> Any:
    try:
        import orjson

        return orjson.loads(body)
    except ValueError:
        raise SourceError(f"{source}: {url.split('?')[0]} did not answer JSON: {_first(body)!r}") from None


def _first(body: bytes, size: int = 160) -> str:
    text = " ".join(body[:4096].decode("utf-8", "replace").split())
    return text[:size] + ("…" if len(text) > size else "")


def _said(body: bytes) -> str:
    """A server's error body, shortened to one line (its ``message``/``error``/``detail`` when JSON)."""
    if not body.strip():
        return ""
    try:
        data = json.loads(body)
    except ValueError:
        return f": {_first(body)}"
    said = _message(data)
    return f": {_first((said if said is not None else body.decode('utf-8', 'replace')).encode())}"


def _message(data: Any) -> Optional[str]:
    """The message in an error body: ``{"message": …}``, ``{"error": {"message": …}}`` (Jaeger v3),
    ``{"errors": [{"msg": …}]}`` (Jaeger v1), ``{"detail": …}``; ``None`` when there is none."""
    if isinstance(data, str):
        return data or None
    if isinstance(data, list):
        said = [m for m in (_message(item) for item in data) if m]
        return "; ".join(said) or None
    if isinstance(data, dict):
        for key in ("message", "error", "detail", "errors", "msg"):
            if data.get(key):
                return _message(data[key]) or json.dumps(data[key])
    return None


def _retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After``: seconds, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class PullSource(TraceSource):
    """A trace backend's query API as a trace source. Subclasses set the class attributes and implement
    ``pull`` (search, then fetch trace by trace); ``write_back`` when the backend stores results."""

    summary: ClassVar[str] = ""
    """One line for ``agentevals sources list``."""
    uri_form: ClassVar[str] = ""
    """The URI as users write it: ``jaeger+http://HOST:PORT?service=NAME&since=2h``."""
    parameters: ClassVar[frozenset[str]] = frozenset()
    """The query parameters this backend takes besides ``COMMON_PARAMETERS`` (``attr.*`` when it has
    ``"attr."``); any other is a ``ConfigError``."""
    credentials: ClassVar[tuple[str, ...]] = ()
    """Environment variables read for authentication (never a URI's ``user:password@``)."""
    writes_back: ClassVar[str] = ""
    """What ``--write-back`` creates there (``"trace annotations"``), ``""`` when nothing (``--emit-otel``)."""
    default_port: ClassVar[Optional[int]] = None

    def __init__(self, item: str) -> None:
        super().__init__(item)
        self.query = self.parse(item)
        self.client = PullClient(self.label, self.query.base_url, timeout=self._number("timeout", DEFAULT_TIMEOUT),
                                 retries=int(self._number("retries", DEFAULT_RETRIES)), auth_hint=self.auth_hint())
        self.window: tuple[datetime, datetime] = self._window(None, None)
        self.limit: Optional[int] = int(self._number("limit", 0)) or None

    @classmethod
    def parse(cls, uri: str) -> PullQuery:
        """Check and split a URI; a problem is one ``ConfigError`` naming the URI."""
        scheme, _, rest = uri.partition("://")
        transport = scheme.split("+", 1)[1].lower() if "+" in scheme else "http"
        if transport not in ("http", "https"):
            raise ConfigError(f"{uri}: unknown transport {transport!r}: write {cls.name}+http:// or {cls.name}+https://")
        parts = urlsplit(f"{transport}://{rest}")
        if parts.username is not None or parts.password is not None:
            where = " and ".join(cls.credentials) if cls.credentials else "the documented environment variables"
            raise ConfigError(f"{cls.name}+{transport}://…: credentials in the URI are refused (they would be "
                              f"logged and stored): set {where} instead")
        if not parts.hostname:
            raise ConfigError(f"{uri}: no host (write {cls.uri_form or cls.name + '+http://HOST:PORT'})")
        params: dict[str, list[str]] = {}
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            params.setdefault(key, []).append(value)
        allowed = COMMON_PARAMETERS | cls.parameters
        for key in params:
            if key not in allowed and not (key.startswith("attr.") and "attr." in cls.parameters):
                known = ", ".join(sorted(allowed))
                raise ConfigError(f"{uri}: unknown parameter {key!r} for {cls.name} (known: {known})")
        netloc = parts.netloc if parts.port or cls.default_port is None else f"{parts.netloc}:{cls.default_port}"
        base = f"{transport}://{netloc}{parts.path.rstrip('/')}"
        query = PullQuery(uri=uri, base_url=base, params=params)
        for key in ("since", "start", "end"):
            text = query.param(key)
            if text is not None:
                try:
                    parse_duration(text) if key == "since" else parse_time(text)
                except ValueError as exc:
                    raise ConfigError(f"{uri}: {key}={text}: {exc}") from None
        return query

    def auth_hint(self) -> str:
        """Said after a 401/403."""
        return f"set {' and '.join(self.credentials)}" if self.credentials else ""

    def _number(self, key: str, default: float) -> float:
        text = self.query.param(key)
        if text is None or text == "":
            return default
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(f"{self.item}: {key}={text}: not a number") from None
        if value < 0:
            raise ConfigError(f"{self.item}: {key}={text}: must not be negative")
        return value

    def _window(self, since: Optional[str], after: Optional[datetime]) -> tuple[datetime, datetime]:
        """``(start, end)`` of the read: the URI's ``start``/``end``/``since``, else ``--since``, else the
        last hour; ``after`` (``--since last``: the previous run's end) moves the start later."""
        now = datetime.now(timezone.utc)
        end_text, start_text, since_text = self.query.param("end"), self.query.param("start"), self.query.param("since")
        end = parse_time(end_text) if end_text else now
        if start_text:
            start = parse_time(start_text)
        elif since_text:
            start = end - parse_duration(since_text)
        elif since and since != "last":
            try:
                start = end - parse_duration(since)
            except ValueError:
                start = parse_time(since)
        else:
            start = end - DEFAULT_SINCE
        if after is not None and after > start:
            start = after
        if start > end:
            raise ConfigError(f"{self.item}: the window starts after it ends ({start.isoformat()} > {end.isoformat()})")
        return start, end

    @abstractmethod
    def pull(self) -> Iterator[PulledTrace]:
        """Search ``self.window`` (and ``self.query``'s filters), then fetch each trace: one at a time, so
        memory stays bounded. May yield a trace twice (paging by time); ``read`` keeps the first. Stop
        early once ``self.limit`` traces are found if the API pages. Raise ``SourceError`` for failures."""

    def write_back(self, verdicts: Sequence[Verdict]) -> int:
        """Store ``verdicts`` in the backend as its own objects, idempotently (a second call with the same
        run and evaluator updates, never duplicates). Returns how many were written; raises ``SourceError``."""
        raise SourceError(f"{self.label}: {self.name} takes no write-back (use --emit-otel)")

    def read(self, ctx: ReadContext, position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
        from ..traces._collect import convert_into

        after = ctx.watermarks.get(self.query.key) if ctx.since == "last" else None
        self.window = ctx.pinned.get(self.label) or self._window(ctx.since, after)
        record = SourceWindow(uri=self.label, key=self.query.key, start=self.window[0], end=self.window[1])
        ctx.windows[self.label] = record
        seen: set[str] = set()
        for pulled in self.pull():
            if pulled.trace_id in seen:
                continue
            if self.limit is not None and len(seen) >= self.limit:
                break
            seen.add(pulled.trace_id)
            fmt = pulled.format or detect_format(pulled.document)
            if fmt is None:
                yield InputError(source=self.label, error=f"{self.label}: trace {pulled.trace_id} could not be "
                                 "converted: the backend answered no spans in a known format")
                continue
            out: list[ConvertedTrace] = []
            errors: list[InputError] = []
            try:
                traces = list(TRACE_FORMATS.get(fmt).read(pulled.document, self.label))
            except InputFileError as exc:
                yield InputError(source=self.label, error=f"{self.label}: trace {pulled.trace_id} could not be "
                                 f"converted: {str(exc).removeprefix(self.label + ': ')}")
                continue
            for trace in traces:
                convert_into(trace, ctx.log_events, ctx.keep_spans, out, errors)
            record.traces += 1
            if pulled.started is not None and (record.newest is None or pulled.started > record.newest):
                record.newest = pulled.started
            position.fraction = 0.0 if self.limit is None else min(1.0, len(seen) / self.limit)
            yield from out
            yield from errors
        position.fraction = 1.0


def otlp_value(value: Any) -> dict[str, Any]:
    """A plain value → an OTLP JSON ``AnyValue``, for backends that answer plain JSON attributes (a map, or
    anything else that is not a scalar or a list, as JSON text: span attributes hold no maps)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [otlp_value(v) for v in value]}}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"stringValue": json.dumps(value, ensure_ascii=False)}


def env_credentials(*names: str) -> Optional[tuple[str, ...]]:
    """The values of ``names`` from the environment, or ``None`` when any is unset or empty."""
    values = tuple(os.environ.get(n, "") for n in names)
    return values if all(values) else None
