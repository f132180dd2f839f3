"""``python -m agentevals`` runs the command line."""

from agentevals.cli import main

raise SystemExit(main())  # main() returns the exit code of `raise click.exceptions.Exit(n)` paths
