"""The ``TraceSource`` interface: one kind of input (files, http(s) URLs, in-memory traces, and next the
query APIs of trace backends) as a stream of converted traces.

A source is one class with a ``name`` (its registry key, and the scheme of its URIs:
``jaeger+http://host/…`` is read by the source named ``jaeger``), made from one input and read in two
steps by ``agentevals.trace_sources.resolve``: ``prepare`` for every input first (a source that holds OTLP
log records adds them to ``ReadContext.log_events`` there, so that they reach every trace, whatever the
order of the inputs), then ``read`` input after input.

Example (a third-party source, registered under the entry-point group ``agentevals.trace_sources``)::

    class DemoSource(TraceSource):
        name: ClassVar[str] = "demo"

        def read(self, ctx: ReadContext, position: ReadPosition) -> Iterator[ConvertedTrace | InputError]:
            yield ConvertedTrace(trace_id="t1", source=self.label, invocations=[...])

    # pyproject.toml: [project.entry-points."agentevals.trace_sources"] demo = "my_pkg:DemoSource"
    agentevals.evaluate(["demo://anything"], metrics=[...])
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Optional, Union

from ..results import InputError
from ..traces.model import ConvertedTrace, Trace
from ..traces.readers import LogEvents, ReadPosition

if TYPE_CHECKING:
    from .pull import SourceWindow

__all__ = ["ReadContext", "TraceInput", "TraceSource"]

TraceInput = Union[str, Path, Trace, ConvertedTrace, "TraceSource"]
"""What ``resolve`` takes: a path or glob, a URI, an in-memory trace, or a ``TraceSource`` itself."""


@dataclass
class ReadContext:
    """What every source of one read shares."""

    trace_format: Optional[str] = None
    """A forced trace file format (``-f``), else detected from content."""
    keep_spans: bool = True
    """Keep each converted trace's raw spans (``ConvertedTrace.trace``); only some evaluators read them."""
    workers: int = 1
    """Processes a large file may be converted by (see ``traces.readers._parallel``)."""
    packed: bool = False
    """Traces converted by those processes come as ``traces._collect.PackedTrace`` (the engine's grouper
    unpacks them when their case is formed); else as ``ConvertedTrace``."""
    log_events: LogEvents = field(default_factory=dict)
    """OTLP log records by (trace id, span id), filled by ``prepare`` before any trace is converted."""
    since: Optional[str] = None
    """``--since``: a duration (``7d``) or RFC 3339 time for pull sources whose URI names no window, or
    ``"last"``: each pull source from its ``watermarks`` entry on."""
    watermarks: dict[str, datetime] = field(default_factory=dict)
    """``--since last``: pull source key (``PullQuery.key``) → the end of the window its last run read."""
    windows: dict[str, SourceWindow] = field(default_factory=dict)
    """Filled by pull sources as they read: source URI → the window read (for the run store)."""
    pinned: dict[str, tuple[datetime, datetime]] = field(default_factory=dict)
    """Source URI → the exact window to read again, whatever its ``since``/``--since`` say (``--resume`` and
    ``--rerun-failed`` re-read the window the stored run read, not one ending now)."""
    skip_trace: Optional[Callable[[str], bool]] = None
    """Trace id → whether to leave that trace out, unread by the engine (``run --unscored``: the store has a
    result for it; ``serve --pull``: scored by an earlier poll). Counted in ``skipped``."""
    skipped: int = 0
    """Traces ``skip_trace`` left out."""
    sessions: Optional[dict[str, dict[str, int]]] = None
    """When a dict: the label of every source that yielded a trace with a session id → how many traces it
    yielded of each session id, added as they are read (``run`` records which files' cases a later run may
    take alone, ``store._perfile``)."""
    total_weight: int = 0
    """What the inputs weigh together (a file: its size in bytes; a backend source: 1), set once every input
    is prepared and before the first trace; 0 until then (the progress display's ``X of Y MB``)."""


class TraceSource(ABC):
    """One input as a stream of ``ConvertedTrace`` (or ``InputError``) items. Never raises for bad input:
    an unreadable input is one ``InputError`` (``InputFileError`` raised by ``read`` becomes one too)."""

    name: ClassVar[str]
    """Registry key and URI scheme (``<name>://…`` or ``<name>+<transport>://…``)."""
    aliases: ClassVar[tuple[str, ...]] = ()
    """Other names (and URI schemes) this source answers to."""
    skips_traces: ClassVar[bool] = False
    """Whether ``read`` itself leaves out the traces ``ctx.skip_trace`` names, before parsing or converting them
    (counted in ``ctx.skipped``); ``resolve`` asks it of every converted trace of the other sources."""

    def __init__(self, item: Any) -> None:
        self.item = item

    @property
    def label(self) -> str:
        """The input as results name it (``ConvertedTrace.source``, ``InputError.source``)."""
        return str(self.item)

    def prepare(self, ctx: ReadContext) -> None:
        """Called for every input before any is read: add the input's OTLP log records to
        ``ctx.log_events`` (and remember what else had to be read for that). Default: nothing."""

    def weight(self) -> int:
        """The input's share of the reading (a file: its size in bytes), for the run's progress estimate."""
        return 1

    @abstractmethod
    def read(self, ctx: ReadContext, position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
        """The input's converted traces (and conversion errors), updating ``position.fraction`` (0 to 1)."""

    def close(self) -> None:
        """Release what the source holds (temporary files); called once the read is over."""
