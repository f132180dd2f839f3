"""Alert rules of ``serve``: a metric's rolling pass rate watched with a Wilson interval, fired and cleared.

    rule = parse_rule("tool_trajectory_avg_score pass_rate < 0.9 over 1h min 20")
    monitor = AlertMonitor([rule], state, webhook=WebhookSender(url))
    monitor.check()            # after each batch of sessions (``run_finished``) and on a timer

A rule reads ``METRIC pass_rate < THRESHOLD over DURATION [min N]`` (``<=`` too; ``N`` defaults to
``DEFAULT_MIN_SESSIONS``). Its window is the metric's PASSED/FAILED outcomes of the last DURATION
(``ContinuousState.outcomes``), with ``n`` sessions of which ``passed`` passed and the 95% Wilson interval
``[lower, upper]`` of the pass rate. The rule

- **fires** when ``n >= N`` and the whole interval is below the threshold: ``upper < THRESHOLD`` (``<=``:
  ``upper <= THRESHOLD``). A few bad sessions cannot fire it: their interval is too wide;
- **clears** when the window's pass rate itself is back: ``passed / n >= THRESHOLD`` (``<=``: ``>``), or the
  window holds no session any more;
- otherwise keeps its state. Firing needs the interval's top under the line, clearing only the point
  estimate on it: the band between the two is the hysteresis that stops a rate near the threshold flapping.

On each change: one log line (WARNING), an ``AlertEvent`` in ``ContinuousState.alerts``/``active``, with
``--emit-otel`` an ``agentevals.alert`` OTel event, and with ``--alert-webhook`` a POST of ``alert_body``
(``WebhookSender``: deadline, retries with backoff, on its own thread so a webhook that is down never slows
evaluation). ``GET /api/alerts`` shows the rules, what fires and what fired (``add_alert_routes``).
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, Optional
from urllib.parse import quote, urlsplit

from ..config.alert_rules import DEFAULT_MIN_SESSIONS, RULE_SYNTAX, AlertRule, parse_rule
from ..engine.consumers import RunConsumer
from ..errors import ConfigError
from .continuous import AlertEvent, ContinuousState, Window

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ..results import RunResult
    from .http_api import ApiContext
    from .live import EvalSettings
    from .server import ServeOptions

__all__ = ["BODY_SCHEMA", "DEFAULT_MIN_SESSIONS", "OTEL_EVENT", "AlertMonitor", "AlertRule", "WebhookSender",
           "add_alert_routes", "alert_body", "parse_rule"]

log = logging.getLogger(__name__)

BODY_SCHEMA = "agentevals.alert/v1"
"""The ``schema`` of the webhook body; a change that is not an addition gets a new version."""
OTEL_EVENT = "agentevals.alert"
"""The OTel event name (``--emit-otel``); its ``gen_ai.evaluation.name`` is the metric, as on result events."""
MAX_SESSIONS = 20
"""Failing sessions listed in an event and a webhook body (most recent first)."""


def load_rules(flags: Sequence[str], config_rules: Sequence[str], *, config_source: str = "config",
               metrics: Optional[Sequence[str]] = None) -> list[AlertRule]:
    """The rules of ``--alert`` and the config's ``alerts:`` (config first, duplicates once); a bad rule is
    a one-line ``ConfigError`` naming where it was written. ``metrics``: the names the server evaluates (a
    rule on another metric could never fire)."""
    rules: dict[str, AlertRule] = {}
    given = [(f"{config_source}: alerts[{i}]", text) for i, text in enumerate(config_rules)]
    given += [("--alert", text) for text in flags]
    for where, text in given:
        if not isinstance(text, str):
            raise ConfigError(f"{where}: an alert rule is a string ({RULE_SYNTAX})")
        try:
            rule = parse_rule(text)
        except ValueError as exc:
            raise ConfigError(f"{where} {text!r}: {exc}") from None
        if metrics is not None and rule.metric not in metrics:
            import difflib

            close = difflib.get_close_matches(rule.metric, list(metrics), n=1) or [
                m for m in metrics if rule.metric in m or m in rule.metric][:1]
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"{where} {text!r}: metric '{rule.metric}' is not evaluated by this server{hint}; "
                              f"evaluated: {', '.join(metrics) or 'none'}")
        rules.setdefault(rule.text, rule)
    return list(rules.values())


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def session_url(base_url: str, session_id: str, *, ui: bool = True) -> str:
    """The UI page of a session (``/sessions/<id>``; ``ui=False``, serve ``--headless``: the API's record)."""
    return f"{base_url.rstrip('/')}{'' if ui else '/api'}/sessions/{quote(session_id, safe='')}"


def alert_body(event: AlertEvent, *, base_url: str = "", run_id: Optional[str] = None,
               ui: bool = True) -> dict[str, Any]:
    """The JSON body POSTed to ``--alert-webhook`` (``schema`` = ``BODY_SCHEMA``; documented in docs/continuous.md)."""
    from ..__about__ import __version__

    figures = f"pass rate {event.pass_rate:.2f} (95% interval {event.lower:.2f}-{event.upper:.2f}) of {event.n} sessions"
    text = (f"agentevals alert {event.state.upper()}: {event.rule} -- {figures} "
            f"in the last {_shown_seconds(event.window_seconds)}")
    return {
        "schema": BODY_SCHEMA,
        "state": event.state,
        "text": text,
        "at": _iso(event.at),
        "rule": {"text": event.rule, "metric": event.metric, "comparison": event.comparison,
                 "threshold": event.threshold, "window_seconds": event.window_seconds,
                 "min_sessions": event.min_sessions},
        "window": {"start": _iso(event.at - event.window_seconds), "end": _iso(event.at),
                   "seconds": event.window_seconds},
        "figures": {"sessions": event.n, "passed": event.passed, "failed": event.n - event.passed,
                    "pass_rate": event.pass_rate, "wilson_lower": event.lower, "wilson_upper": event.upper,
                    "confidence": 0.95},
        "sessions": [{"id": s, **({"url": session_url(base_url, s, ui=ui)} if base_url else {})} for s in event.sessions],
        "links": {**({"ui": f"{base_url.rstrip('/')}/"} if ui else {}),
                  "alerts": f"{base_url.rstrip('/')}/api/alerts"} if base_url else {},
        "run_id": run_id,
        "agentevals_version": __version__,
    }


def _shown_seconds(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


class WebhookSender:
    """POSTs alert bodies to one URL on its own thread, in order, each with a deadline and retries.

        sender = WebhookSender("https://hooks.example/agentevals")
        sender.send({"schema": "agentevals.alert/v1", ...})
        sender.stop()

    An attempt that gets no answer within ``deadline`` seconds, a 408/425/429 or a 5xx is retried after
    ``backoff`` x 2^k seconds (capped at 60; ``Retry-After`` when the answer says so) up to ``attempts``
    tries; any other 4xx is not retried. ``AGENTEVALS_ALERT_WEBHOOK_TOKEN``, when set, is sent as
    ``Authorization: Bearer …``. Logs name the host only: a webhook URL often holds a secret in its path.
    """

    def __init__(self, url: str, *, attempts: int = 4, backoff: float = 1.0, deadline: float = 10.0,
                 max_pending: int = 100) -> None:
        self.url = url
        self.host = urlsplit(url).netloc
        self.attempts = attempts
        self.backoff = backoff
        self.deadline = deadline
        self.delivered = 0
        self.failed = 0
        self.last_error: Optional[str] = None
        self._pending: queue.Queue[Optional[dict[str, Any]]] = queue.Queue(max_pending)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentevals-alert-webhook", daemon=True)
        self._thread.start()

    @staticmethod
    def check_url(url: str, where: str = "--alert-webhook") -> str:
        """``url`` if it is an http(s) URL with a host, else a one-line ``ConfigError``."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"{where}: not an http(s) URL with a host: {parts.scheme or '?'}://{parts.netloc}… "
                              "(say https://hooks.example/path)")
        if parts.password:
            raise ConfigError(f"{where}: the URL carries a password; put a token in AGENTEVALS_ALERT_WEBHOOK_TOKEN "
                              "(sent as 'Authorization: Bearer …') instead")
        return url

    def send(self, body: dict[str, Any]) -> None:
        """Queue ``body`` (when ``max_pending`` bodies wait already, the oldest is dropped, with a log line)."""
        while True:
            try:
                self._pending.put_nowait(body)
                return
            except queue.Full:
                try:
                    self._pending.get_nowait()
                    self.failed += 1
                    log.warning("alert webhook %s: too many undelivered alerts, the oldest is dropped", self.host)
                except queue.Empty:
                    pass

    def pending(self) -> int:
        return self._pending.qsize()

    def stop(self, timeout: float = 5.0) -> None:
        """Deliver what is queued within ``timeout`` seconds, then stop (a retry wait is cut short)."""
        try:
            self._pending.put(None, timeout=timeout)
        except queue.Full:  # still delivering a backlog: what is left is dropped with the process
            pass
        self._thread.join(timeout)
        self._stop.set()
        self._thread.join(1.0)

    def status(self) -> dict[str, Any]:
        return {"host": self.host, "delivered": self.delivered, "failed": self.failed, "pending": self.pending(),
                "last_error": self.last_error}

    def _run(self) -> None:
        while True:
            body = self._pending.get()
            if body is None:
                return
            self._deliver(body)

    def _deliver(self, body: dict[str, Any]) -> None:
        import orjson

        from ..core._http import HttpError, request

        headers = {"Content-Type": "application/json"}
        token = os.environ.get("AGENTEVALS_ALERT_WEBHOOK_TOKEN")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = orjson.dumps(body)
        problem = ""
        for attempt in range(self.attempts):
            wait = min(60.0, self.backoff * 2 ** attempt)
            try:
                answer = request("POST", self.url, body=data, headers=headers, timeout=self.deadline,
                                 deadline=self.deadline, max_bytes=1 << 20)
            except HttpError as exc:
                problem = exc.detail
            else:
                if answer.ok:
                    self.delivered += 1
                    return
                problem = f"HTTP {answer.status} {answer.reason}".strip()
                if answer.status < 500 and answer.status not in (408, 425, 429):
                    break  # the receiver refuses this body: sending it again would not help
                after = answer.headers.get("Retry-After", "")
                if after.strip().isdigit():
                    wait = min(60.0, float(after))
            if attempt + 1 < self.attempts and self._stop.wait(wait):
                break
        self.failed += 1
        self.last_error = problem
        log.warning("alert webhook %s: the %s alert for '%s' was not delivered: %s", self.host, body.get("state"),
                    (body.get("rule") or {}).get("text"), problem)


class AlertMonitor(RunConsumer):
    """Checks every rule after each batch (``run_finished``) and every ``tick`` seconds (``start``).

        monitor = AlertMonitor(rules, state, webhook=WebhookSender(url))
        monitor.start()
        events = monitor.check()      # the AlertEvents this check fired or cleared
        monitor.stop()
    """

    def __init__(self, rules: Sequence[AlertRule], state: ContinuousState, *,
                 webhook: Optional[WebhookSender] = None, otel: Any = None, tick: float = 5.0,
                 webhook_url: Optional[str] = None, base_url: str = "", run_id: Optional[str] = None,
                 ui: bool = True) -> None:
        self.rules = list(rules)
        self.state = state
        self.webhook = webhook
        self.webhook_url = webhook_url
        """Where ``attach`` opens the webhook (when ``webhook`` is not given)."""
        self.otel = otel
        """An ``EvaluationEventEmitter`` (``--emit-otel``): alert events go out through its logger."""
        self.tick = tick
        self.base_url = base_url
        self.run_id = run_id
        self.ui = ui
        """Whether serve has its web UI (session links go to the API's records under ``--headless``)."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._notify: queue.Queue[Optional[AlertEvent]] = queue.Queue()
        self._notifier: Optional[threading.Thread] = None
        if self.rules:
            state.alerting = self

    # -- serve wiring --------------------------------------------------------------------------------

    @classmethod
    def for_serve(cls, options: ServeOptions, settings: EvalSettings, state: ContinuousState) -> AlertMonitor:
        """The rules of ``--alert`` and the config's ``alerts:``, the webhook of ``--alert-webhook``, the
        config's ``alert_webhook`` or ``AGENTEVALS_ALERT_WEBHOOK``; a bad rule or URL is a ``ConfigError``."""
        config_rules: list[str] = []
        config_hook: Optional[str] = None
        source = "config"
        if options.config:
            from ..config.loader import load_config

            loaded = load_config(options.config)
            config_rules, config_hook = list(loaded.settings.alerts), loaded.settings.alert_webhook
            source = str(options.config)
        rules: list[AlertRule] = []
        if config_rules or options.alerts:
            evaluators, _ = settings.prepare()
            rules = load_rules(options.alerts, config_rules, config_source=source,
                               metrics=[e.evaluator.config.name for e in evaluators])
        url, where = options.alert_webhook, "--alert-webhook"
        if not url and os.environ.get("AGENTEVALS_ALERT_WEBHOOK"):
            url, where = os.environ["AGENTEVALS_ALERT_WEBHOOK"], "AGENTEVALS_ALERT_WEBHOOK"
        if not url and config_hook:
            url, where = config_hook, f"{source}: alert_webhook"
        if url:
            WebhookSender.check_url(url, where)
            if not rules:
                log.warning("%s is set but there is no alert rule (--alert or 'alerts:'): nothing will be posted", where)
        return cls(rules, state, webhook_url=url if rules else None, ui=options.ui)

    def attach(self, consumers: list[RunConsumer], *, run_id: Optional[str] = None) -> None:
        """Join the live evaluation's ``consumers`` (after ``StateRecorder``), take the ``--emit-otel``
        emitter found there, open the webhook and start the timer; nothing without rules."""
        if not self.rules:
            return
        from ..report.otel_events import EvaluationEventEmitter

        self.otel = next((c for c in consumers if isinstance(c, EvaluationEventEmitter)), None)
        if self.webhook is None and self.webhook_url:
            self.webhook = WebhookSender(self.webhook_url)
        self.run_id = run_id
        consumers.append(self)
        self.start()

    def announcing(self, on_ready: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        """``on_ready`` that first learns the UI's address for the session links (``AGENTEVALS_PUBLIC_URL``,
        e.g. ``https://evals.example``, when people reach it by another name)."""

        def ready(addresses: dict[str, Any]) -> None:
            host = addresses["host"]
            if host in ("0.0.0.0", "::", ""):
                host = socket.getfqdn()
            shown = f"[{host}]" if ":" in host else host
            self.base_url = os.environ.get("AGENTEVALS_PUBLIC_URL") or f"http://{shown}:{addresses['api_port']}"
            on_ready(addresses)

        return ready

    # -- checking ------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None and self.rules:
            self._notifier = threading.Thread(target=self._send_loop, name="agentevals-alerts-notify", daemon=True)
            self._notifier.start()
            self._thread = threading.Thread(target=self._tick_loop, name="agentevals-alerts", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the timer; deliver what is queued (a few seconds at most)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._notifier is not None:
            self._notify.put(None)
            self._notifier.join(5)
        if self.webhook is not None:
            self.webhook.stop()

    def run_finished(self, run: RunResult) -> None:
        self.check()

    def check(self, now: Optional[float] = None) -> list[AlertEvent]:
        """Evaluate every rule on its window; record, log and send each change. Returns the changes."""
        changes: list[AlertEvent] = []
        with self._lock:
            at = self.state.outcomes.clock() if now is None else now
            for rule in self.rules:
                window = self.state.outcomes.window(rule.metric, rule.window_seconds, now=at)
                with self.state.lock:
                    firing = rule.text in self.state.active
                if not firing and rule.fires(window):
                    changes.append(self._change(rule, window, "firing", at))
                elif firing and rule.clears(window):
                    changes.append(self._change(rule, window, "cleared", at))
        return changes

    def figures(self, now: Optional[float] = None) -> list[dict[str, Any]]:
        """Each rule with its window now: ``{rule, metric, …, state, n, passed, pass_rate, lower, upper}``."""
        out = []
        for rule in self.rules:
            window = self.state.outcomes.window(rule.metric, rule.window_seconds, now=now)
            lower, upper = window.interval()
            with self.state.lock:
                firing = rule.text in self.state.active
            out.append({"rule": rule.text, "metric": rule.metric, "comparison": rule.comparison,
                        "threshold": rule.threshold, "window_seconds": rule.window_seconds,
                        "min_sessions": rule.min_sessions, "state": "firing" if firing else "ok", "n": window.n,
                        "passed": window.passed, "pass_rate": window.pass_rate if window.n else None,
                        "lower": lower, "upper": upper})
        return out

    def _change(self, rule: AlertRule, window: Window, state: Literal["firing", "cleared"], at: float) -> AlertEvent:
        lower, upper = window.interval()
        event = AlertEvent(rule=rule.text, metric=rule.metric, state=state, at=at, window_seconds=rule.window_seconds,
                           n=window.n, passed=window.passed, pass_rate=window.pass_rate, lower=lower, upper=upper,
                           threshold=rule.threshold, sessions=list(window.failed_sessions[:MAX_SESSIONS]),
                           comparison=rule.comparison, min_sessions=rule.min_sessions)
        with self.state.lock:
            self.state.alerts.append(event)
            if state == "firing":
                self.state.active[rule.text] = event
            else:
                self.state.active.pop(rule.text, None)
        log.warning("alert %s: %s: pass rate %.2f (95%% interval %.2f-%.2f) of %d sessions in the last %s",
                    state, rule.text, event.pass_rate, lower, upper, window.n, rule.window)
        if self.webhook is not None or self.otel is not None:
            self._notify.put(event)
        return event

    def _tick_loop(self) -> None:
        while not self._stop.wait(self.tick):
            try:
                self.check()
            except Exception:  # a bug must not end the timer: the next tick tries again
                log.exception("checking alert rules failed")

    def _send_loop(self) -> None:
        while True:
            event = self._notify.get()
            if event is None:
                return
            if self.otel is not None:
                try:
                    emit_otel(self.otel, event)
                except Exception as exc:  # the exporter's problem must not stop the webhook
                    log.warning("alert OTel event not emitted: %s: %s", type(exc).__name__, exc)
            if self.webhook is not None:
                self.webhook.send(alert_body(event, base_url=self.base_url, run_id=self.run_id, ui=self.ui))


def otel_attributes(event: AlertEvent) -> dict[str, Any]:
    """The attributes of an ``agentevals.alert`` event."""
    return {"gen_ai.evaluation.name": event.metric, "agentevals.alert.rule": event.rule,
            "agentevals.alert.state": event.state, "agentevals.alert.threshold": event.threshold,
            "agentevals.alert.window_seconds": event.window_seconds, "agentevals.alert.sessions": event.n,
            "agentevals.alert.passed": event.passed, "agentevals.alert.pass_rate": event.pass_rate,
            "agentevals.alert.wilson_lower": event.lower, "agentevals.alert.wilson_upper": event.upper}


def emit_otel(emitter: Any, event: AlertEvent) -> None:
    """Send ``event`` through an ``EvaluationEventEmitter``'s logger (no parent span: an alert is about a
    window, not a turn) and flush it."""
    emitter.logger.emit(event_name=OTEL_EVENT, attributes=otel_attributes(event))
    emitter.provider.force_flush(5_000)


def add_alert_routes(app: FastAPI, ctx: ApiContext) -> None:
    """``GET /api/alerts``: ``{rules, active, recent, webhook}`` (``recent`` newest first, ``limit`` of them)."""
    import asyncio

    from .http_api import ok

    @app.get("/api/alerts", summary="Alert rules with their windows now, alerts firing, alerts fired and cleared")
    async def alerts(limit: int = 50) -> dict[str, Any]:
        state = ctx.continuous
        monitor: Optional[AlertMonitor] = state.alerting
        rules = await asyncio.to_thread(monitor.figures) if monitor is not None else []
        with state.lock:
            active = [a.as_json() for a in state.active.values()]
            recent = [a.as_json() for a in reversed(state.alerts)][:max(0, min(limit, 500))]
        webhook = monitor.webhook.status() if monitor is not None and monitor.webhook is not None else None
        return ok({"rules": rules, "active": active, "recent": recent, "webhook": webhook})
