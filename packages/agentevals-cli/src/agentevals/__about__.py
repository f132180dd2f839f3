"""Version of the agentevals-cli distribution (independent of the wire protocol version)."""

__version__ = "0.12.0"
