"""Files replaced whole: written beside their target, then renamed onto it (``os.replace``).

A failed or interrupted write leaves the old file as it was and no temporary file behind; readers never see half
a file. The temporary file is created like any file the user asks for (mode from the umask), in the target's
directory (a rename across file systems is not atomic). A path that exists and is not a regular file
(``/dev/stdout``, a FIFO, a device) is written in place, never replaced.

Example:
    ```python
    with replaced(Path("out/report.json")) as fh:   # out/ is created when missing
        fh.write(text)                                 # report.json appears only when the block ends well
    ```
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Optional

__all__ = ["replaced"]


@contextmanager
def replaced(path: Path, *, newline: Optional[str] = None) -> Iterator[IO[str]]:
    """A UTF-8 text file to write ``path``'s new content to; it becomes ``path`` when the block ends without an
    exception (``newline`` as ``open`` takes it: ``""`` for CSV). Raises ``OSError`` as ``open`` does."""
    if path.exists() and not path.is_file():  # a device, a FIFO: write to it, never replace it
        with open(path, "w", encoding="utf-8", newline=newline) as fh:
            yield fh
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8", newline=newline) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
