"""EvaluatorResolver: turn a remote evaluator (source + ref) into a verified local file in the cache.

Cache: ``<cache>/evaluators/<source key>/<ref>`` (the source key separates repositories and branches).
A cached file is reused without asking the source (delete it to download again) unless the source
asks to ``refresh`` (local registries) or the entry's ``sha256`` pin does not match it. Downloads go
to a staging directory, are checked (sha256 pin, requirements.txt of downloaded evaluators), and only
then move into place, so nothing half-downloaded or tampered with is ever run or cached.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path, PurePosixPath

from ..errors import AgentevalsError, EvaluatorFailure
from ..execution.cache import cache_root, content_hash, locked
from ..execution.deadline import Deadline
from .base import EvaluatorSource, SourceError, check_ref

__all__ = ["EvaluatorResolver", "file_sha256", "remove_stale_staging"]

logger = logging.getLogger(__name__)


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file (what ``sha256sum`` prints)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def remove_stale_staging(cache_dir: Path) -> int:
    """Remove staging folders left by a download that was killed (``kill -9``, a power cut).

    A staging folder is ``.fetch-<pid>-<random>``: it is stale when that process is gone. Folders of an
    older agentevals (``.fetch-<random>``) are stale after an hour. Returns how many were removed.
    """
    removed = 0
    try:
        entries = list(cache_dir.glob(".fetch-*"))
    except OSError:
        return 0
    for entry in entries:
        owner = entry.name.split("-")[1] if entry.name.count("-") >= 2 else ""
        if owner.isdigit():
            stale = not _alive(int(owner))
        else:
            try:
                stale = time.time() - entry.stat().st_mtime > 3600
            except OSError:
                continue
        if stale and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class EvaluatorResolver:
    """Downloads and caches remote evaluators; ``resolve`` returns the local file to run."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self._cache_dir = cache_dir

    @property
    def cache_dir(self) -> Path:
        return self._cache_dir or cache_root() / "evaluators"

    def _destination(self, source: EvaluatorSource, ref: str) -> Path:
        root = self.cache_dir.resolve()
        key = source.cache_key()
        if not key or PurePosixPath(key).is_absolute() or ".." in PurePosixPath(key).parts:
            raise SourceError(f"source '{source.source_name}' has an invalid cache key {key!r}")
        dest = (root / key / ref).resolve()
        if not dest.is_relative_to(root):
            raise SourceError(f"ref {ref!r} of source '{source.source_name}' escapes the evaluator cache")
        return dest

    @staticmethod
    def _usable(dest: Path, sha256: str | None) -> bool:
        if not dest.is_file() or dest.is_symlink():
            return False
        if sha256 is None:
            return True
        if file_sha256(dest) == sha256:
            return True
        logger.warning("cached %s does not match its sha256 pin; downloading it again", dest)
        return False

    async def resolve(
        self, source: EvaluatorSource, ref: str, *, deadline: Deadline, sha256: str | None = None
    ) -> Path:
        """The cached, verified copy of ``ref`` from ``source`` (fetched when missing or stale)."""
        check_ref(ref)
        dest = self._destination(source, ref)
        if not source.refresh and self._usable(dest, sha256):
            return dest
        async with locked(f"evaluator-{content_hash(str(dest))}", deadline):
            if not source.refresh and self._usable(dest, sha256):
                return dest
            await self._fetch(source, ref, dest, deadline=deadline, sha256=sha256)
        return dest

    async def _fetch(
        self, source: EvaluatorSource, ref: str, dest: Path, *, deadline: Deadline, sha256: str | None
    ) -> None:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_staging(self.cache_dir)
        staging = Path(tempfile.mkdtemp(prefix=f".fetch-{os.getpid()}-", dir=self.cache_dir))
        try:
            staged = staging / PurePosixPath(ref).name
            deadline.phase = f"fetching {ref} from source '{source.source_name}'"
            logger.info("fetching %s from source '%s'", ref, source.source_name)
            try:
                got = await deadline.wait(source.fetch_evaluator(ref, staged))
            except AgentevalsError:
                raise
            except Exception as exc:  # a third-party source may raise anything
                raise SourceError(f"source '{source.source_name}' could not fetch {ref}: {exc}") from None
            if (got is not None and Path(got) != staged) or not staged.is_file():
                raise SourceError(f"source '{source.source_name}' did not write {ref} where it was asked to")
            if sha256 is not None:
                actual = file_sha256(staged)
                if actual != sha256:
                    raise EvaluatorFailure(
                        f"sha256 mismatch for {source.source_name}:{ref}: expected {sha256}, got {actual}; "
                        "the file was not run (update the pin if the change is intended)"
                    )
            if (staging / "requirements.txt").is_file():
                from ..execution.environments import check_requirements

                check_requirements(staging / "requirements.txt")
            dest.parent.mkdir(parents=True, exist_ok=True)
            for item in staging.iterdir():
                if item.is_file():
                    os.replace(item, dest.parent / item.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
