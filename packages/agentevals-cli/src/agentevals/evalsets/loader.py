"""Read Google ADK EvalSet JSON (and the legacy ``.test.json`` list) without importing google-adk.

Top-level keys are snake_case as ADK writes them; inside cases both snake_case and camelCase are
accepted, like ADK. ``intermediate_data`` may be ``{tool_uses, tool_responses}`` or ``{invocation_events}``.
Content objects (``{"role", "parts": [{"text"}]}``) become plain text: text parts joined with newlines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from ..core._names import snake_case
from ..errors import InputFileError
from ..protocol import IntermediateStepData, InvocationData, ToolCallData, ToolResponseData
from ..traces.readers._json import load_json_file
from .model import EvalCase, EvalSet

__all__ = ["case_keys", "content_text", "load_eval_set", "parse_eval_set"]

# Values under these keys are user data (tool args, tool results, state): their keys are kept as written.
_OPAQUE = {"args", "response", "state", "final_session_state", "metadata"}


def _snake(data: Any) -> Any:
    """Recursively turn camelCase keys into snake_case, leaving user data (``_OPAQUE``) untouched."""
    if isinstance(data, dict):
        out = {}
        for key, value in data.items():
            key = snake_case(key) if isinstance(key, str) else key
            out[key] = value if key in _OPAQUE else _snake(value)
        return out
    if isinstance(data, list):
        return [_snake(v) for v in data]
    return data


def case_keys(raw: Any) -> Any:
    """snake_case a case's own keys and its structural values; extra (user) keys are kept as written."""
    if not isinstance(raw, dict):
        return raw
    out = {}
    for key, value in raw.items():
        key = snake_case(key) if isinstance(key, str) else key
        out[key] = _snake(value) if key in _CASE_KEYS and key != "final_session_state" else value
    return out


def content_text(content: Any) -> Optional[str]:
    """ADK Content → text (text parts joined with newlines); strings pass through."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        texts = [p["text"] for p in content.get("parts") or () if isinstance(p, dict) and p.get("text")]
        return "\n".join(texts) if texts else ("" if "parts" in content else None)
    return None


def _content(raw: Any, where: str) -> Optional[str]:
    """``content_text`` for a field of the file: anything but text or a Content object is an error."""
    if raw is not None and not isinstance(raw, (str, dict)):
        raise InputFileError(f'{where} must be text or a Content object ({{"role", "parts"}}), got {_show(raw)}')
    if isinstance(raw, dict):
        parts = raw.get("parts")
        if parts is not None and not isinstance(parts, list):
            raise InputFileError(f"{where}.parts must be a list, got {_show(parts)}")
        for i, part in enumerate(parts or ()):
            if not isinstance(part, dict):
                raise InputFileError(f"{where}.parts[{i}] must be an object, got {_show(part)}")
            if part.get("text") is not None and not isinstance(part["text"], str):
                raise InputFileError(f"{where}.parts[{i}].text must be text, got {_show(part['text'])}")
    return content_text(raw)


def _show(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _items(raw: Any, where: str) -> list[Any]:
    """A list field that may be absent or null."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputFileError(f"{where} must be a list, got {_show(raw)}")
    return raw


def _tool_call(raw: Any, where: str, *, name_key: str = "name", args_key: str = "args") -> ToolCallData:
    if not isinstance(raw, dict):
        raise InputFileError(f"{where} must be an object with '{name_key}' and '{args_key}', got {_show(raw)}")
    name, args = raw.get(name_key), raw.get(args_key)
    if not isinstance(name, str) or not name:
        raise InputFileError(f"{where} has no '{name_key}'")
    if args is not None and not isinstance(args, dict):
        raise InputFileError(f"{where}.{args_key} must be an object, got {_show(args)}")
    call_id = raw.get("id")
    return ToolCallData(name=name, args=args or {}, id=call_id if isinstance(call_id, str) else None)


