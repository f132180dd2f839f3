"""Stand-in for google.adk.Agent: keeps its settings."""


class Agent:
    def __init__(self, *, name: str, model: str, instruction: str = "", tools=()):
        self.name, self.model, self.instruction, self.tools = name, model, instruction, list(tools)
