"""``response_match_score``: ROUGE-1 F-measure of the final response vs the expected one, as google-adk.

Scores as google-adk does with ``rouge-score`` (Porter stemming) and ADK's Unicode-aware tokenizer
(NFKC, lowercase; CJK characters as single tokens; Thai/Lao/Khmer/Myanmar split per character;
ASCII words through rouge-score's tokenizer and stemmer; other words kept whole). Target = expected,
prediction = actual. Two empty texts score 0. rouge-score's rule and nltk's stemmer are our own copies
(``agentevals.evaluators._rouge``), checked against both libraries by the tests.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache
from typing import Optional

from ...results import MetricResult
from .._rouge import ngram_fmeasure, tokenize
from ..base import EvalContext
from ._base import BuiltinMetric
from ._pairs import pair_turns

__all__ = ["ResponseMatchMetric", "rouge1_fmeasure"]

_CJK = ((0x4E00, 0x9FFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xAC00, 0xD7AF))
_NON_SPACED = ((0x0E00, 0x0E7F), (0x0E80, 0x0EFF), (0x1780, 0x17FF), (0x1000, 0x109F))


def _in(char: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in ranges)


class _UnicodeTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return list(self._tokenize(text))

    @lru_cache(maxsize=4096)  # noqa: B019 - one tokenizer per process; golden answers repeat across traces
    def _tokenize(self, text: str) -> tuple[str, ...]:
        if text.isascii():  # same tokens as the per-character pass below, much faster
            return tuple(tokenize(text, stem=True))
        chars: list[str] = []
        for char in unicodedata.normalize("NFKC", text).lower():
            if _in(char, _CJK):
                chars += [" ", char, " "]
            elif _in(char, _NON_SPACED):
                chars += [char] if unicodedata.category(char).startswith("M") else [" ", char]
            elif char.isalnum() or unicodedata.category(char).startswith("M"):
                chars.append(char)
            else:
                chars.append(" ")
        tokens: list[str] = []
        for word in "".join(chars).split():
            tokens += tokenize(word, stem=True) if word.isascii() else [word]
        return tuple(tokens)


@cache
def _tokenizer() -> _UnicodeTokenizer:
    return _UnicodeTokenizer()


INLINE_CHARS = 20_000
"""Responses up to this many characters in all (a case's turns, both sides) are scored in the event loop:
tokenizing and stemming them takes a few milliseconds, less than starting the watched thread a deadline
needs. Longer ones run in that thread (``execution.inprocess.run_in_thread``)."""


def rouge1_fmeasure(actual: Optional[str], expected: Optional[str]) -> float:
    """ROUGE-1 F of ``actual`` against ``expected`` (ADK's response_match_score for one turn)."""
    tokenizer = _tokenizer()
    return ngram_fmeasure(tokenizer.tokenize(expected or ""), tokenizer.tokenize(actual or ""), 1)


class ResponseMatchMetric(BuiltinMetric):
    name = "response_match_score"
    description = "ROUGE-1 F-measure (stemmed) of each final response against the eval case's, averaged."
    default_threshold = 0.8

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        pairs, problem = pair_turns(ctx)
        if problem:
            return MetricResult.not_evaluated(self.config.name, problem, threshold=self.threshold)
        from ...execution.inprocess import run_in_thread

        def compute() -> list[Optional[float]]:
            return [rouge1_fmeasure(actual.final_response, expected.final_response) for actual, expected in pairs]

        if sum(len(a.final_response or "") + len(e.final_response or "") for a, e in pairs) <= INLINE_CHARS:
            scores = compute()  # a few milliseconds at most: a thread would cost more than the work
        else:  # CPU-bound on long answers: a watched thread, so the deadline fires and the loop keeps running
            scores = await run_in_thread(compute, timeout=self.evaluator.timeout, what=self.config.name)
        total = sum(s for s in scores if s is not None)
        return MetricResult.scored(self.config.name, total / len(pairs), self.threshold, per_invocation_scores=scores)
