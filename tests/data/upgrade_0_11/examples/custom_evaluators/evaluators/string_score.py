"""Built with agentevals-evaluator-sdk 0.2.0: the score is a numeric string."""
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator


@evaluator
def string_score(input: EvalInput) -> EvalResult:
    return EvalResult(score="0.65")


if __name__ == "__main__":
    string_score.run()
