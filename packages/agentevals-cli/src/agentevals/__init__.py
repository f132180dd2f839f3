"""agentevals: score AI-agent runs recorded as OpenTelemetry traces.

The command line is ``agentevals``; this package is also usable as a library.
"""

from .__about__ import __version__ as __version__
from .errors import AgentevalsError as AgentevalsError
from .errors import ConfigError as ConfigError
from .protocol import PROTOCOL_VERSION as PROTOCOL_VERSION

__all__ = ["PROTOCOL_VERSION", "AgentevalsError", "ConfigError", "__version__"]
