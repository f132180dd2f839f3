"""Source of an SDK evaluator the Ray tests ship to their actors (a file written into the test's folder).

    (tmp_path / "quality" / "quality.py").write_text(SLOW_SDK_EVALUATOR)
"""

__all__ = ["SLOW_SDK_EVALUATOR"]

SLOW_SDK_EVALUATOR = '''\
import time

from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator


@evaluator
def slow_quality(input: EvalInput) -> EvalResult:
    time.sleep(0.1)
    answer = input.invocations[-1].final_response or ""
    return EvalResult(score=1.0 if len(answer) > 20 else 0.0)


if __name__ == "__main__":
    slow_quality.run()
'''
"""Scores an answer longer than 20 characters 1.0, after 0.1 s (long enough for a batch to be in flight)."""