def _tool_response(raw: Any, where: str) -> ToolResponseData:
    if not isinstance(raw, dict):
        raise InputFileError(f"{where} must be an object with 'name' and 'response', got {_show(raw)}")
    name, value, resp_id = raw.get("name"), raw.get("response"), raw.get("id")
    return ToolResponseData(
        name=name if isinstance(name, str) else "", id=resp_id if isinstance(resp_id, str) else None,
        output=value if isinstance(value, str) else json.dumps(value, ensure_ascii=False) if value is not None else "",
        response=value if isinstance(value, (dict, list)) else None,
    )


def load_eval_set(path: str | Path) -> EvalSet:
    """Load an eval set file; ``InputFileError`` names the file and what is wrong."""
    path = Path(path)
    return parse_eval_set(load_json_file(path), str(path))


def parse_eval_set(data: Any, source: str = "<eval set>") -> EvalSet:
    if isinstance(data, list):
        if not data:
            raise InputFileError(f"{source}: not an ADK eval set: an empty list")
        return _legacy(data, source)
    if not isinstance(data, dict):
        raise InputFileError(f"{source}: not an ADK eval set: expected a JSON object with 'eval_cases'")
    if "resourceSpans" in data or "data" in data or "batches" in data:
        raise InputFileError(f"{source}: this is a trace file, not an eval set (pass traces as arguments)")
    raw_cases = data.get("eval_cases", data.get("evalCases"))
    if raw_cases is not None and not isinstance(raw_cases, list):
        raise InputFileError(f"{source}: not an ADK eval set: 'eval_cases' must be a list, got {_show(raw_cases)}")
    if not isinstance(raw_cases, list):
        found = ", ".join(list(data)[:6]) or "an empty object"
        raise InputFileError(f"{source}: not an ADK eval set: no 'eval_cases' list (found {found})")
    cases = [_case(case_keys(c), source, i) for i, c in enumerate(raw_cases)]
    seen: set[str] = set()
    for case in cases:
        if case.eval_id in seen:
            raise InputFileError(f"{source}: duplicate eval_id '{case.eval_id}'")
        seen.add(case.eval_id)
    return EvalSet(
        eval_set_id=str(data.get("eval_set_id", data.get("evalSetId", Path(source).stem))),
        eval_cases=cases,
        name=data.get("name"),
        description=data.get("description"),
        source=source,
    )


_CASE_KEYS = {"eval_id", "conversation", "conversation_scenario", "session_input", "creation_timestamp",
              "rubrics", "final_session_state"}


def _case(raw: Any, source: str, index: int) -> EvalCase:
    where = f"{source}: eval_cases[{index}]"
    if not isinstance(raw, dict):
        raise InputFileError(f"{where} is not an object")
    eval_id = raw.get("eval_id")
    if eval_id is None:
        raise InputFileError(f"{where} has no 'eval_id'")
    if not isinstance(eval_id, str) or not eval_id:
        raise InputFileError(f"{where}.eval_id must be a non-empty string, got {_show(eval_id)}")
    conversation = raw.get("conversation")
    if conversation is None and raw.get("conversation_scenario") is None:
        raise InputFileError(f"{where} ('{eval_id}') has neither 'conversation' nor 'conversation_scenario'")
    if conversation is not None and not isinstance(conversation, list):
        raise InputFileError(f"{where} ('{eval_id}'): 'conversation' must be a list")
    for key, kind in (("session_input", dict), ("conversation_scenario", dict), ("rubrics", list)):
        if raw.get(key) is not None and not isinstance(raw[key], kind):
            expected = "an object" if kind is dict else "a list"
            raise InputFileError(f"{where} ('{eval_id}'): '{key}' must be {expected}, got {_show(raw[key])}")
    turns = [_invocation(turn, f"{where}.conversation[{i}]") for i, turn in enumerate(conversation or [])]
    return EvalCase(
        eval_id=eval_id,
        conversation=turns,
        session_input=raw.get("session_input"),
        rubrics=list(raw.get("rubrics") or []),
        conversation_scenario=raw.get("conversation_scenario"),
        metadata={k: v for k, v in raw.items() if k not in _CASE_KEYS},
        raw=raw,
    )


