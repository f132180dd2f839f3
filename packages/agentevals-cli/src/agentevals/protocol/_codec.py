"""Encode EvalInputs for a chosen protocol version and decode EvalResults strictly, with negotiation."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import ValidationError

from ..core._json import dumps
from ..core._validation import format_validation_error
from ..errors import ProtocolError, ProtocolVersionError
from ._models import EvalInput, EvalResult, EvalStatus
from ._versions import PROTOCOL_VERSION, SUPPORTED_VERSIONS, load_schema, parse_version

__all__ = ["MAX_DEPTH", "decode_result", "encode_input", "encode_line", "negotiate", "result_warnings",
           "strip_to_version"]

MAX_DEPTH = 64
"""How deeply an EvalResult may nest (objects and arrays). Deeper ``details`` could not be stored or written
to a JSON report (the serialisers recurse), so such a result is refused with one line, as an ERROR row."""
_SURROGATE = re.compile("[\ud800-\udfff]")

def negotiate(theirs: object, ours: str = PROTOCOL_VERSION, *, peer: str = "the evaluator") -> str:
    """Return the version both sides speak (same MAJOR, lower MINOR), or raise ``ProtocolVersionError``.

    >>> negotiate("1.9")
    '1.1'
    """
    try:
        their_major, their_minor = parse_version(theirs)
    except ValueError as exc:
        raise ProtocolVersionError(str(exc)) from None
    our_major, our_minor = parse_version(ours)
    if their_major != our_major:
        upgrade = "agentevals-cli" if their_major > our_major else f"{peer} (agentevals-evaluator-sdk)"
        raise ProtocolVersionError(
            f"unsupported protocol_version {theirs} from {peer}: agentevals-cli speaks "
            f"{SUPPORTED_VERSIONS[0]} to {SUPPORTED_VERSIONS[-1]}; upgrade {upgrade} so both speak "
            f"major {max(their_major, our_major)}"
        )
    return f"{our_major}.{min(our_minor, their_minor)}"


def strip_to_version(payload: dict[str, Any], version: str) -> dict[str, Any]:
    """Drop from an EvalInput dict every field the ``version`` schema does not define (in place).

    This is how a feature of a newer minor is never sent to a peer that declared an older one.
    """
    schema = load_schema("eval_input", version)
    defs = schema.get("$defs", {})

    def prune(value: Any, node: dict[str, Any]) -> None:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        for option in node.get("anyOf", ()):
            prune(value, option)
        if isinstance(value, dict) and "properties" in node:
            props = node["properties"]
            for key in [k for k in value if k not in props]:
                del value[key]
            for key, sub in props.items():
                if key in value:
                    prune(value[key], sub)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for item in value:
                prune(item, node["items"])

    prune(payload, schema)
    return payload


def _payload(eval_input: EvalInput, version: str, fields: dict[str, Any]) -> dict[str, Any]:
    payload = eval_input.model_dump(mode="json")
    payload["protocol_version"] = version
    payload.update(fields)
    if version != PROTOCOL_VERSION:  # the newest version defines every field: nothing to strip
        strip_to_version(payload, version)
    return payload


def encode_input(eval_input: EvalInput, version: str = PROTOCOL_VERSION) -> str:
    """Serialise an EvalInput as the JSON document for a peer speaking ``version``: compact, UTF-8 as it is, NaN
    and infinities null (pydantic before 2.5 leaves them in ``model_dump(mode="json")``; JSON has no ``NaN``)."""
    return dumps(_payload(eval_input, version, {})).decode()


def encode_line(eval_input: EvalInput, version: str = PROTOCOL_VERSION, **fields: Any) -> bytes:
    """``encode_input`` as one compact UTF-8 line (newline included), with ``fields`` (already JSON values, e.g.
    ``request_id``) set on top: what a persistent worker reads once per evaluation.

    The same document, written by orjson (``core._json``): a tenth of ``json.dumps``'s time, the largest part of
    the host's cost per evaluation. What orjson refuses (an integer beyond 64 bits, a lone surrogate) goes the
    ``json.dumps`` way, which writes the first and fails on the second.
    """
    payload = _payload(eval_input, version, fields)
    return dumps(payload) + b"\n"


def decode_result(
    text: str | bytes | dict[str, Any],
    *,
    threshold: float,
    n_invocations: int,
    sent_version: str = PROTOCOL_VERSION,
    name: str = "evaluator",
) -> EvalResult:
    """Parse and validate an evaluator's EvalResult.

    A result without ``protocol_version`` is read as 1.0; another MAJOR is refused; a newer MINOR is
    accepted with unknown fields ignored. Raises ``ProtocolError`` naming the offending field and value.
    Scores are read as the 0.2 SDK read them (a numeric string or a boolean is a number); what is odd but
    valid is reported by ``result_warnings``, not refused.
    """
    if isinstance(text, dict):
        data: Any = text
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProtocolError(
                f"{name} wrote invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
        except RecursionError:
            raise ProtocolError(f"{name} wrote JSON nested too deeply to read (limit: {MAX_DEPTH} levels)") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"{name} wrote a JSON {type(data).__name__}, expected an EvalResult object")
    data = _checked(data, name)
    version = data.get("protocol_version") or "1.0"
    negotiate(version, sent_version, peer=name)
    score = data.get("score")
    if isinstance(score, float) and not math.isfinite(score):
        raise ProtocolError(f"{name} returned an invalid EvalResult: score must be finite (got {score!r})")
    try:
        result = EvalResult.model_validate(data)
    except ValidationError as exc:
        raise ProtocolError(f"{name} returned an invalid EvalResult: {format_validation_error(exc)}") from None
    result.protocol_version = version
    return result


def _checked(data: dict[str, Any], name: str) -> dict[str, Any]:
    """``data`` with its text made storable, or ``ProtocolError`` when it nests deeper than ``MAX_DEPTH``.

    A lone surrogate (valid JSON: ``"\\ud800"``) cannot be encoded as UTF-8, so no store, report or terminal
    could take it: each becomes U+FFFD. Walked without recursion, so any depth is measured safely; a
    result with nothing to replace is returned as it is (no copy).
    """
    found = False
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            found = found or _SURROGATE.search(value) is not None
            continue
        if isinstance(value, dict):
            children = [*value.keys(), *value.values()]
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > MAX_DEPTH:
            raise ProtocolError(f"{name} returned an EvalResult nested more than {MAX_DEPTH} levels deep "
                                "(flatten its details)")
        stack.extend((child, depth + 1) for child in children)
    return _replace_surrogates(data) if found else data


def _replace_surrogates(value: Any) -> Any:
    """A copy of ``value`` with each lone surrogate replaced by U+FFFD (depth already bounded by ``_checked``)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def result_warnings(result: EvalResult, *, threshold: float, n_invocations: int) -> list[str]:
    """What is odd but kept in a valid result, one line each (shown in the result's row).

    An explicit PASSED/FAILED is the evaluator's decision (seed: derived from score vs threshold only when
    omitted), so it stands even when the score says otherwise; a ``per_invocation_scores`` list of another
    length than the invocations keeps the overall score.
    """
    warnings = []
    if result.score is not None and result.status in (EvalStatus.PASSED, EvalStatus.FAILED):
        passed = result.score >= threshold
        if passed != (result.status == EvalStatus.PASSED):
            warnings.append(
                f"status {result.status.value} set by the evaluator overrides score {result.score:g} vs "
                f"threshold {threshold:g} (which says {'PASSED' if passed else 'FAILED'})"
            )
    if result.per_invocation_scores and len(result.per_invocation_scores) != n_invocations:
        warnings.append(
            f"{len(result.per_invocation_scores)} per_invocation_scores for {n_invocations} invocations "
            "(kept as given; they do not line up with the turns)"
        )
    return warnings
