"""ROUGE without rouge-score: the same tokens, stems and F-measures as rouge-score and nltk themselves.

rouge-score is a test dependency (hatch.toml), so these comparisons run in every CI job."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agentevals.evaluators._rouge import ngram_fmeasure, porter_stemmer, tokenize

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
from rouge_score.tokenizers import DefaultTokenizer  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"
REPO = Path(__file__).resolve().parents[4]


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


def vocabulary() -> list[str]:
    """Every word of the traces, the docs and the sources, plus each with the suffixes Porter's rules strip."""
    words = {w for text in corpus() for w in re.findall(r"[a-z]+", text.lower())}
    for path in [*REPO.glob("docs/*.md"), *REPO.glob("packages/*/src/**/*.py")]:
        words |= set(re.findall(r"[a-z]+", path.read_text("utf-8").lower()))
    words |= {"running", "caresses", "ponies", "generalization", "relational", "hopefulness", "agreed",
              "conditional", "sensibility", "dying", "lying", "skies", "news", "innings", "proceeding"}
    suffixes = ["s", "es", "ed", "ing", "ly", "ness", "ational", "ization", "fulness", "ement", "ible", "ousli"]
    words |= {w + suffix for w in sorted(words)[::3] for suffix in suffixes}
    return sorted(words)


def test_stems_are_nltk_porter_stems():
    from nltk.stem.porter import PorterStemmer

    real = PorterStemmer()
    words = vocabulary()
    assert len(words) > 20_000, len(words)
    mine = porter_stemmer()
    assert [mine.stem(w) for w in words] == [real.stem(w) for w in words]
    assert mine.stem("running") == "run"  # not the identity: the comparison above can fail


def random_texts(count: int) -> list[str]:
    """Strings built to reach every branch of the tokenizer: case, digits, punctuation, accents, CJK, spaces."""
    pieces = ["Running", "the", "CATS", "ran", "42", "x1y2", "café", "naïve", "東京", "can't", "e-mail", "U.S.A.",
              "--", "...", "\t", "\n", "  ", "İstanbul", "Kelvin\u212a", "ﬁne", "hopefulness", "is", "a", ""]
    rng = random.Random(7)
    return ["".join(rng.choice(pieces) + rng.choice([" ", "", ",", "\n"]) for _ in range(rng.randint(0, 12)))
            for _ in range(count)]


@pytest.mark.parametrize("stem", [True, False])
def test_tokens_are_rouge_scores(stem):
    reference = DefaultTokenizer(use_stemmer=stem)
    texts = corpus() + random_texts(5000)
    assert len(texts) > 5000
    for text in texts:
        assert tokenize(text, stem=stem) == reference.tokenize(text), text


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
    made = random_texts(400)
    pairs += list(zip(made[::2], made[1::2], strict=True))
    for target, prediction in pairs:
        expected = scorer.score(target, prediction)[f"rouge{n}"].fmeasure
        got = ngram_fmeasure(tokenizer.tokenize(target), tokenizer.tokenize(prediction), n)
        assert got == pytest.approx(expected, abs=1e-12), (target, prediction)


def test_response_match_score_does_not_import_nltk():
    """A run with response_match_score or a ROUGE metric imports neither nltk, numpy nor rouge-score."""
    code = ("import sys\n"
            "from agentevals.evaluators.builtin.response_match import rouge1_fmeasure\n"
            "from agentevals.evaluators.openai_eval._text_similarity import similarity\n"
            "print(round(rouge1_fmeasure('the cats were running home', 'a cat runs home'), 6),\n"
            "      similarity('rouge_2', 'the cat sat', 'the cat sat down'), similarity('rouge_l', 'a b', 'a c b'),\n"
            "      sorted(m for m in sys.modules if m == 'nltk' or m.startswith(('nltk.', 'numpy', 'rouge_score'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    tokenizer = DefaultTokenizer(use_stemmer=True)
    expected = round(rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
                     .score("a cat runs home", "the cats were running home")["rouge1"].fmeasure, 6)
    assert tokenizer.tokenize("the cats were running") == ["the", "cat", "were", "run"]
    assert out.split() == [str(expected), "0.8", "0.8", "[]"]
