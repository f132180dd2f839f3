"""Eval sets as the runner sees them: ADK EvalSet JSON turned into golden invocations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from pydantic import ValidationError

from ..protocol import InvocationData
from ..results import HumanLabel

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

    def _meta(self) -> dict[str, Any]:
        # ``metadata`` holds the case's unknown keys, ADK's own ``metadata`` among them; a file may make that a
        # string or a list, which carries no provenance or labels
        held = self.metadata.get("metadata")
        return held if isinstance(held, dict) else {}

    @property
    def provenance(self) -> Optional[dict[str, Any]]:
        """Where the case came from, when a builder said so (``metadata.provenance``, written by
        ``agentevals evalset from-run``: run id, case id, trace ids, sources); None otherwise.

        Example:
            ``EvalCase("a", [], metadata={"metadata": {"provenance": {"run_id": "r1"}}}).provenance == {"run_id": "r1"}``
        """
        found = self._meta().get("provenance")
        return found if isinstance(found, dict) and found else None

    def human_labels(self) -> tuple[list[HumanLabel], list[str]]:
        """The human labels the case carries in ``metadata.labels`` (put there by the web UI or
        ``evalset``: ``{"verdict", "score", "metric", "note", "labeler"}``), and one warning per entry that is
        not a label (it is left out)::

            labels, warnings = eval_case.human_labels()
        """
        entries = self._meta().get("labels")
        labels, warnings = [], []
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            try:
                labels.append(HumanLabel.model_validate(entry))
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(p) for p in problem["loc"])
                warnings.append(f"eval case '{self.eval_id}': metadata.labels[{i}]"
                                f"{'.' + where if where else ''}: {problem['msg']} (label left out)")
        return labels, warnings


@dataclass
class EvalSet:
    eval_set_id: str
    eval_cases: list[EvalCase]
    name: Optional[str] = None
    description: Optional[str] = None
    source: str = ""
