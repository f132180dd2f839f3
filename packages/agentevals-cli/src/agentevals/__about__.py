"""Version of the agentevals-cli distribution (independent of the wire protocol version)."""

__version__ = "0.2.0"
