"""Session filters: the small predicate language of ``filter:`` / ``--filter``.

Example::

    flt = parse_filter('attr.deployment.environment == "prod" and (duration > 2s or error)')
    flt.matches(case)                 # True: evaluated; False: counted as filtered out
    FilterAdmission(flt).skip(case, evaluator)   # None or Skip("filtered_out", ...)

Grammar (keywords are lower case; ``#`` has no meaning)::

    expr       := or_expr
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | "(" expr ")" | test
    test       := FIELD [ OP value | "in" list | "not" "in" list | "contains" value ]
    OP         := "==" | "!=" | "<" | "<=" | ">" | ">="
    list       := "[" [value ("," value)*] "]"
    value      := "string" | 'string' | NUMBER | DURATION (150ms, 2s, 1.5m, 1h, 1d) | true | false

Fields (a session is one case: a trace, or the traces of one conversation):

``service``      ``service.name`` of the traces' resources
``agent``        the agent name the converter found (``gen_ai.agent.name``, ADK's agent)
``name``         span names
``attr.KEY``     a span attribute (``attr.deployment.environment``, ``attr.gen_ai.request.model``)
``resource.KEY`` a resource attribute (``resource.service.version``)
``duration``     seconds from the session's first span start to its last span end (``duration > 2s``)
``error``        true when a span ended with status ERROR; ``status`` is ``"error"`` or ``"ok"``
``trace_id``, ``session_id``, ``turns`` (number of agent turns)

A field may have several values (one per span or trace): a test holds when **any** value satisfies it, and
a missing value never does (so ``attr.env != "prod"`` needs some span that has ``env``; write
``not attr.env == "prod"`` for "no span says prod"). A bare field tests truth: ``error``,
``attr.retry`` (present and not false/0/empty). Numbers compare as numbers (a numeric string
attribute too); ``contains`` is a substring test on strings and a member test on list attributes.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from ..errors import ConfigError
from .admission import Skip

if TYPE_CHECKING:
    from ..evaluators.base import BaseEvaluator
    from .grouping import Case

__all__ = ["FIELDS", "Filter", "FilterAdmission", "FilterError", "filter_needs_spans", "parse_filter"]

FIELDS = ("service", "agent", "name", "duration", "error", "status", "trace_id", "session_id", "turns")
"""The plain fields; ``attr.KEY`` and ``resource.KEY`` name attributes."""
_SPAN_FIELDS = {"name", "duration", "error", "status"}
"""Fields read from the raw spans (the engine keeps them when the filter needs them)."""

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<duration>\d+(?:\.\d+)?(?:ms|s|m|h|d)\b)
  | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<op>==|!=|<=|>=|<|>|=)
  | (?P<punct>[()\[\],])
  | (?P<word>[A-Za-z_][A-Za-z0-9_.\-/:]*)
""", re.VERBOSE)
_KEYWORDS = {"and", "or", "not", "in", "contains", "true", "false"}


