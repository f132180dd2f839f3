"""Built with agentevals-evaluator-sdk 0.2.0: one more per-invocation score than there are turns."""
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator


@evaluator
def per_turn(input: EvalInput) -> EvalResult:
    scores = [1.0 for _ in input.invocations] + [0.0]
    return EvalResult(score=0.9, per_invocation_scores=scores)


if __name__ == "__main__":
    per_turn.run()
