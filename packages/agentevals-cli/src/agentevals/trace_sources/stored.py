"""An input file whose cases a stored run holds (``store._perfile``): read as those cases, the file itself
never opened. The engine places them where the file's own cases would come (``engine.output.Output.stored``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from ..results import CaseResult, InputError
from ..traces.model import ConvertedTrace
from ..traces.readers import ReadPosition
from .base import ReadContext, TraceSource

__all__ = ["StoredCases", "StoredFile"]


@dataclass
class StoredCases:
    """What a ``StoredFile`` yields in place of its traces: its ``count`` cases, read as they are emitted."""

    label: str
    cases: Iterable[CaseResult]
    count: int
    shares: bool = False
    """Two of the file's traces share a session id (under ``group_by: auto`` the run groups conversations)."""


class StoredFile(TraceSource):
    """The file ``path`` (as the run was given it) as its stored ``cases``: no ``prepare`` (its log records,
    if it had any, were not taken: ``store._perfile`` takes only files of runs without any), one item."""

    name: ClassVar[str] = "stored-file"

    def __init__(self, path: str, cases: Iterable[CaseResult], count: int, *, shares: bool = False) -> None:
        super().__init__(path)
        self.cases = cases
        self.count = count
        self.shares = shares

    def weight(self) -> int:
        try:
            return max(1, os.stat(self.item).st_size)  # as the file's own source weighs it (progress)
        except (OSError, ValueError):
            return 1

    def read(self, ctx: ReadContext, position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
        position.fraction = 1.0
        stored: Any = StoredCases(self.label, self.cases, self.count, self.shares)  # a stand-in the engine knows, not a trace
        yield stored