class FilterError(ConfigError):
    """A filter expression that does not parse: one line with the column (1-based)."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    column: int
    value: Any = None


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if found is None:
            raise FilterError(f"unexpected character {text[pos]!r}", pos + 1)
        kind, raw = found.lastgroup or "", found.group()
        if kind == "string":
            value: Any = re.sub(r"\\(.)", r"\1", raw[1:-1])
        elif kind == "duration":
            unit = "ms" if raw.endswith("ms") else raw[-1]
            value = float(raw[: -len(unit)]) * _UNITS[unit]
        elif kind == "number":
            value = float(raw) if any(c in raw for c in ".eE") else int(raw)
        elif kind == "op" and raw == "=":
            raise FilterError("'=' is not a comparison: use '=='", pos + 1)
        elif kind == "word" and raw in _KEYWORDS:
            kind = raw
            value = {"true": True, "false": False}.get(raw)
        else:
            value = raw
        if kind != "space":
            out.append(_Token(kind, raw, pos + 1, value))
        pos = found.end()
    out.append(_Token("end", "", len(text) + 1))
    return out


Predicate = Callable[["_Facts"], bool]


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.span_fields = False

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def take(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def fail(self, message: str, token: Optional[_Token] = None) -> FilterError:
        token = token or self.peek()
        return FilterError(message, token.column)

    def parse(self) -> Predicate:
        if self.peek().kind == "end":
            raise self.fail("empty expression")
        pred = self.or_expr()
        if self.peek().kind != "end":
            raise self.fail(f"expected 'and', 'or' or the end, found {self.peek().text!r}")
        return pred

    def or_expr(self) -> Predicate:
        parts = [self.and_expr()]
        while self.peek().kind == "or":
            self.take()
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else (lambda f: any(p(f) for p in parts))

    def and_expr(self) -> Predicate:
        parts = [self.not_expr()]
        while self.peek().kind == "and":
            self.take()
            parts.append(self.not_expr())
        return parts[0] if len(parts) == 1 else (lambda f: all(p(f) for p in parts))

    def not_expr(self) -> Predicate:
        token = self.peek()
        if token.kind == "not":
            self.take()
            inner = self.not_expr()
            return lambda f: not inner(f)
        if token.kind == "punct" and token.text == "(":
            self.take()
            inner = self.or_expr()
            closing = self.take()
            if closing.text != ")":
                raise self.fail("expected ')'" + (f", found {closing.text!r}" if closing.kind != "end" else ""), closing)
            return inner
        return self.test()

    def test(self) -> Predicate:
        token = self.take()
        if token.kind != "word":
            shown = "the end" if token.kind == "end" else repr(token.text)
            raise self.fail(f"expected a field (service, agent, attr.KEY, duration, error, …), found {shown}", token)
        getter = self.field(token)
        nxt = self.peek()
        if nxt.kind == "op":
            self.take()
            literal = self.value(after=nxt.text)
            return _compare(getter, nxt.text, literal)
        if nxt.kind == "in" or (nxt.kind == "not" and self.tokens[self.pos + 1].kind == "in"):
            negate = nxt.kind == "not"
            self.pos += 2 if negate else 1
            options = self.list_value()
            found: Predicate = lambda f: any(_equal(v, o) for v in getter(f) for o in options)  # noqa: E731
            return (lambda f: not found(f)) if negate else found
        if nxt.kind == "contains":
            self.take()
            literal = self.value(after="contains")
            return lambda f: any(_contains(v, literal) for v in getter(f))
        return lambda f: any(_truthy(v) for v in getter(f))

    def field(self, token: _Token) -> Callable[[_Facts], list[Any]]:
        name = token.text
        for prefix in ("attr.", "resource."):
            if name.startswith(prefix):
                key = name[len(prefix):]
                if not key:
                    raise self.fail(f"'{prefix}' needs an attribute key, e.g. {prefix}deployment.environment", token)
                if prefix == "attr.":
                    self.span_fields = True
                    return lambda f: f.attribute(key)
                return lambda f: f.resource(key)
        if name not in FIELDS:
            import difflib  # only for a field name that is not known

            close = difflib.get_close_matches(name, [*FIELDS, "attr.", "resource."], n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self.fail(f"unknown field {name!r}{hint}; fields: {', '.join(FIELDS)}, attr.KEY, resource.KEY", token)
        self.span_fields = self.span_fields or name in _SPAN_FIELDS
        return lambda f: f.get(name)

    def value(self, *, after: str) -> Any:
        token = self.take()
        if token.kind in ("string", "number", "duration", "true", "false"):
            return token.value
        shown = "the end" if token.kind == "end" else repr(token.text)
        hint = " (quote strings: \"prod\")" if token.kind == "word" else ""
        raise self.fail(f"expected a value after '{after}', found {shown}{hint}", token)

    def list_value(self) -> list[Any]:
        opening = self.take()
        if opening.text != "[":
            raise self.fail("expected '[' after 'in'", opening)
        items: list[Any] = []
        if self.peek().text == "]":
            self.take()
            return items
        while True:
            items.append(self.value(after="[" if not items else ","))
            sep = self.take()
            if sep.text == "]":
                return items
            if sep.text != ",":
                raise self.fail("expected ',' or ']' in the list", sep)


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _equal(value: Any, literal: Any) -> bool:
    if isinstance(literal, bool) or isinstance(value, bool):
        return value is literal or (isinstance(value, str) and value.lower() == str(literal).lower())
    if isinstance(literal, (int, float)):
        number = _number(value)
        return number is not None and math.isclose(number, float(literal), rel_tol=0, abs_tol=1e-12)
    if isinstance(value, (int, float)):
        return _number(literal) is not None and float(value) == _number(literal)
    return isinstance(value, str) and value == literal


def _compare(getter: Callable[[_Facts], list[Any]], op: str, literal: Any) -> Predicate:
    if op in ("==", "!="):
        equal = op == "=="
        return lambda f: any(_equal(v, literal) == equal for v in getter(f))
    order: dict[str, Callable[[Any, Any], bool]] = {
        "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
    check = order[op]

    def ordered(f: _Facts) -> bool:
        for v in getter(f):
            if isinstance(literal, str):
                if isinstance(v, str) and check(v, literal):
                    return True
                continue
            a, b = _number(v), _number(literal)
            if a is not None and b is not None and check(a, b):
                return True
        return False

    return ordered


def _contains(value: Any, literal: Any) -> bool:
    if isinstance(value, str):
        return str(literal) in value
    if isinstance(value, (list, tuple)):
        return any(_equal(item, literal) for item in value)
    return False


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no")
    return bool(value)


class _Facts:
    """What a filter reads of one case, computed on demand."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self._spans: Optional[list[Any]] = None

    def spans(self) -> list[Any]:
        if self._spans is None:
            self._spans = [s for t in self.case.traces if t.trace is not None for s in t.trace.spans]
        return self._spans

    def attribute(self, key: str) -> list[Any]:
        spans = self.spans()
        if spans:
            return [s.attributes[key] for s in spans if key in s.attributes]
        # The raw spans were dropped (a run that did not keep them): the root attributes the converter kept.
        return [t.attributes[key] for t in self.case.traces if key in t.attributes]

    def resource(self, key: str) -> list[Any]:
        found = [t.resource[key] for t in self.case.traces if key in t.resource]
        found += [s.resource[key] for s in self.spans() if key in s.resource]
        return list(dict.fromkeys(v for v in found if not isinstance(v, (list, dict)))) or found

    def get(self, name: str) -> list[Any]:
        traces = self.case.traces
        if name == "service":
            return self.resource("service.name")
        if name == "agent":
            return [t.agent_name for t in traces if t.agent_name]
        if name == "name":
            return [s.name for s in self.spans()]
        if name == "trace_id":
            return [t.trace_id for t in traces]
        if name == "session_id":
            return [t.session_id for t in traces if t.session_id]
        if name == "turns":
            return [sum(len(t.invocations) for t in traces)]
        spans = self.spans()
        if name == "duration":
            timed = [s for s in spans if s.end_ns and s.start_ns]
            if not timed:
                return []
            return [(max(s.end_ns for s in timed) - min(s.start_ns for s in timed)) / 1e9]
        failed = any(s.status_code == "ERROR" for s in spans)
        return [failed] if name == "error" else ["error" if failed else "ok"]


