"""``python -m agentevals`` runs the command line."""

from agentevals.cli import main

main()
