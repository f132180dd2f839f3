"""ROUGE without rouge-score's import cost: the same tokens, stems and F-measures as rouge-score itself."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from agentevals.evaluators._rouge import ngram_fmeasure, porter_stemmer, tokenize

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
from rouge_score.tokenizers import DefaultTokenizer  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"


def corpus() -> list[str]:
    """Real text: every string value in the shipped traces and eval sets (tool output, answers, prompts)."""
    texts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str) and len(value) > 3:
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted((DATA / "adk").glob("*.json")):
        walk(json.loads(path.read_text()))
    return texts


def test_stems_are_nltk_porter_stems():
    from nltk.stem.porter import PorterStemmer

    real = PorterStemmer()
    words = {w for text in corpus() for w in text.lower().split() if w.isalpha()}
    words |= {"running", "caresses", "ponies", "generalization", "relational", "hopefulness", "agreed",
              "conditional", "sensibility", "dying", "lying", "skies", "news", "innings", "proceeding"}
    assert len(words) > 500
    mine = porter_stemmer()
    assert [mine.stem(w) for w in sorted(words)] == [real.stem(w) for w in sorted(words)]


@pytest.mark.parametrize("stem", [True, False])
def test_tokens_are_rouge_scores(stem):
    reference = DefaultTokenizer(use_stemmer=stem)
    for text in corpus()[:2000]:
        assert tokenize(text, stem=stem) == reference.tokenize(text)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_ngram_fmeasure_is_rouge_scores(n):
    random.seed(n)
    words = "the cat sat on a mat dog ran far away and then came back home".split()
    tokenizer = DefaultTokenizer(use_stemmer=True)
    scorer = rouge_scorer.RougeScorer([f"rouge{n}"], use_stemmer=True)
    texts = corpus()
    pairs = [(" ".join(random.choices(words, k=random.randint(0, 20))),
              " ".join(random.choices(words, k=random.randint(0, 20)))) for _ in range(200)]
    pairs += [(random.choice(texts), random.choice(texts)) for _ in range(200)]
    for target, prediction in pairs:
        expected = scorer.score(target, prediction)[f"rouge{n}"].fmeasure
        got = ngram_fmeasure(tokenizer.tokenize(target), tokenizer.tokenize(prediction), n)
        assert got == pytest.approx(expected, abs=1e-12), (target, prediction)


def test_response_match_score_does_not_import_nltk():
    """The point of the module: a run with response_match_score never executes ``nltk/__init__``."""
    code = ("import sys\n"
            "from agentevals.evaluators.builtin.response_match import rouge1_fmeasure\n"
            "from agentevals.evaluators.openai_eval._text_similarity import similarity\n"
            "print(round(rouge1_fmeasure('the cats were running home', 'a cat runs home'), 6),\n"
            "      similarity('rouge_2', 'the cat sat', 'the cat sat down'), similarity('rouge_l', 'a b', 'a c b'),\n"
            "      sorted(m for m in sys.modules if m == 'nltk' or m.startswith(('nltk.', 'numpy', 'rouge_score.rouge_scorer'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    tokenizer = DefaultTokenizer(use_stemmer=True)
    expected = round(rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
                     .score("a cat runs home", "the cats were running home")["rouge1"].fmeasure, 6)
    assert tokenizer.tokenize("the cats were running") == ["the", "cat", "were", "run"]
    assert out.split() == [str(expected), "0.8", "0.8", "[]"]