@dataclass(frozen=True)
class Filter:
    """A parsed filter: ``matches(case)``, and whether it reads the raw spans (``needs_spans``)."""

    text: str
    predicate: Predicate
    needs_spans: bool

    def matches(self, case: Case) -> bool:
        return bool(self.predicate(_Facts(case)))


def parse_filter(text: str, *, label: str = "filter") -> Filter:
    """Parse an expression (grammar in the module docstring); ``FilterError`` (a ``ConfigError``) is one line:
    ``filter 'attr.env = "prod"': column 10: '=' is not a comparison: use '=='``."""
    try:
        parser = _Parser(text)
        predicate = parser.parse()
    except FilterError as exc:
        where = f"{label} {text!r}" if label else repr(text)
        raise FilterError(f"{where}: column {exc.column}: {exc}", exc.column) from None
    return Filter(text=text, predicate=predicate, needs_spans=parser.span_fields)


def filter_needs_spans(text: Optional[str]) -> bool:
    """Whether a run with this ``filter`` must keep the raw spans (False for none or a bad one: it fails later)."""
    if not text:
        return False
    try:
        return parse_filter(text).needs_spans
    except FilterError:
        return False


class FilterAdmission:
    """The ``filtered_out`` admission. The pool asks about one case's evaluators in a row, so the last
    case's match is remembered (weakly: the case is not kept alive); a race only recomputes the same answer."""

    def __init__(self, flt: Filter) -> None:
        self.filter = flt
        self._last: tuple[Any, bool] = (None, True)

    def __getstate__(self) -> dict[str, Any]:  # shipped to Ray actors with the run's options: no weakref
        return {"filter": self.filter, "_last": (None, True)}

    def skip(self, case: Case, evaluator: BaseEvaluator) -> Optional[Skip]:
        ref, matched = self._last
        if ref is None or ref() is not case:
            matched = self.filter.matches(case)
            self._last = (weakref.ref(case), matched)
        return None if matched else Skip("filtered_out", f"filtered out (filter: {self.filter.text})")
