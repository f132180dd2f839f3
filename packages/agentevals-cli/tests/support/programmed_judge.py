"""A programmed LLM judge on a loopback OpenAI-compatible server, and traces of numbered cases for it to judge.

The judge reads the case number from the prompt (``list all Helm releases (item 7)``) and answers from a plan
the test wrote: its verdict per case, a flip probability (decided per case and ask by a seeded function the test
can replay), a verbosity bias (the padding of the ``verbosity`` probe raises its score) and a position bias
(the answer shown before the criteria lowers it). So every figure of ``agentevals calibrate`` has a known truth.

Example:
    ```python
    with ProgrammedJudge(verdicts={1: "pass", 2: "fail"}, flip=0.2, verbose_bonus=0.8) as judge:
        write_cases(tmp_path / "traces.json", 2)
        config = judge.config(tmp_path / "eval_config.yaml")   # one llm_judge entry named "judge"
        ... agentevals calibrate ... (environment: judge.env)
        judge.flipped(1, ask=2)     # whether the 3rd ask of case 1 was flipped
    ```
"""

from __future__ import annotations

import json
import random
import re
import threading
from pathlib import Path
from typing import Any

from .generate import HELM, SESSION_KEYS
from .openai_server import ChatServer

__all__ = ["FAIL_SCORE", "KEY_VARIABLE", "PASS_SCORE", "ProgrammedJudge", "case_id", "write_cases"]

QUESTION = "list all Helm releases"
KEY_VARIABLE = "CALIBRATE_TEST_JUDGE_KEY"
PASS_SCORE, FAIL_SCORE = 0.9, 0.1
"""The judge's scores; llm_judge's threshold (0.8) makes them PASSED and FAILED."""
_ITEM = re.compile(r"\(item (\d+)\)")


def case_id(item: int) -> str:
    """The case id ``agentevals run`` gives case ``item`` of ``write_cases`` (its trace id)."""
    return f"{item:032x}"


def write_cases(path: Path, count: int) -> list[str]:
    """A Jaeger file of ``count`` copies of the recorded helm trace, case ``i`` (1-based) asking
    ``list all Helm releases (item i)`` in its own session; returns the case ids."""
    trace = json.loads(HELM.read_text())["data"][0]
    text = json.dumps(trace)
    sessions = {t["value"] for s in trace["spans"] for t in s["tags"] if t["key"] in SESSION_KEYS}
    traces = []
    for i in range(1, count + 1):
        copy = text.replace(trace["traceID"], case_id(i)).replace(QUESTION, f"{QUESTION} (item {i})")
        for session in sessions:
            copy = copy.replace(session, f"session-{i}")
        traces.append(json.loads(copy))
    path.write_text(json.dumps({"data": traces}))
    return [case_id(i) for i in range(1, count + 1)]


class ProgrammedJudge(ChatServer):
    """A chat-completions server that judges numbered cases as planned (see the module docstring)."""

    def __init__(self, verdicts: dict[int, str], *, flip: float = 0.0, verbose_bonus: float = 0.0,
                 position_penalty: float = 0.0) -> None:
        super().__init__()
        self.verdicts = verdicts
        self.flip = flip
        self.verbose_bonus = verbose_bonus
        self.position_penalty = position_penalty
        self.asks: dict[int, int] = {}
        """Plain asks (no probe) per case so far."""
        self._count = threading.Lock()
        self.chat = self._judge

    @property
    def env(self) -> dict[str, str]:
        return {KEY_VARIABLE: "test-key"}

    def config(self, path: Path, name: str = "judge") -> Path:
        path.write_text(f"evaluators:\n  - name: {name}\n    type: llm_judge\n    model: programmed-judge\n"
                        f"    base_url: {self.base_url}\n    api_key_env: {KEY_VARIABLE}\n")
        return path

    def flipped(self, item: int, ask: int) -> bool:
        """Whether the ``ask``-th plain ask (0-based) of case ``item`` gets the other verdict."""
        return random.Random(f"{item}:{ask}").random() < self.flip

    def verdict(self, item: int, ask: int) -> str:
        planned = self.verdicts[item]
        if self.flipped(item, ask):
            return "fail" if planned == "pass" else "pass"
        return planned

    def _judge(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][-1]["content"]
        item = int(_ITEM.search(prompt).group(1))  # type: ignore[union-attr]
        padded = "Additional context:" in prompt
        answer_first = prompt.find("[[ ## answer ## ]]") < prompt.find("[[ ## criteria ## ]]")
        probed = padded or answer_first
        with self._count:
            ask = 0 if probed else self.asks.get(item, 0)
            if not probed:
                self.asks[item] = ask + 1
        score = PASS_SCORE if self.verdict(item, ask) == "pass" else FAIL_SCORE
        if padded:
            score += self.verbose_bonus
        if answer_first:
            score -= self.position_penalty
        return {"score": round(min(1.0, max(0.0, score)), 6), "reasoning": "programmed"}
