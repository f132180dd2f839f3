"""Golden values for every local text_similarity metric, derived by hand where the formula allows."""

from __future__ import annotations

import math

import pytest
from agentevals.evaluators.openai_eval._config import TEXT_SIMILARITY_METRICS
from agentevals.evaluators.openai_eval._text_similarity import (
    LOCAL_METRICS,
    METEOR_HELP,
    cosine,
    meteor_unavailable,
    similarity,
)

CAT = "the cat sat on the mat"
CAT_REF = "the cat is on the mat"


class NoSynonyms:
    """A WordNet stand-in without synonyms: meteor then matches exact words and Porter stems only."""

    def synsets(self, *args: object, **kwargs: object) -> list[object]:
        return []


def test_every_documented_metric_but_cosine_is_local():
    assert set(LOCAL_METRICS) == set(TEXT_SIMILARITY_METRICS) - {"cosine"}


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        # Indel similarity: LCS "the cat " + "s" + " on the mat" = 20 chars, 2*20/(22+21).
        ("fuzzy_match", 40 / 43),
        # Unigrams: the (2), cat, on, mat match in 6 and 6 → P = R = 5/6.
        ("rouge_1", 5 / 6),
        # Bigrams: the-cat, on-the, the-mat of 5 each.
        ("rouge_2", 3 / 5),
        ("rouge_3", 1 / 4),  # "on the mat" of 4 trigrams each
        ("rouge_4", 0.0),
        ("rouge_5", 0.0),
        ("rouge_l", 5 / 6),  # LCS "the cat on the mat" = 5 tokens
        # GLEU: 1- to 4-gram matches 5 + 3 + 1 + 0 = 9 of 18 in each → min(9/18, 9/18).
        ("gleu", 0.5),
        # BLEU-4, brevity penalty 1, p = 5/6, 3/5, 1/4 and method 4 for the zero 4-gram count:
        # (1 / (2 * 5 / ln 6)) / 3 matches.
        ("bleu", math.exp(sum(map(math.log, [5 / 6, 3 / 5, 1 / 4, math.log(6) / 10 / 3])) / 4)),
        # METEOR: P = R = 5/6 → Fmean = 5/6; 5 matches in 2 chunks → penalty 0.5 * (2/5)^3.
        ("meteor", 5 / 6 * (1 - 0.5 * (2 / 5) ** 3)),
    ],
)
def test_golden_values_on_a_sentence_pair(metric: str, expected: float):
    assert similarity(metric, CAT, CAT_REF, wordnet=NoSynonyms()) == pytest.approx(expected, abs=1e-12)


def test_fuzzy_match_is_indel_ratio_and_case_sensitive():
    assert similarity("fuzzy_match", "kitten", "sitting") == pytest.approx(2 * 4 / 13)  # LCS "ittn"
    assert similarity("fuzzy_match", "Paris", "paris") == pytest.approx(2 * 4 / 10)


@pytest.mark.parametrize("metric", [m for m in LOCAL_METRICS if m != "meteor"])
def test_identical_texts_score_one(metric: str):
    assert similarity(metric, "The release kagent is deployed.", "The release kagent is deployed.") == 1.0


def test_meteor_of_identical_texts_keeps_its_fragmentation_penalty():
    # One chunk of 3 matches: penalty 0.5 * (1/3)^3 (METEOR never reaches exactly 1).
    assert similarity("meteor", "a b c", "a b c", wordnet=NoSynonyms()) == pytest.approx(1 - 0.5 / 27)


def test_meteor_matches_porter_stems():
    # "sitting"/"sits" share the stem "sit": 3 of 3 matched in one chunk.
    assert similarity("meteor", "cats are sitting", "cat are sits", wordnet=NoSynonyms()) == pytest.approx(
        1 - 0.5 / 27
    )


@pytest.mark.parametrize("metric", LOCAL_METRICS)
def test_empty_texts(metric: str):
    assert similarity(metric, "", "  ", wordnet=NoSynonyms()) == 1.0
    assert similarity(metric, "something", "", wordnet=NoSynonyms()) == 0.0
    assert similarity(metric, "", "something", wordnet=NoSynonyms()) == 0.0


def test_rouge_keeps_non_ascii_words():
    assert similarity("rouge_1", "Café déjà vu", "café déjà vu") == 1.0
    assert similarity("rouge_1", "東京は首都", "東京は首都") == 1.0


# Library outputs on a real pair (the helm fixture's second turn, shortened), pinned to catch changes
# in nltk / rouge-score / rapidfuzz. The first ones are checked by hand above.
AGENT = "There are two Helm releases: kagent (revision 2, deployed) and kagent-crds (revision 1, deployed)."
GOLDEN = "Two releases are installed: kagent, revision 2, deployed; kagent-crds, revision 1, deployed."
PINNED = {
    "fuzzy_match": 0.7894736842105263,
    "bleu": 0.2585071874780497,
    "gleu": 0.32926829268292684,
    "meteor": 0.6620610247553252,
    "rouge_1": 0.8571428571428571,
    "rouge_2": 0.5384615384615384,
    "rouge_3": 0.41666666666666663,
    "rouge_4": 0.2727272727272727,
    "rouge_5": 0.09999999999999999,
    "rouge_l": 0.7857142857142856,
}


@pytest.mark.parametrize("metric", LOCAL_METRICS)
def test_pinned_library_outputs(metric: str):
    assert similarity(metric, AGENT, GOLDEN, wordnet=NoSynonyms()) == pytest.approx(PINNED[metric], abs=1e-9)


def test_cosine():
    assert cosine([1.0, 0.0], [1.0, 0.0]) == 1.0
    assert cosine([1.0, 1.0], [1.0, 0.0]) == pytest.approx(1 / math.sqrt(2))
    assert cosine([1.0, 0.0], [-1.0, 0.0]) == 0.0  # clipped
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0


def test_meteor_without_wordnet_explains_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    from nltk.corpus import wordnet

    if type(wordnet).__name__ != "LazyCorpusLoader":
        pytest.skip("WordNet was already loaded by an earlier test")
    assert meteor_unavailable() == METEOR_HELP
    assert "python -m nltk.downloader wordnet" in METEOR_HELP


def test_meteor_matches_wordnet_synonyms_when_wordnet_is_installed():
    if meteor_unavailable():
        pytest.skip("NLTK's WordNet data is not installed here")
    # car ~ auto (synset car.n.01): 3 of 3 matched in one chunk, as with identical texts. (nltk compares
    # synonyms with the reference's Porter stems, so pairs like big ~ large do not match.)
    assert similarity("meteor", "a red car", "a red auto") == pytest.approx(1 - 0.5 / 27)
    assert similarity("meteor", "a red car", "a red auto", wordnet=NoSynonyms()) < 0.8
