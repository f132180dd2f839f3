"""http(s) URLs: the document is streamed to a temporary file (never held in memory), then read as a file;
results keep the URL as the trace's source."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, Optional, Union

from ..errors import InputFileError, first_line
from ..results import InputError
from ..traces.model import ConvertedTrace
from ..traces.readers import ReadPosition
from .base import ReadContext, TraceSource
from .files import FileSource

__all__ = ["DOWNLOAD_IDLE_TIMEOUT", "HttpSource"]

DOWNLOAD_IDLE_TIMEOUT = 60.0
"""Seconds an http(s) input may send nothing before its download fails."""


class HttpSource(TraceSource):
    """``http://…`` or ``https://…``: a trace file (or logs file) served over HTTP."""

    name: ClassVar[str] = "http"
    aliases: ClassVar[tuple[str, ...]] = ("https",)

    def __init__(self, item: str) -> None:
        super().__init__(item)
        self._folder: Optional[Path] = None
        self._file: Optional[FileSource] = None
        self._error: Optional[InputFileError] = None

    def prepare(self, ctx: ReadContext) -> None:
        """Download first: a logs file among the URLs is known before any trace is converted."""
        self._folder = Path(tempfile.mkdtemp(prefix="agentevals-read-"))
        path = self._folder / (Path(self.item.split("?")[0]).name or "input")
        from ..core._http import request

        try:
            with path.open("wb") as out:  # no overall deadline: a large input keeps arriving; each read has one
                answer = request("GET", self.item, timeout=DOWNLOAD_IDLE_TIMEOUT, deadline=None,
                                 follow_redirects=True, into=out)
        except OSError as exc:  # HttpError is one
            self._error = InputFileError(f"{self.item}: cannot download: {first_line(exc)}")
            return
        if not answer.ok:
            self._error = InputFileError(f"{self.item}: cannot download: {answer.status} {answer.reason}")
            return
        self._file = FileSource(str(path))
        self._file.prepare(ctx)

    def weight(self) -> int:
        return self._file.weight() if self._file is not None else 1

    def read(self, ctx: ReadContext, position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
        if self._error is not None:
            raise self._error
        assert self._file is not None
        local = str(self._file.item)
        try:
            for item in self._file.read(ctx, position):
                if isinstance(item, InputError):
                    item.source, item.error = item.source.replace(local, self.item), item.error.replace(local, self.item)
                elif item.source == local:
                    item.source = self.item
                yield item
        except InputFileError as exc:
            raise InputFileError(str(exc).replace(local, self.item)) from None

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
