"""Stand-in for google.genai.types: Content and Part."""

from types import SimpleNamespace


class Part(SimpleNamespace):
    @classmethod
    def from_text(cls, *, text: str):
        return cls(text=text)


class Content(SimpleNamespace):
    def __init__(self, *, role: str, parts: list):
        super().__init__(role=role, parts=parts)
