"""The ``agentevals`` command line. Only this package prints; everything else returns or raises.

``main`` is the program's entry point; ``cli`` (the click group) is imported on first use, so that the root
command's ``--help`` and ``--version`` are answered without importing click (``_fast``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._main import cli as cli

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the ``agentevals`` console script (and of ``python -m agentevals``).

    Run as the program (arguments from ``sys.argv``, called from ``__main__``), the process owns its process tree
    (``_main.main``), and ``agentevals --help`` / ``--version`` are printed from ``_fast`` when their text is known.
    Called by a host with arguments (a test, an application), every command goes through click::

        from agentevals.cli import main
        main(["run", "traces/helm.json", "-m", "tool_trajectory_avg_score", "--no-store"])  # exits like the program
    """
    program = argv is None and getattr(sys.modules.get("__main__"), "main", None) is main
    if program:
        from ._fast import answered

        if answered(sys.argv[1:]):
            return 0
    from ._main import main as command_line

    return command_line(argv, program=program)


def __getattr__(name: str) -> Any:
    if name == "cli":
        from ._main import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
