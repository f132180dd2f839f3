"""The ``agentevals`` command line. Only this package prints; everything else returns or raises."""

from ._main import cli as cli
from ._main import main as main

__all__ = ["cli", "main"]
