"""Built with agentevals-evaluator-sdk 0.2.0: decides PASSED itself, whatever the threshold says."""
from agentevals_evaluator_sdk import EvalInput, EvalResult, EvalStatus, evaluator


@evaluator
def lenient_judge(input: EvalInput) -> EvalResult:
    return EvalResult(score=0.3, status=EvalStatus.PASSED, details={"why": "close enough"})


if __name__ == "__main__":
    lenient_judge.run()
