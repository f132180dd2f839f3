"""How far a reader has got through its file, for the engine's estimate of a run's size."""

from __future__ import annotations

__all__ = ["ReadPosition"]


class ReadPosition:
    """The fraction (0 to 1) of one file read up to the trace just yielded; readers update it when one is
    given. A whole-file read counts traces (the document is in memory: trace ``i`` of ``n`` is at
    ``(i + 1) / n``); a streamed read counts bytes (the stream's offset)."""

    __slots__ = ("fraction",)

    def __init__(self) -> None:
        self.fraction = 0.0
