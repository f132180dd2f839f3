"""In-memory traces (``Trace`` objects to convert, ``ConvertedTrace`` objects as they are)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Union

from ..results import InputError
from ..traces._collect import convert_into
from ..traces.model import ConvertedTrace, Trace
from ..traces.readers import ReadPosition
from .base import ReadContext, TraceSource

__all__ = ["MemorySource"]


class MemorySource(TraceSource):
    """One ``Trace`` (converted with the log records of every logs input) or one ``ConvertedTrace``."""

    name: ClassVar[str] = "memory"

    def __init__(self, item: Union[Trace, ConvertedTrace]) -> None:
        super().__init__(item)

    @property
    def label(self) -> str:
        return str(self.item.source)

    def read(self, ctx: ReadContext, position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
        if isinstance(self.item, ConvertedTrace):
            position.fraction = 1.0
            yield self.item
            return
        out: list[ConvertedTrace] = []
        errors: list[InputError] = []
        convert_into(self.item, ctx.log_events, ctx.keep_spans, out, errors)
        position.fraction = 1.0
        yield from out
        yield from errors
