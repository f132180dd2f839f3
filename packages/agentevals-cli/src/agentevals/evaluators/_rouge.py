"""ROUGE-N as rouge-score computes it, with no dependency: its tokenization rule, nltk's Porter stems.

rouge-score (0.1.2, 2022) pulls numpy and absl-py into an install, and its modules import nltk, which
costs about a second (``nltk/__init__`` loads corpora readers, numpy, chunkers…), for what is a few
lines of code. So:

- ``tokenize`` is rouge-score's rule (``rouge_score/tokenize.py``, after Lin's ROUGE-1.5.5): lowercase,
  every run of characters outside ``[a-z0-9]`` is a separator, tokens longer than 3 characters are
  Porter-stemmed when asked;
- the stemmer is nltk's ``PorterStemmer`` in its default mode, a copy in ``evaluators._porter``;
- the n-gram F-measure is rouge-score's ``_score_ngrams`` (``ngram_fmeasure``); ROUGE-L is in
  ``openai_eval._text_similarity`` (its LCS in linear memory).

Tests compare every function with rouge-score's ``RougeScorer`` and nltk's stemmer on thousands of
strings (rouge-score is a test dependency, no longer an install one).

Example:
    ```python
    tokens = tokenize("The cats were running", stem=True)   # ['the', 'cat', 'were', 'run']
    ngram_fmeasure(tokens, tokenize("a cat runs", stem=True), 1)
    ```
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

from ._porter import PorterStemmer

__all__ = ["ngram_fmeasure", "porter_stemmer", "tokenize"]

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def tokenize(text: str, *, stem: bool) -> list[str]:
    """rouge-score's tokens of ``text`` (``DefaultTokenizer(use_stemmer=stem).tokenize``)."""
    words = _SEPARATORS.sub(" ", text.lower()).split()
    if stem:
        stemmer = porter_stemmer()
        return [stemmer.stem(word) if len(word) > 3 else word for word in words]
    return words


def ngram_fmeasure(target: list[str], prediction: list[str], n: int) -> float:
    """ROUGE-N F-measure of ``prediction`` tokens against ``target`` tokens, as rouge-score computes it."""
    target_ngrams = _ngrams(target, n)
    prediction_ngrams = _ngrams(prediction, n)
    overlap = sum(min(count, prediction_ngrams[gram]) for gram, count in target_ngrams.items())
    precision = overlap / max(sum(prediction_ngrams.values()), 1)
    recall = overlap / max(sum(target_ngrams.values()), 1)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


@cache
def porter_stemmer() -> PorterStemmer:
    """nltk's ``PorterStemmer()`` (the one rouge-score's tokenizer uses), one per process."""
    return PorterStemmer()
