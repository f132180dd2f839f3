"""``execution.inprocess.run_in_thread``: the deadline fires on CPU-bound Python, the thread is stopped,
and an evaluator's ``sys.exit`` / ``KeyboardInterrupt`` is its own failure."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import pytest
from agentevals.errors import EvaluatorFailure
from agentevals.execution.inprocess import run_in_thread


def spin() -> None:
    while True:
        pass


def test_a_result_comes_back():
    assert asyncio.run(run_in_thread(lambda a, b: a + b, 2, 3, timeout=5, what="add")) == 5


def test_an_endless_loop_ends_at_the_deadline_and_its_thread_stops():
    with pytest.raises(EvaluatorFailure, match=r"^spin timed out after 0.3s$"):
        asyncio.run(run_in_thread(spin, timeout=0.3, what="spin"))  # the loop never ends by itself
    end = time.monotonic() + 60  # how long to look for the thread, not a figure asserted
    while any(t.name == "agentevals-spin" for t in threading.enumerate()) and time.monotonic() < end:
        time.sleep(0.01)
    assert not any(t.name == "agentevals-spin" for t in threading.enumerate())


def test_sys_exit_and_keyboard_interrupt_are_the_evaluators_failure():
    with pytest.raises(EvaluatorFailure, match=r"^ev called sys.exit\(3\); an evaluator must return a result"):
        asyncio.run(run_in_thread(sys.exit, 3, timeout=5, what="ev"))

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(EvaluatorFailure, match=r"^ev raised KeyboardInterrupt$"):
        asyncio.run(run_in_thread(interrupt, timeout=5, what="ev"))


def test_other_exceptions_pass_through():
    with pytest.raises(ZeroDivisionError):
        asyncio.run(run_in_thread(lambda: 1 / 0, timeout=5, what="div"))


def test_a_huge_rouge_l_ends_at_its_deadline_and_small_ones_match_rouge_score():
    import random

    from agentevals.evaluators.openai_eval import _text_similarity as ts
    from rouge_score import rouge_scorer

    ts.preload("rouge_l")
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=ts._RougeTokenizer())  # rouge-score's own LCS table
    random.seed(7)
    words = "alpha beta gamma delta epsilon zeta eta theta".split()
    for _ in range(50):
        a = " ".join(random.choices(words, k=random.randint(1, 25)))
        b = " ".join(random.choices(words, k=random.randint(1, 25)))
        expected = scorer.score(b, a)["rougeL"].fmeasure
        assert ts.rouge_l(a, b) == pytest.approx(expected, abs=1e-12)
    huge = " ".join(random.choices(words, k=400_000))
    with pytest.raises(EvaluatorFailure, match=r"^rouge_l grading timed out after 0.5s$"):
        asyncio.run(run_in_thread(ts.similarity, "rouge_l", huge, huge[::-1], timeout=0.5, what="rouge_l grading"))
