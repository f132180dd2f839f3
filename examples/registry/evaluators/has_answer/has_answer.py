"""Registry evaluator: 1 for each turn the agent answered, 0 for a turn without a final response."""

from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator


@evaluator
def has_answer(input: EvalInput) -> EvalResult:
    """Whitespace is not an answer; details name the turns left unanswered."""
    unanswered = [inv.invocation_id for inv in input.invocations if not (inv.final_response or "").strip()]
    per_turn = [0.0 if inv.invocation_id in unanswered else 1.0 for inv in input.invocations]
    overall = sum(per_turn) / len(per_turn) if per_turn else 0.0
    return EvalResult(score=overall, per_invocation_scores=per_turn, details={"unanswered": unanswered})


if __name__ == "__main__":
    has_answer.run()
