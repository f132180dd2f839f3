"""The run store: every run recorded case by case (SQLite by default, Postgres by URL; one schema).

Where it lives: ``--store PATH|URL``, else ``AGENTEVALS_STORE``, else ``runs.sqlite`` in the user data
folder (``default_location()``; e.g. ``~/.local/share/agentevals/runs.sqlite`` on Linux).

Example:
    ```python
    from agentevals.store import RunStore, default_location, metric_trend

    store = RunStore.open(default_location())
    latest = store.load_run(store.resolve("latest"))
    print(latest.run_id, latest.totals()["pass_rate"])
    for point in metric_trend(store, "tool_trajectory_avg_score", limit=10):
        print(point["run_id"], point["pass_rate"], point["mean_score"])
    ```
"""

from __future__ import annotations

import os
from typing import Optional

from ._db import SCHEMA_VERSION, connect
from ._recording import LiveRunRecorder, StoreConsumer, StoreReuse
from ._store import RUN_STATUSES, LabelRecord, RunRecord, RunStore, SourceRecord, new_run_id, utc_now
from ._summaries import case_counts, metric_names
from ._trend import case_performance, metric_trend

__all__ = ["RUN_STATUSES", "SCHEMA_VERSION", "LabelRecord", "LiveRunRecorder", "RunRecord", "RunStore", "SourceRecord",
           "StoreConsumer", "StoreReuse", "case_counts", "case_performance", "connect", "default_location",
           "metric_names", "metric_trend", "new_run_id", "store_location", "utc_now"]

ENV_VAR = "AGENTEVALS_STORE"


def default_location() -> str:
    """``runs.sqlite`` in the user data folder (platformdirs)."""
    from platformdirs import user_data_dir

    return os.path.join(user_data_dir("agentevals", appauthor=False), "runs.sqlite")


def store_location(explicit: Optional[str] = None) -> str:
    """``explicit`` (``--store``), else ``$AGENTEVALS_STORE``, else ``default_location()``."""
    return explicit or os.environ.get(ENV_VAR) or default_location()