def _invocation(raw: Any, where: str) -> InvocationData:
    if not isinstance(raw, dict):
        raise InputFileError(f"{where} is not an object")
    if "user_content" not in raw:
        raise InputFileError(f"{where} has no 'user_content'")
    calls: list[ToolCallData] = []
    responses: list[ToolResponseData] = []
    data = raw.get("intermediate_data") or {}
    if not isinstance(data, dict):
        raise InputFileError(f"{where}: 'intermediate_data' must be an object")
    steps = f"{where}.intermediate_data"
    for i, call in enumerate(_items(data.get("tool_uses"), f"{steps}.tool_uses")):
        calls.append(_tool_call(call, f"{steps}.tool_uses[{i}]"))
    for i, resp in enumerate(_items(data.get("tool_responses"), f"{steps}.tool_responses")):
        responses.append(_tool_response(resp, f"{steps}.tool_responses[{i}]"))
    for i, event in enumerate(_items(data.get("invocation_events"), f"{steps}.invocation_events")):
        at = f"{steps}.invocation_events[{i}]"
        if not isinstance(event, dict):
            raise InputFileError(f"{at} must be an object, got {_show(event)}")
        content = event.get("content") or {}
        if not isinstance(content, dict):
            raise InputFileError(f"{at}.content must be an object, got {_show(content)}")
        for j, part in enumerate(_items(content.get("parts"), f"{at}.content.parts")):
            if not isinstance(part, dict):
                raise InputFileError(f"{at}.content.parts[{j}] must be an object, got {_show(part)}")
            if part.get("function_call") is not None:
                calls.append(_tool_call(part["function_call"], f"{at}.content.parts[{j}].function_call"))
            if part.get("function_response") is not None:
                resp = part["function_response"]
                if not isinstance(resp, dict):
                    raise InputFileError(f"{at}.content.parts[{j}].function_response must be an object, got {_show(resp)}")
                value = resp.get("response")
                responses.append(ToolResponseData(
                    name=resp.get("name") if isinstance(resp.get("name"), str) else "",
                    id=resp.get("id") if isinstance(resp.get("id"), str) else None,
                    output=json.dumps(value, ensure_ascii=False) if value is not None else "",
                    response=value if isinstance(value, (dict, list)) else None,
                ))
    user = _content(raw.get("user_content"), f"{where}.user_content")
    return InvocationData(
        invocation_id=str(raw.get("invocation_id") or ""),
        user_content=user or "",
        final_response=_content(raw.get("final_response"), f"{where}.final_response"),
        intermediate_steps=IntermediateStepData(tool_calls=calls, tool_responses=responses),
    )


def _legacy(items: list[Any], source: str) -> EvalSet:
    """ADK's legacy ``.test.json``: a list of ``{query, expected_tool_use, reference}`` turns (one case)."""
    turns = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "query" not in item:
            raise InputFileError(f"{source}: not an ADK eval set: item [{i}] has no 'query' (expected 'eval_cases')")
        uses = _items(item.get("expected_tool_use"), f"{source}: [{i}].expected_tool_use")
        calls = [_tool_call(t, f"{source}: [{i}].expected_tool_use[{j}]", name_key="tool_name", args_key="tool_input")
                 for j, t in enumerate(uses)]
        turns.append(InvocationData(invocation_id=f"turn-{i + 1}", user_content=item["query"],
                                    final_response=item.get("reference"),
                                    intermediate_steps=IntermediateStepData(tool_calls=calls)))
    return EvalSet(eval_set_id=Path(source).stem, eval_cases=[EvalCase(eval_id=Path(source).stem, conversation=turns)],
                   source=source)
