# examples/evaluators/tool_usage.py
from agentevals import Evaluator


class ToolUsageEvaluator(Evaluator):
    def __init__(self, task, environment, user=None):
        super().__init__(task, environment, user)
        self.expected_tool = "helm_list_releases"
        self.expected_result = task.evaluation_data["correct_answer"]   # an extra key of the eval case

    def filter_traces(self, traces):
        return traces.get("tools", {}).get(self.expected_tool, {})

    def __call__(self, traces, final_answer=None):
        invocations = traces.get("invocations", [])
        if not invocations:
            return {"tool_used": False, "correct_result": False, "accuracy": 0.0}
        correct = self.expected_result in str(invocations[0].get("outputs"))
        return {"tool_used": True, "correct_result": correct, "accuracy": 1.0 if correct else 0.0}
