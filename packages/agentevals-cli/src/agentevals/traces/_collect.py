"""One read trace → its converted trace, or an ``InputError`` naming it: never raises.

Apart from the runner so that reader processes (``readers._parallel``) import only the readers and the
converters, not the engine and its models (a tenth of a second per process).
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

from .convert import convert_trace
from .model import ConvertedTrace, Trace
from .readers import LogEvents, attach_log_events

if TYPE_CHECKING:
    from ..results import InputError

__all__ = ["PackedTrace", "convert_for_worker", "convert_into", "one_line", "pack_for_worker", "unpacked"]

log = logging.getLogger("agentevals.engine")  # the engine's logger: reading is the engine's first step


def convert_into(trace: Trace, log_events: LogEvents, keep_spans: bool, out: list[ConvertedTrace],
                 errors: list[InputError]) -> None:
    """Convert ``trace`` and append it to ``out``, or its error to ``errors``. With ``keep_spans=False``
    the raw spans are dropped (``ConvertedTrace.trace = None``)."""
    if log_events:  # OTLP log exports given beside the traces carry GenAI message content
        attach_log_events(trace, log_events)
    try:
        item = convert_trace(trace)
    except Exception as exc:
        from ..results import InputError

        log.debug("converting trace %s of %s failed", trace.trace_id, trace.source, exc_info=True)
        errors.append(InputError(source=trace.source, error=(
            f"{trace.source}: trace {trace.trace_id} could not be converted: "
            f"{type(exc).__name__}: {one_line(exc)}")))
        return
    item.response_ids = response_ids(trace, item.invocations)
    if not keep_spans:
        item.trace = None
    out.append(item)


RESPONSE_ID = "gen_ai.response.id"


def response_ids(trace: Trace, invocations: list) -> dict[str, str]:
    """Each invocation span's ``gen_ai.response.id``: that of the latest-ending span under it (or itself)
    carrying one. Empty when the trace names none."""
    turns = {inv.span_id for inv in invocations if getattr(inv, "span_id", None)}
    carrying = [s for s in trace.spans if isinstance(s.attributes.get(RESPONSE_ID), str) and s.attributes[RESPONSE_ID]]
    if not turns or not carrying:
        return {}
    parent = {s.span_id: s.parent_span_id for s in trace.spans}
    found: dict[str, tuple[int, str]] = {}
    for span in carrying:
        node: Optional[str] = span.span_id
        hops = 0
        while node is not None and node not in turns and hops < 1000:  # a cycle in bad data ends here
            node, hops = parent.get(node), hops + 1
        if node is not None and node in turns and (node not in found or span.end_ns >= found[node][0]):
            found[node] = (span.end_ns, span.attributes[RESPONSE_ID])
    return {turn: rid for turn, (_, rid) in found.items()}


def convert_for_worker(keep_spans: bool, trace: Trace) -> list[Union[ConvertedTrace, InputError]]:
    """``convert_into`` in a reader process (no log records there: files with them are read serially)."""
    out: list = []
    errors: list = []
    convert_into(trace, {}, keep_spans, out, errors)
    return out + errors


@dataclass(frozen=True, slots=True)
class PackedTrace:
    """A converted trace as a reader process pickled it, with what grouping reads beside the pickle.

    The engine's grouper holds these (smaller than the objects) and spills the bytes as they are; the
    trace is unpickled once, when its case is formed (``unpacked``): no second pickling in the run's process.
    """

    trace_id: str
    session_id: Optional[str]
    start_ns: int
    source: str
    blob: bytes

    @classmethod
    def of(cls, trace: ConvertedTrace) -> PackedTrace:
        return cls(trace.trace_id, trace.session_id, trace.start_ns, trace.source,
                   pickle.dumps(trace, protocol=pickle.HIGHEST_PROTOCOL))

    def unpack(self) -> ConvertedTrace:
        trace: ConvertedTrace = pickle.loads(self.blob)
        return trace


def unpacked(trace: Union[ConvertedTrace, PackedTrace]) -> ConvertedTrace:
    """The trace itself, whichever form it came in."""
    return trace.unpack() if isinstance(trace, PackedTrace) else trace


def pack_for_worker(keep_spans: bool, trace: Trace) -> list[Union[PackedTrace, InputError]]:
    """``convert_for_worker``, each converted trace packed (``ReadContext.packed``)."""
    return [PackedTrace.of(item) if isinstance(item, ConvertedTrace) else item
            for item in convert_for_worker(keep_spans, trace)]


def one_line(exc: BaseException) -> str:
    """An exception's text on one line (its lines joined with `` | ``)."""
    text = str(exc).strip() or type(exc).__name__
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())
