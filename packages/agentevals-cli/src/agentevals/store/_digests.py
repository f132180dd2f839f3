"""Input files' digests kept in the run store by their stat: a rerun of unchanged files does not read them.

    digests = stored_file_digests(store.db, [Path("traces.json")])   # [sha256 of its bytes], as keys.file_digest

One row per absolute path: the file's size, mtime, ctime and (device, inode) as ``stat`` gave them just before it
was hashed, its sha256, and when the hashing began. A row answers only when every one of those stat fields is
unchanged *and* the file's last change (the later of mtime and ctime) lies more than ``RACY_NS`` before the
hashing began. Without that second rule a file rewritten within one timestamp tick of being hashed (same size,
same mtime: timestamps move in clock ticks, and some file systems keep whole seconds) would keep its old digest:
git's "racy clean" problem. Such an entry is not trusted; the file is hashed again and the row rewritten, which
it answers once the file has been left alone long enough. Rows older than ``KEEP_NS`` are dropped as new ones
are written. ctime counts because nothing but a change sets it (a
tool that restores mtime, ``touch -d`` or ``rsync -t``, cannot hide an edit).

The rows are a cache: a store that cannot be read or written costs a hash, never a wrong digest or a failed run.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .keys import file_digest

if TYPE_CHECKING:
    from ._db import Database

__all__ = ["KEEP_NS", "RACY_NS", "stored_file_digests"]

log = logging.getLogger(__name__)

RACY_NS = 2_000_000_000
"""A file changed less than this long (2 s) before it was hashed may change again within the same timestamp
tick: its row is not trusted (whole-second mtimes, and a little clock skew of a network file system)."""
KEEP_NS = 30 * 24 * 3600 * 1_000_000_000
"""Rows hashed longer ago than this (30 days) are dropped when new ones are written: files of a temporary
folder (a CI job's checkout) do not pile up; a file still in use is hashed once more."""
_CHUNK = 500
"""Paths looked up per statement (under every backend's limit on parameters)."""


def _stat_row(st: os.stat_result) -> tuple[int, int, int, str]:
    # device:inode as text: both are unsigned and may not fit a signed 64-bit column.
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, f"{st.st_dev}:{st.st_ino}"


def stored_file_digests(db: Database, paths: Sequence[Path]) -> list[str]:
    """The sha256 of each regular file in ``paths`` (as ``keys.file_digest``), from ``db``'s rows where they
    are trusted (see the module docstring), else by hashing the file and recording it.

    Raises ``OSError`` as ``file_digest`` does (a file that cannot be read); a store error only costs the hash.
    """
    names = [os.path.abspath(p) for p in paths]
    stored: dict[str, tuple[int, int, int, str, str, int]] = {}
    try:
        unique = list(dict.fromkeys(names))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start:start + _CHUNK]
            for path, size, mtime, ctime, inode, sha, hashed in db.execute(
                    "SELECT path, size, mtime_ns, ctime_ns, inode, sha256, hashed_ns FROM file_digests "
                    f"WHERE path IN ({', '.join('?' * len(chunk))})", chunk):
                stored[path] = (int(size), int(mtime), int(ctime), inode, sha, int(hashed))
    except Exception:  # any backend's error (a locked file, a stopped server): hash them all
        log.debug("file digests: lookup failed", exc_info=True)
        stored = {}
    digests: list[str] = []
    fresh: dict[str, tuple[int, int, int, str, str, int]] = {}
    for name, path in zip(names, paths, strict=True):
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a folder's stat does not change with its files' bytes
            digests.append(file_digest(Path(path)))
            continue
        row = stored.get(name)
        if row is not None and row[:4] == _stat_row(st) and max(st.st_mtime_ns, st.st_ctime_ns) < row[5] - RACY_NS:
            digests.append(row[4])
            continue
        hashed = time.time_ns()  # before reading: a change made while hashing falls inside the racy window
        digest = file_digest(Path(path))
        after = os.stat(path)
        if _stat_row(after) == _stat_row(st):  # not changed while hashed: the row describes these bytes
            fresh[name] = (*_stat_row(st), digest, hashed)
        digests.append(digest)
    if fresh:
        _record(db, fresh)
    return digests


def _record(db: Database, rows: dict[str, tuple[int, int, int, str, str, int]]) -> None:
    try:
        with db.transaction():
            db.execute("DELETE FROM file_digests WHERE hashed_ns < ?", (time.time_ns() - KEEP_NS,))
            db.executemany(
                "INSERT INTO file_digests (path, size, mtime_ns, ctime_ns, inode, sha256, hashed_ns) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET size = excluded.size, "
                "mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, inode = excluded.inode, "
                "sha256 = excluded.sha256, hashed_ns = excluded.hashed_ns",
                [(path, *row) for path, row in rows.items()])
    except Exception:  # a cache: the next run hashes again
        log.debug("file digests: not recorded", exc_info=True)
