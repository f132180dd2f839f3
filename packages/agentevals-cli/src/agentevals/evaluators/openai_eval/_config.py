"""The ``type: openai_eval`` entry: an OpenAI grader definition plus where and how to grade it.

Grader fields follow OpenAI's grader objects (``text_similarity``, ``string_check``, ``label_model``,
``score_model``); the entry's ``threshold`` becomes the grader's ``pass_threshold``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ...core._docs import ATTRIBUTE_DOCS
from ...core._registry import did_you_mean
from ...core._validation import format_validation_error
from ..base import EvaluatorConfig
from ._templates import check_template, item_fields

__all__ = [
    "ACTUAL",
    "EXPECTED",
    "TEXT_SIMILARITY_METRICS",
    "Grader",
    "LabelModelGrader",
    "Message",
    "OpenAIEvalConfig",
    "SamplingParams",
    "ScoreModelGrader",
    "StringCheckGrader",
    "TextSimilarityGrader",
]

ACTUAL = "{{ item.actual_response }}"
EXPECTED = "{{ item.expected_response }}"
TEXT_SIMILARITY_METRICS = (
    "fuzzy_match", "bleu", "gleu", "meteor", "cosine",
    "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5", "rouge_l",
)  # fmt: skip

Template = Annotated[str, AfterValidator(check_template)]
"""A string with ``{{ item.<field> }}`` / ``{{ sample.output_text }}`` placeholders."""

_STRICT = ConfigDict(extra="forbid", **ATTRIBUTE_DOCS)


class _Grader(BaseModel):
    model_config = _STRICT

    name: str | None = None
    """Grader name sent to the Evals API (default: the entry's name)."""

    @model_validator(mode="before")
    @classmethod
    def _no_pass_threshold(cls, data: Any) -> Any:
        if isinstance(data, dict) and "pass_threshold" in data:
            raise ValueError(
                "set the pass threshold with the entry's `threshold:` (it becomes pass_threshold)"
            )
        return data

    def templates(self) -> list[str]:
        """Every template of the grader."""
        return [
            getattr(self, key) for key in ("input", "reference") if isinstance(getattr(self, key, None), str)
        ]

    @property
    def needs_expected(self) -> bool:
        """Whether grading reads the eval case's expected response."""
        return any("expected_response" in item_fields(t) for t in self.templates())


class TextSimilarityGrader(_Grader):
    """Similarity of ``input`` to ``reference`` by one of OpenAI's text-similarity metrics."""

    type: Literal["text_similarity"]
    evaluation_metric: Literal[
        "fuzzy_match", "bleu", "gleu", "meteor", "cosine",
        "rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5", "rouge_l",
    ]  # fmt: skip
    """Metric; ``cosine`` embeds both texts (the only one that calls an API in local mode)."""
    input: Template = ACTUAL
    """The text being graded."""
    reference: Template = EXPECTED
    """The text graded against."""


class StringCheckGrader(_Grader):
    """1 when ``input`` and ``reference`` satisfy ``operation``, else 0."""

    type: Literal["string_check"]
    operation: Literal["eq", "ne", "neq", "like", "ilike"]
    """``eq``/``ne`` (``neq``): equal or not (case-sensitive); ``like``: input contains reference;
    ``ilike``: the same, ignoring case."""
    input: Template = ACTUAL
    reference: Template = EXPECTED


class Message(BaseModel):
    """One chat message of a model grader's prompt."""

    model_config = _STRICT

    role: Literal["system", "developer", "user", "assistant"]
    content: Template
    type: Literal["message"] | None = None


class SamplingParams(BaseModel):
    """Sampling parameters of a model grader (OpenAI's names)."""

    model_config = _STRICT

    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    max_completions_tokens: int | None = Field(default=None, gt=0)
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None

    def chat_params(self) -> dict[str, Any]:
        """The same as chat-completions parameters (temperature left out for reasoning models)."""
        temperature = self.temperature
        if temperature is None and not self.reasoning_effort:
            temperature = 0.0
        params: dict[str, Any] = {
            "temperature": temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_completion_tokens": self.max_completions_tokens,
            "reasoning_effort": self.reasoning_effort,
        }
        return params


class _ModelGrader(_Grader):
    model: str = Field(min_length=1)
    """Model that grades (any model of the configured OpenAI-compatible endpoint)."""
    input: list[Message] = Field(min_length=1)
    """Prompt messages; templates may use the item namespace."""
    sampling_params: SamplingParams | None = None

    def templates(self) -> list[str]:
        return [message.content for message in self.input]

    def chat_params(self) -> dict[str, Any]:
        return (self.sampling_params or SamplingParams()).chat_params()


class LabelModelGrader(_ModelGrader):
    """The model picks one of ``labels``; a turn passes when it is one of ``passing_labels``."""

    type: Literal["label_model"]
    labels: list[str] = Field(min_length=1)
    passing_labels: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_labels(self) -> LabelModelGrader:
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels must be distinct (got {self.labels})")
        stray = [label for label in self.passing_labels if label not in self.labels]
        if stray:
            raise ValueError(f"passing_labels {stray} are not among labels {self.labels}")
        return self


class ScoreModelGrader(_ModelGrader):
    """The model returns a number in ``range``; we report it scaled to [0, 1]."""

    type: Literal["score_model"]
    range: tuple[float, float] = (0.0, 1.0)
    """Lowest and highest score the model may give."""

    @field_validator("range")
    @classmethod
    def _check_range(cls, value: tuple[float, float]) -> tuple[float, float]:
        if not value[0] < value[1]:
            raise ValueError(f"range must be [low, high] with low < high (got {list(value)})")
        return value


Grader = TextSimilarityGrader | StringCheckGrader | LabelModelGrader | ScoreModelGrader
_GRADERS: dict[str, type[_Grader]] = {
    "text_similarity": TextSimilarityGrader,
    "string_check": StringCheckGrader,
    "label_model": LabelModelGrader,
    "score_model": ScoreModelGrader,
}


class OpenAIEvalConfig(EvaluatorConfig):
    """An ``openai_eval`` entry of eval_config.yaml."""

    type: Literal["openai_eval"] = "openai_eval"
    grader: Grader
    """OpenAI grader definition: text_similarity, string_check, label_model or score_model."""
    mode: Literal["local", "evals_api"] = "local"
    """``local``: we compute the grade (models through chat completions / embeddings);
    ``evals_api``: an ephemeral eval on OpenAI's Evals API grades it."""
    timeout: float = Field(default=120.0, gt=0, allow_inf_nan=False)
    """Seconds for the whole grading of one case (API calls, retries and polling included)."""
    base_url: str | None = None
    """OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else OpenAI)."""
    api_key_env: str | None = None
    """Environment variable holding the API key (default OPENAI_API_KEY)."""
    embedding_model: str = "text-embedding-3-large"
    """Embedding model for the ``cosine`` metric in local mode (OpenAI's grader uses this one)."""

    @field_validator("grader", mode="before")
    @classmethod
    def _grader(cls, value: Any) -> Any:
        if isinstance(value, _Grader):
            return value
        if not isinstance(value, dict):
            raise ValueError(f"must be a mapping with a 'type' (one of: {', '.join(_GRADERS)})")
        kind = value.get("type")
        grader_cls = _GRADERS.get(kind) if isinstance(kind, str) else None
        if grader_cls is None:
            hint = did_you_mean(str(kind), _GRADERS) if kind else ""
            raise ValueError(f"unknown grader type {kind!r}{hint}; known: {', '.join(_GRADERS)}")
        for key in value:
            if key not in grader_cls.model_fields and key != "pass_threshold":
                hint = did_you_mean(str(key), grader_cls.model_fields)
                raise ValueError(f"unknown key '{key}' in {kind} grader{hint}")
        try:
            return grader_cls.model_validate(value)
        except ValidationError as exc:
            raise ValueError(f"{kind} grader: {format_validation_error(exc)}") from None

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"base_url must be an http:// or https:// URL (got {value!r})")
        return value

    @property
    def pass_threshold(self) -> float:
        """Threshold on our [0, 1] scale: the entry's, or for label_model all turns must pass."""
        if isinstance(self.grader, LabelModelGrader) and "threshold" not in self.model_fields_set:
            return 1.0
        return 0.5 if self.threshold is None else self.threshold
