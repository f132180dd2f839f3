"""Read Google ADK EvalSet JSON (and the legacy ``.test.json`` list) without importing google-adk.

Top-level keys are snake_case as ADK writes them; inside cases both snake_case and camelCase are
accepted, like ADK. ``intermediate_data`` may be ``{tool_uses, tool_responses}`` or ``{invocation_events}``.
Content objects (``{"role", "parts": [{"text"}]}``) become plain text: text parts joined with newlines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

from ..errors import InputFileError
from ..protocol import IntermediateStepData, InvocationData, ToolCallData, ToolResponseData
from ..traces.readers._json import load_json_file
from .model import EvalCase, EvalSet

__all__ = ["load_eval_set", "parse_eval_set"]

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


# Values under these keys are user data (tool args, tool results, state): their keys are kept as written.
_OPAQUE = {"args", "response", "state", "final_session_state", "metadata"}


def _snake(data: Any) -> Any:
    """Recursively turn camelCase keys into snake_case, leaving user data (``_OPAQUE``) untouched."""
    if isinstance(data, dict):
        out = {}
        for key, value in data.items():
            key = _CAMEL.sub("_", key).lower() if isinstance(key, str) else key
            out[key] = value if key in _OPAQUE else _snake(value)
        return out
    if isinstance(data, list):
        return [_snake(v) for v in data]
    return data


def _case_keys(raw: Any) -> Any:
    """snake_case a case's own keys and its structural values; extra (user) keys are kept as written."""
    if not isinstance(raw, dict):
        return raw
    out = {}
    for key, value in raw.items():
        key = _CAMEL.sub("_", key).lower() if isinstance(key, str) else key
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


def load_eval_set(path: str | Path) -> EvalSet:
    """Load an eval set file; ``InputFileError`` names the file and what is wrong."""
    path = Path(path)
    return parse_eval_set(load_json_file(path), str(path))


def parse_eval_set(data: Any, source: str = "<eval set>") -> EvalSet:
    if isinstance(data, list):
        return _legacy(data, source)
    if not isinstance(data, dict):
        raise InputFileError(f"{source}: not an ADK eval set: expected a JSON object with 'eval_cases'")
    if "resourceSpans" in data or "data" in data or "batches" in data:
        raise InputFileError(f"{source}: this is a trace file, not an eval set (pass traces as arguments)")
    raw_cases = data.get("eval_cases", data.get("evalCases"))
    if not isinstance(raw_cases, list):
        found = ", ".join(list(data)[:6]) or "an empty object"
        raise InputFileError(f"{source}: not an ADK eval set: no 'eval_cases' list (found {found})")
    cases = [_case(_case_keys(c), source, i) for i, c in enumerate(raw_cases)]
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
    if not isinstance(eval_id, str) or not eval_id:
        raise InputFileError(f"{where} has no 'eval_id'")
    conversation = raw.get("conversation")
    if conversation is None and raw.get("conversation_scenario") is None:
        raise InputFileError(f"{where} ('{eval_id}') has neither 'conversation' nor 'conversation_scenario'")
    if conversation is not None and not isinstance(conversation, list):
        raise InputFileError(f"{where} ('{eval_id}'): 'conversation' must be a list")
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
    for call in data.get("tool_uses") or ():
        calls.append(ToolCallData(name=call.get("name", ""), args=call.get("args") or {}, id=call.get("id")))
    for resp in data.get("tool_responses") or ():
        value = resp.get("response")
        responses.append(ToolResponseData(
            name=resp.get("name", ""), id=resp.get("id"),
            output=value if isinstance(value, str) else json.dumps(value, ensure_ascii=False) if value is not None else "",
            response=value if isinstance(value, (dict, list)) else None,
        ))
    for event in data.get("invocation_events") or ():
        for part in ((event or {}).get("content") or {}).get("parts") or ():
            if isinstance(part.get("function_call"), dict):
                call = part["function_call"]
                calls.append(ToolCallData(name=call.get("name", ""), args=call.get("args") or {}, id=call.get("id")))
            if isinstance(part.get("function_response"), dict):
                resp = part["function_response"]
                value = resp.get("response")
                responses.append(ToolResponseData(
                    name=resp.get("name", ""), id=resp.get("id"),
                    output=json.dumps(value, ensure_ascii=False) if value is not None else "",
                    response=value if isinstance(value, (dict, list)) else None,
                ))
    user = content_text(raw.get("user_content"))
    return InvocationData(
        invocation_id=str(raw.get("invocation_id") or ""),
        user_content=user or "",
        final_response=content_text(raw.get("final_response")),
        intermediate_steps=IntermediateStepData(tool_calls=calls, tool_responses=responses),
    )


def _legacy(items: list[Any], source: str) -> EvalSet:
    """ADK's legacy ``.test.json``: a list of ``{query, expected_tool_use, reference}`` turns (one case)."""
    turns = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "query" not in item:
            raise InputFileError(f"{source}: not an ADK eval set: item [{i}] has no 'query' (expected 'eval_cases')")
        calls = [ToolCallData(name=t.get("tool_name", ""), args=t.get("tool_input") or {})
                 for t in item.get("expected_tool_use") or ()]
        turns.append(InvocationData(invocation_id=f"turn-{i + 1}", user_content=item["query"],
                                    final_response=item.get("reference"),
                                    intermediate_steps=IntermediateStepData(tool_calls=calls)))
    return EvalSet(eval_set_id=Path(source).stem, eval_cases=[EvalCase(eval_id=Path(source).stem, conversation=turns)],
                   source=source)
