"""Evaluators in MASEval's documented style (our own code), used by the Python API tests."""

from __future__ import annotations

from agentevals import Evaluator


class ToolUsageEvaluator(Evaluator):
    """Seed 003's example: was the expected tool used, and did it return the expected result?"""

    def __init__(self, task, environment, user=None):
        super().__init__(task, environment, user)
        self.expected_tool = "helm_list_releases"
        self.expected_result = task.evaluation_data.get("correct_answer")

    def filter_traces(self, traces):
        return traces.get("tools", {}).get(self.expected_tool, {})

    def __call__(self, traces, final_answer=None):
        invocations = traces.get("invocations", [])
        if not invocations:
            return {"tool_used": False, "correct_result": False, "accuracy": 0.0}
        tool_output = invocations[0].get("outputs", [])
        correct = tool_output == self.expected_result
        return {"tool_used": True, "correct_result": correct, "accuracy": 1.0 if correct else 0.0}


class AlternativeToolEvaluator(ToolUsageEvaluator):
    """Same logic, another tool: only filter_traces changes."""

    def filter_traces(self, traces):
        return traces.get("tools", {}).get("k8s_get_resources", {})


class AnswerMentionsEvaluator(Evaluator):
    """Agent-message filter with a `score` metric and extra breakdown data."""

    def __init__(self, task, environment, user=None, *, word="kagent"):
        super().__init__(task, environment, user)
        self.word = word

    def filter_traces(self, traces):
        (agent,) = traces["agents"].values()
        return agent

    def __call__(self, traces, final_answer=None):
        roles = [m["role"] for m in traces["messages"]]
        hit = self.word in (final_answer or "")
        return {"score": 1.0 if hit else 0.0, "roles": roles, "message_count": traces["message_count"]}


class CrashingEvaluator(Evaluator):
    def filter_traces(self, traces):
        return traces

    def __call__(self, traces, final_answer=None):
        raise RuntimeError("judge exploded")


class EnvironmentEvaluator(Evaluator):
    """Reads the environment (resource + session attributes) and the task."""

    def filter_traces(self, traces):
        return traces["environment"]

    def __call__(self, traces, final_answer=None):
        return {"service": self.environment.resource.get("service.name"), "session": self.environment.session_id,
                "query": self.task.query, "has_user": self.user is not None}


class SlowEvaluator(Evaluator):
    """Never finishes in time: the run must not wait for it."""

    def filter_traces(self, traces):
        return traces

    def __call__(self, traces, final_answer=None):
        import time

        time.sleep(60)
        return {"score": 1.0}


class BreakdownEvaluator(Evaluator):
    """Several numeric metrics and no `score`: MACS-style breakdowns averaged across repetitions."""

    def filter_traces(self, traces):
        return traces.get("tools", {}).get("helm_list_releases", {})

    def __call__(self, traces, final_answer=None):
        used = traces.get("total_invocations", 0)
        return {"precision": 1.0 if used else 0.0, "recall": 0.5 * used, "tool_used": bool(used), "note": "x"}


class TwoArgumentEvaluator(Evaluator):
    """A constructor without ``user``, as MASEval's docs allow (the framework never calls it itself)."""

    def __init__(self, task, environment):
        super().__init__(task, environment)

    def filter_traces(self, traces):
        return traces

    def __call__(self, traces, final_answer=None):
        return {"score": 1.0 if self.task.id else 0.0}


class KeywordEvaluator(Evaluator):
    """Needs a keyword argument that only the config can give."""

    def __init__(self, task, environment, user=None, *, word):
        super().__init__(task, environment, user)
        self.word = word

    def filter_traces(self, traces):
        return traces

    def __call__(self, traces, final_answer=None):
        return {"score": 1.0 if self.word in (final_answer or "") else 0.0}
