"""The ``--store`` option's help and how a command opens the run store (``runs``, ``store``, ``evalset``, ``labels``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["STORE_HELP", "open_store"]

STORE_HELP = ("Run store: a SQLite file or postgresql:// URL (default: $AGENTEVALS_STORE, else runs.sqlite in "
              "the user data folder).")


def open_store(location: Optional[str], *, migrate: Optional[bool] = None) -> RunStore:
    """The run store at ``location`` (``--store``), else ``$AGENTEVALS_STORE``, else the default file."""
    from ..store import RunStore, store_location

    return RunStore.open(store_location(location), migrate=migrate)
