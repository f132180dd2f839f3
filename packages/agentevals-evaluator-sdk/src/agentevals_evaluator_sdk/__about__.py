"""Version of the agentevals-evaluator-sdk distribution (independent of the wire protocol version)."""

__version__ = "0.3.0"
