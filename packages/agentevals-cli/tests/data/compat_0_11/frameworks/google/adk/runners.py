"""Stand-in for google.adk.runners.InMemoryRunner: one invoke_agent span and one text event per message."""

import itertools
from types import SimpleNamespace

from _genai import model_call

_ids = itertools.count(1)


class _Sessions:
    async def create_session(self, *, app_name: str, user_id: str):
        return SimpleNamespace(id=f"adk-session-{next(_ids)}")


class InMemoryRunner:
    def __init__(self, *, agent, app_name: str):
        self.agent, self.app_name = agent, app_name
        self.session_service = _Sessions()

    async def run_async(self, *, user_id: str, session_id: str, new_message):
        prompt = new_message.parts[0].text
        answer = model_call(self.agent.model, prompt, f"answer to: {prompt}", operation="invoke_agent")
        yield SimpleNamespace(content=SimpleNamespace(parts=[SimpleNamespace(text=answer)]))
