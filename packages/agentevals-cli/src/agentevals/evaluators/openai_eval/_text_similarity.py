"""OpenAI's ``text_similarity`` metrics, computed locally with maintained libraries.

OpenAI documents the metric names, that ``fuzzy_match`` uses rapidfuzz and that ``cosine`` embeds with
text-embedding-3-large; it does not document tokenization, smoothing or scorer variants. We use each
library's standard form (the choices Microsoft's azure-ai-evaluation made for the same metrics):

    fuzzy_match   rapidfuzz ``fuzz.ratio`` / 100 (normalized Indel similarity, case-sensitive)
    bleu          nltk ``sentence_bleu``, BLEU-4 uniform weights, smoothing method 4
    gleu          nltk ``sentence_gleu`` (1- to 4-grams)
    meteor        nltk ``meteor_score`` (alpha 0.9, beta 3, gamma 0.5; WordNet synonyms)
    rouge_N/L     rouge-score ``RougeScorer`` F-measure, no stemming, its tokenizer for ASCII words
                  (non-ASCII words are kept whole, lower-cased, where rouge-score would drop them);
                  computed as rouge-score does, without it (``evaluators._rouge``)
    cosine        cosine of the two embedding vectors, clipped to [0, 1] (see ``cosine``)

bleu/gleu/meteor tokenize with nltk's Treebank-style word tokenizer (no data download). Both texts
empty scores 1, exactly one empty scores 0, for every metric.

Threads: nltk cannot be imported by two threads at once (its circular imports then hand one of them a
half-initialised module), and its WordNet reader loads lazily. Callers that compute in worker threads
call ``preload(metric)`` in the event loop's thread first; the computations themselves hold one lock.
"""

from __future__ import annotations

import importlib
import math
import re
import threading
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

from .._rouge import ngram_fmeasure, tokenize

__all__ = ["LOCAL_METRICS", "cosine", "meteor_unavailable", "preload", "similarity"]

_ROUGE = {"rouge_1": 1, "rouge_2": 2, "rouge_3": 3, "rouge_4": 4, "rouge_5": 5, "rouge_l": 0}
"""ROUGE metric → n-gram length (0: ROUGE-L)."""

METEOR_HELP = (
    "meteor needs NLTK's WordNet data, which no maintained PyPI package ships and agentevals never "
    "downloads while running: install it once with `python -m nltk.downloader wordnet` (or put it "
    "under $NLTK_DATA/corpora/wordnet)"
)


_LOCK = threading.Lock()
_MODULES = {
    "fuzzy_match": ("rapidfuzz.fuzz",),
    "bleu": ("nltk.translate.bleu_score", "nltk.tokenize"),
    "gleu": ("nltk.translate.gleu_score", "nltk.tokenize"),
    "meteor": ("nltk.translate.meteor_score", "nltk.tokenize", "nltk.corpus"),
}


def preload(metric: str) -> None:
    """Import what ``metric`` needs, in the calling thread (call it before computing in worker threads)."""
    for module in _MODULES.get(metric, ()):
        importlib.import_module(module)


def similarity(metric: str, text: str, reference: str, *, wordnet: Any = None) -> float:
    """Score in [0, 1] of ``text`` against ``reference`` by a local metric (every one but ``cosine``).

    Thread-safe once ``preload(metric)`` has run.

    Args:
        wordnet: WordNet reader for ``meteor`` (default: nltk's, which must be installed).
    """
    with _LOCK:
        return _similarity(metric, text, reference, wordnet)


def _similarity(metric: str, text: str, reference: str, wordnet: Any) -> float:
    if not text.strip() or not reference.strip():
        return 1.0 if not text.strip() and not reference.strip() else 0.0
    if metric == "meteor":
        return _meteor(text, reference, wordnet)
    if metric == "rouge_l":
        return rouge_l(text, reference)
    if metric in _ROUGE:
        tokenizer = _rouge_tokenizer()
        return ngram_fmeasure(tokenizer.tokenize(reference), tokenizer.tokenize(text), _ROUGE[metric])
    return _FUNCTIONS[metric](text, reference)


def cosine(u: list[float], v: list[float]) -> float:
    """Cosine similarity of two vectors, clipped to [0, 1] (a zero vector scores 0)."""
    norms = math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v))
    if norms == 0:
        return 0.0
    return min(1.0, max(0.0, sum(x * y for x, y in zip(u, v, strict=True)) / norms))


def meteor_unavailable() -> str | None:
    """Why ``meteor`` cannot run here (no WordNet data), or None. Loads WordNet (seconds, once)."""
    from nltk.corpus import wordnet

    with _LOCK:
        try:
            wordnet.ensure_loaded()
        except (LookupError, OSError):
            return METEOR_HELP
    return None


def _fuzzy_match(text: str, reference: str) -> float:
    from rapidfuzz import fuzz

    return fuzz.ratio(text, reference) / 100.0


def _bleu(text: str, reference: str) -> float:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            sentence_bleu([_tokens(reference)], _tokens(text), smoothing_function=SmoothingFunction().method4)
        )


def _gleu(text: str, reference: str) -> float:
    from nltk.translate.gleu_score import sentence_gleu

    return float(sentence_gleu([_tokens(reference)], _tokens(text)))


def _meteor(text: str, reference: str, wordnet: Any) -> float:
    from nltk.translate.meteor_score import meteor_score

    if wordnet is None:
        from nltk.corpus import wordnet as corpus

        wordnet = corpus
    return float(meteor_score([_tokens(reference)], _tokens(text), wordnet=wordnet))


_FUNCTIONS: dict[str, Callable[[str, str], float]] = {
    "fuzzy_match": _fuzzy_match,
    "bleu": _bleu,
    "gleu": _gleu,
}
LOCAL_METRICS = (*_FUNCTIONS, "meteor", *_ROUGE)
"""Metrics computed without any API (``cosine`` needs an embeddings endpoint)."""


def _tokens(text: str) -> list[str]:
    return _tokenizer().tokenize(text)


@cache
def _tokenizer() -> Any:
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


class _RougeTokenizer:
    """rouge-score's default tokenizer, except that words with non-ASCII letters are kept, not dropped."""

    def tokenize(self, text: str) -> list[str]:
        tokens: list[str] = []
        for word in re.findall(r"\w+", text.lower()):
            tokens += tokenize(word, stem=False) if word.isascii() else [word]
        return tokens


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists, bit-parallel (Hyyrö 2004).

    rouge-score fills an ``(len(a)+1) × (len(b)+1)`` table of Python ints: 100k tokens against 100k is
    80 GB and hours. Here each token of ``b`` is a few big-integer operations over ``len(a)`` bits:
    memory linear, time ``len(a) · len(b) / 64`` machine words.
    """
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for index, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << index)
    full = (1 << len(a)) - 1
    row = full
    for token in b:
        match = row & masks.get(token, 0)
        row = ((row + match) | (row - match)) & full
    return len(a) - row.bit_count() if hasattr(row, "bit_count") else len(a) - bin(row).count("1")


def rouge_l(text: str, reference: str) -> float:
    """ROUGE-L F-measure as rouge-score computes it (same tokenizer, same formula), in linear memory."""
    tokenizer = _rouge_tokenizer()
    target, prediction = tokenizer.tokenize(reference), tokenizer.tokenize(text)
    lcs = lcs_length(target, prediction)
    if not lcs:
        return 0.0
    precision, recall = lcs / len(prediction), lcs / len(target)
    return 2 * precision * recall / (precision + recall)


@cache
def _rouge_tokenizer() -> _RougeTokenizer:
    return _RougeTokenizer()

