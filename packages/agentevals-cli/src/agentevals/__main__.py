"""``python -m agentevals`` runs the command line."""

from agentevals.cli import main

if __name__ == "__main__":  # not when a reader process imports this module
    raise SystemExit(main())  # main() returns the exit code of `raise click.exceptions.Exit(n)` paths
