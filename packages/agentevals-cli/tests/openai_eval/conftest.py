"""Fixtures for openai_eval: loopback servers, a test key, and builders for entries and contexts."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable

from agentevals.evaluators import EVALUATOR_TYPES, EvalContext
from agentevals.evaluators.openai_eval import OpenAIEvalEvaluator
from agentevals.protocol import InvocationData
from support.openai_server import ChatServer, EvalsServer

KEY_ENV = "AGENTEVALS_TEST_OPENAI_KEY"
KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A key in a private variable; the standard ones are cleared so nothing reaches a real service."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@pytest.fixture
def evals_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[EvalsServer]:
    monkeypatch.setattr("agentevals.evaluators.openai_eval._evals_api.POLL_FIRST", 0.01)
    with EvalsServer() as server:
        yield server


def _make(grader: dict[str, Any], *, server: Any = None, **entry: Any) -> OpenAIEvalEvaluator:
    """An evaluator built the way the config loader builds it (validate, construct, check)."""
    data: dict[str, Any] = {"name": "sim", "type": "openai_eval", "grader": grader, **entry}
    if server is not None:
        data.setdefault("base_url", server.base_url)
        data.setdefault("api_key_env", KEY_ENV)
    cls = EVALUATOR_TYPES.get("openai_eval")
    evaluator = cls(cls.Config.model_validate(data), base_dir=Path.cwd())
    evaluator.check()
    return evaluator


def _context(actual: list[str | None], expected: list[str | None] | None = None) -> EvalContext:
    """A case with the given final responses (expected None = no eval case matched)."""
    return EvalContext(
        case_id="case",
        invocations=[
            InvocationData(
                invocation_id=f"inv-{i + 1}", user_content=f"question {i + 1}", final_response=text
            )
            for i, text in enumerate(actual)
        ],
        expected_invocations=None
        if expected is None
        else [
            InvocationData(
                invocation_id=f"exp-{i + 1}", user_content=f"question {i + 1}", final_response=text
            )
            for i, text in enumerate(expected)
        ],
    )


@pytest.fixture
def build() -> Callable[..., OpenAIEvalEvaluator]:
    """``build(grader_dict, server=..., **entry_fields)`` → a checked evaluator."""
    return _make


@pytest.fixture
def case() -> Callable[..., EvalContext]:
    """``case(actual_responses, expected_responses_or_None)`` → an EvalContext."""
    return _context
