"""What ``agentevals run`` does for backend sources (``jaeger+http://…``, ``phoenix+http://…``): the read
window (``--since``, ``--since last`` from the run store's watermarks, the stored window again under
``--resume``/``--rerun-failed``), what the store records about each source, and which input errors are a
source's (exit 2).

    sourced = SourcedInputs.plan(inputs, since="last", store=store, again_from=None)
    options.read_context = sourced.context       # the engine's pull sources read through it
    ... run ...
    store.record_sources(run_id, sourced.records(run))
    code = max(code, 2) if sourced.failures(run) else code
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from ..core.redact import redact
from ..errors import ConfigError
from ..results import InputError, RunResult
from ..trace_sources import ReadContext, is_conversion_error, uri_sources

if TYPE_CHECKING:
    from ..store import SourceRecord

__all__ = ["SourcedInputs"]


@dataclass
class SourcedInputs:
    """The run's backend sources: their keys by URI, and the ``ReadContext`` they read through."""

    context: ReadContext
    keys: dict[str, str] = field(default_factory=dict)
    """Input (as given) → its source key (``PullQuery.key``) for every pull source among the inputs."""
    refused: set[str] = field(default_factory=set)
    """Inputs named by a URI that no source takes (an unknown scheme, a bad parameter, credentials)."""
    notes: list[str] = field(default_factory=list)
    """What the run says about its windows (``--since last`` with no previous run)."""

    @classmethod
    def plan(cls, inputs: list[str], *, since: Optional[str], store: Any, again_from: Optional[str]) -> SourcedInputs:
        """``again_from``: the run whose windows are read again (``--resume``/``--rerun-failed``)."""
        sources = list(uri_sources(inputs))
        if since is None and not sources:  # files only: the pull sources' module is not needed (start-up)
            return cls(ReadContext())
        from ..trace_sources.pull import PullSource, check_since

        sourced = cls(ReadContext(since=check_since(since)))
        for item, source in sources:
            if source is None:
                sourced.refused.add(item)
            elif isinstance(source, PullSource):
                sourced.keys[item] = source.query.key
        if since == "last" and store is None:
            raise ConfigError("--since last needs the run store, where the previous run's window is kept "
                              "(drop --no-store)")
        if store is not None and again_from is not None:
            stored = {s.uri: (s.start, s.end) for s in store.sources(again_from)}
            sourced.context.pinned = {uri: stored[uri] for uri in sourced.keys if uri in stored}
        if since == "last" and store is not None:
            for uri, key in sourced.keys.items():
                if uri in sourced.context.pinned:
                    continue
                found = store.watermark(key)
                if found is None:
                    sourced.notes.append(f"--since last: no completed run of {key} in the run store yet: read "
                                         "the window its URI names (else the last hour)")
                    continue
                sourced.context.watermarks[key] = found[0]
                sourced.notes.append(f"--since last: {key} from {found[0].isoformat()} on (where run {found[1]} "
                                     "stopped)")
        return sourced

    def reading(self) -> str:
        """``reading jaeger+http://host:16686?service=shop: 40 traces`` while a backend source is read (the
        latest that began), "" when none has begun; for the progress display."""
        windows = list(self.context.windows.values())
        if not windows:
            return ""
        now = windows[-1]
        return f"reading {redact(now.uri)}: {now.traces} trace{'s' if now.traces != 1 else ''}"

    def records(self, run: RunResult) -> list[SourceRecord]:
        """What the store keeps about each pull source the run read (its window, and its error if it failed)."""
        from ..store import SourceRecord

        failed = {e.source: e.error for e in self.failures(run)}
        return [SourceRecord(uri=w.uri, key=w.key, start=w.start, end=w.end, traces=w.traces, newest=w.newest,
                             error=failed.get(w.uri)) for w in list(self.context.windows.values())]

    def failures(self, run: RunResult) -> list[InputError]:
        """The run's input errors that are a backend source's (unreachable, refused, a bad URI): exit 2."""
        return [e for e in run.input_errors
                if (e.source in self.keys or e.source in self.refused) and not is_conversion_error(e)]
