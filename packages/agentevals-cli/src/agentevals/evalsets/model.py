"""Eval sets as the runner sees them: ADK EvalSet JSON turned into golden invocations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..protocol import InvocationData

__all__ = ["EvalCase", "EvalSet"]


@dataclass
class EvalCase:
    """One golden case: the expected turns of a conversation."""

    eval_id: str
    conversation: list[InvocationData]
    """Expected turns (user input, final response, tool calls), in order."""
    session_input: Optional[dict[str, Any]] = None
    rubrics: list[dict[str, Any]] = field(default_factory=list)
    conversation_scenario: Optional[dict[str, Any]] = None
    metadata: dict[str, Any] = field(default_factory=dict)
    """Unknown case-level keys, kept (ADK allows extras on cases)."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The case as read, for evaluators that need ADK's own shapes."""

    @property
    def provenance(self) -> Optional[dict[str, Any]]:
        """Where the case came from, when a builder said so (``metadata.provenance``, written by
        ``agentevals evalset from-run``: run id, case id, trace ids, sources); None otherwise.

        Example:
            ``EvalCase("a", [], metadata={"metadata": {"provenance": {"run_id": "r1"}}}).provenance == {"run_id": "r1"}``
        """
        held = self.metadata.get("metadata")  # ``metadata`` holds the case's unknown keys, ADK's own among them
        found = held.get("provenance") if isinstance(held, dict) else None
        return found if isinstance(found, dict) and found else None


@dataclass
class EvalSet:
    eval_set_id: str
    eval_cases: list[EvalCase]
    name: Optional[str] = None
    description: Optional[str] = None
    source: str = ""
