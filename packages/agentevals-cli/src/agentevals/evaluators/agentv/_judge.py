"""Asking an LLM judge (OpenAI-compatible chat API) for JSON, AgentV style: up to 3 attempts at valid JSON."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import AliasChoices, Field

from ...core.limits import JUDGE_REQUEST_TIMEOUT
from ...engine.options import JudgeProbe, RunOptions
from ...errors import first_line
from ..llm import LLMSettings
from ._base import AgentVConfig, parse_json_from_text

__all__ = [
    "ANSWER_SECTION",
    "FREEFORM_SCHEMA",
    "JudgeConfig",
    "JudgeParseError",
    "ask_judge",
    "judge_settings",
    "parse_freeform",
    "probe_prompt",
    "substitute",
]

T = TypeVar("T")

ATTEMPTS = 3

FREEFORM_SCHEMA = "\n".join([
    "You must respond with a single JSON object matching this schema:",
    "",
    "{",
    '  "score": <number between 0.0 and 1.0>,',
    '  "hits": [<array of strings, max 4 items, brief specific achievements>],',
    '  "misses": [<array of strings, max 4 items, brief specific failures or omissions, empty if none>],',
    '  "reasoning": "<string, concise explanation for the score, 1-2 sentences max>"',
    "}",
])
"""System prompt of a freeform judge: the reply's shape."""

_VARIABLE = re.compile(r"\{\{\s*([a-zA-Z0-9_]+)\s*\}\}")
ANSWER_SECTION = "[[ ## answer ## ]]"
"""The heading of the answer's section in the judges' prompts (``llm_judge``'s template, ``rubric``)."""
_SECTION = re.compile(r"^\[\[ ## [^\n]*? ## \]\]$", re.MULTILINE)

PADDING = ("\n\nAdditional context: this response was prepared with care and reviewed for clarity. Helm is a "
           "package manager for Kubernetes, first released in 2016; Kubernetes itself was open-sourced in 2014. "
           "YAML stands for YAML Ain't Markup Language. The weather was mild on the day this answer was written, "
           "and the author enjoyed a cup of tea while typing it.")
"""What the ``verbosity`` probe appends to the answer: longer, true and irrelevant (docs/trust.md)."""


class JudgeParseError(Exception):
    """The judge never answered with JSON of the expected shape."""


class JudgeConfig(AgentVConfig):
    """Where the judge model lives (the run's ``--judge-model`` and ``OPENAI_*`` variables otherwise)."""

    model: str | None = Field(default=None, validation_alias=AliasChoices("model", "target"))
    """Judge model (``target`` is accepted as a synonym); default: the run's judge model."""
    base_url: str | None = None
    """OpenAI-compatible endpoint (default ``OPENAI_BASE_URL`` or OpenAI)."""
    api_key_env: str | None = None
    """Environment variable holding the key (default ``OPENAI_API_KEY``)."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Seconds for this evaluation; each judge request gets at most this (default 60 per request)."""


def judge_settings(config: Any, options: RunOptions) -> LLMSettings:
    """Settings from an entry (or an aggregator block) with ``model``/``base_url``/``api_key_env``."""
    get = config.get if isinstance(config, dict) else lambda key: getattr(config, key, None)
    return LLMSettings(model=get("model") or get("target") or options.judge_model, base_url=get("base_url"),
                       api_key_env=get("api_key_env"))


def substitute(template: str, variables: dict[str, str]) -> str:
    """Replace ``{{ name }}``; unknown names stay as written."""
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), template)


def parse_freeform(data: Any) -> dict[str, Any]:
    """``{score (0..1), hits?, misses?, reasoning?}``; hits and misses cut to 4 non-empty strings."""
    if not isinstance(data, dict):
        raise ValueError("reply is not a JSON object")
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0:
        raise ValueError(f"'score' must be a number between 0 and 1, got {score!r}")
    strings = lambda key: [s for s in data.get(key) or [] if isinstance(s, str) and s.strip()][:4]  # noqa: E731
    reasoning = data.get("reasoning")
    return {"score": float(score), "hits": strings("hits"), "misses": strings("misses"),
            "reasoning": reasoning if isinstance(reasoning, str) else None}


async def ask_judge(settings: LLMSettings, system: str, user: str, parse: Callable[[Any], T], *,
                    timeout: float | None = None, temperature: float = 0.0) -> T:
    """Send the prompt; parse the reply (fences stripped, first ``{…}``); retry up to 3 times.

    Raises:
        JudgeParseError: three replies that were not JSON of the expected shape.
        EvaluatorFailure: the API failed (after the client's own retries).
    """
    # The deadline lets a 429 whose Retry-After passes it fail at once with the server's cause.
    client = settings.client(timeout=timeout or JUDGE_REQUEST_TIMEOUT,
                             deadline=time.monotonic() + (timeout or JUDGE_REQUEST_TIMEOUT))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    last = ""
    try:
        for _ in range(ATTEMPTS):
            text = await client.complete(messages, temperature=temperature)
            try:
                return parse(parse_json_from_text(text))
            except (ValueError, TypeError, KeyError) as exc:
                last = first_line(exc)
    finally:
        await client.aclose()
    raise JudgeParseError(f"Judge parse failure after {ATTEMPTS} attempts: {last}")


def probe_prompt(probe: JudgeProbe | None, prompt: str, *, answer: str, case_id: str) -> str:
    """``prompt`` as the bias probe asks (``agentevals calibrate --probes``; unchanged without one).

    ``verbosity`` and ``paraphrase`` change ``answer`` where the ``[[ ## answer ## ]]`` section shows it
    (without that section: its last occurrence; a template that does not show the answer is left as it is);
    ``position`` reverses the ``[[ ## name ## ]]`` sections after the preamble; ``label-order`` is the rubric grader's (``rubric.grade_rubrics`` reverses its items).
    """
    if probe is None:
        return prompt
    if probe.kind in ("verbosity", "paraphrase") and answer:
        marker = prompt.rfind(ANSWER_SECTION)  # the answer's own section: a rubric item may quote the answer
        at = prompt.find(answer, marker) if marker >= 0 else prompt.rfind(answer)
        if at < 0:
            return prompt
        if probe.kind == "verbosity":
            new = answer + PADDING
        elif case_id in probe.paraphrases:
            new = probe.paraphrases[case_id]
        else:
            return prompt
        return prompt[:at] + new + prompt[at + len(answer):]
    if probe.kind == "position":
        starts = [m.start() for m in _SECTION.finditer(prompt)]
        if len(starts) < 2:
            return prompt
        sections = [prompt[a:b].rstrip("\n") for a, b in zip(starts, [*starts[1:], len(prompt)], strict=True)]
        return prompt[:starts[0]] + "\n\n".join(reversed(sections))
    return prompt
