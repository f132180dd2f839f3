"""Stand-in for langchain_openai.ChatOpenAI: a fixed answer per prompt, and the model call's span."""

from types import SimpleNamespace

from _genai import model_call


class ChatOpenAI:
    def __init__(self, model: str = "gpt-4o-mini", **kwargs):
        self.model = model

    def invoke(self, prompt: str):
        return SimpleNamespace(content=model_call(self.model, prompt, f"answer to: {prompt}"))
