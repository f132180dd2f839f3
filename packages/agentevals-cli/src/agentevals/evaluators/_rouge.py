"""ROUGE-N as rouge-score computes it, without the second of imports that rouge-score's modules cost.

``rouge_score.rouge_scorer`` imports ``nltk`` and numpy at its top, and ``rouge_score.tokenizers`` imports
``nltk.stem``: with nltk 3.9+ that is 0.8–1.3 s (``nltk/__init__`` loads corpora readers, numpy, chunkers,
translation metrics…), most of a one-trace run, for one class (``PorterStemmer``) and a dozen lines of
counting. So:

- tokens come from rouge-score's own ``rouge_score.tokenize.tokenize`` (it imports ``re`` and ``six``);
- the stemmer is nltk's ``PorterStemmer`` from nltk's own file, loaded without running ``nltk/__init__``
  (``porter_stemmer``; it falls back to ``from nltk.stem.porter import PorterStemmer`` when the file's
  imports are not the few it resolves, so a future nltk is slower, never different);
- the n-gram F-measure is rouge-score's ``_score_ngrams`` (``ngram_fmeasure``).

Tests compare every function with rouge-score's ``RougeScorer`` itself.

Example:
    ```python
    tokens = tokenize("The cats were running", stem=True)   # ['the', 'cat', 'were', 'run']
    ngram_fmeasure(tokens, tokenize("a cat runs", stem=True), 1)
    ```
"""

from __future__ import annotations

import builtins
import importlib.util
import logging
import threading
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Optional

__all__ = ["ngram_fmeasure", "porter_stemmer", "tokenize"]

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_STEMMER: Optional[Any] = None


def tokenize(text: str, *, stem: bool) -> list[str]:
    """rouge-score's tokens of ``text`` (``DefaultTokenizer(use_stemmer=stem).tokenize``)."""
    from rouge_score.tokenize import tokenize as rouge_tokenize

    return list(rouge_tokenize(text, porter_stemmer() if stem else None))


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


def porter_stemmer() -> Any:
    """nltk's ``PorterStemmer()`` (the instance rouge-score's tokenizer uses), loaded once per process."""
    global _STEMMER
    with _LOCK:
        if _STEMMER is None:
            try:
                _STEMMER = _load_porter().PorterStemmer()
            except Exception:  # another nltk layout: the ordinary import, slower and the same
                log.debug("loading nltk's porter.py on its own failed; importing nltk", exc_info=True)
                from nltk.stem.porter import PorterStemmer

                _STEMMER = PorterStemmer()
        return _STEMMER


def _load_porter() -> ModuleType:
    """``nltk/stem/porter.py`` executed as a private module whose ``nltk`` imports are served from nltk's
    files by name (``from nltk import redos``, ``from nltk.stem.api import StemmerI``), never through
    ``nltk/__init__``. Nothing is added to ``sys.modules``: a later ``import nltk`` is the ordinary one."""
    import sys

    real = sys.modules.get("nltk.stem.porter")
    if real is not None:
        return real
    spec = importlib.util.find_spec("nltk")  # finds the package's folder without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("nltk is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    loaded: dict[str, ModuleType] = {}

    def load(name: str) -> ModuleType:
        if name not in loaded:
            path = root.joinpath(*name.split(".")[1:]).with_suffix(".py")
            if not path.is_file():
                raise ImportError(f"{name}: not a module file of nltk")
            module_spec = importlib.util.spec_from_file_location(f"{__name__}._nltk.{name}", path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            module.__dict__["__builtins__"] = {**builtins.__dict__, "__import__": private_import}
            module_spec.loader.exec_module(module)
            loaded[name] = module
        return loaded[name]

    def private_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
                       level: int = 0) -> Any:
        if level or not (name == "nltk" or name.startswith("nltk.")):
            return builtins.__import__(name, globals, locals, fromlist, level)
        if not fromlist:
            raise ImportError(f"import {name}: only 'from nltk… import …' is served here")
        if name == "nltk":  # ``from nltk import redos``: a module, loaded when first used (porter's demo only)
            return SimpleNamespace(**{item: _Lazy(partial(load, f"nltk.{item}")) for item in fromlist})
        return load(name)

    return load("nltk.stem.porter")


class _Lazy:
    """A module loaded on first attribute access."""

    def __init__(self, load: Callable[[], ModuleType]) -> None:
        self._load = load
        self._module: Optional[ModuleType] = None

    def __getattr__(self, name: str) -> Any:
        if self._module is None:
            self._module = self._load()
        return getattr(self._module, name)
