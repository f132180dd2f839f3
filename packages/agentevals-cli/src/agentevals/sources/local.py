"""A team's own registry on disk: a directory, or a git repository, with an ``index.yaml`` at its root.

Where: a config entry's ``path:`` (relative to the config file) or ``AGENTEVALS_EVALUATOR_PATH``.
How files are read:

- a plain directory, or a git working tree without ``revision:`` → the files as they are on disk;
- ``revision:`` (branch, tag or commit), or a bare repository (``HEAD`` by default) → the committed
  files via ``git show``.

Reading the disk is cheap, so files are copied into the cache again on every run (edits and moved
branches show up at once); the copy keeps a stable place so that venvs and node_modules are reused.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..execution.cache import content_hash
from ..execution.deadline import current_deadline
from .base import EvaluatorInfo, EvaluatorSource, SourceError, SourceNotConfigured, parse_index, sibling_refs

__all__ = ["PATH_ENV", "LocalEvaluatorSource"]

PATH_ENV = "AGENTEVALS_EVALUATOR_PATH"
GIT_TIMEOUT = 30.0


class LocalEvaluatorSource(EvaluatorSource):
    """Evaluators listed in ``index.yaml`` of a directory or git repository on this machine."""

    refresh = True  # reading the disk is cheap, and edits (or a moved branch) must show up at once

    def __init__(self, path: os.PathLike[str] | str | None = None, revision: str | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._revision = revision

    name = "local"

    @property
    def root(self) -> Path:
        path = self._path or (Path(os.environ[PATH_ENV]) if os.environ.get(PATH_ENV) else None)
        if path is None:
            raise SourceNotConfigured(f"no local evaluator registry: set {PATH_ENV} or give 'path:' in the entry")
        path = path.expanduser().resolve()
        if not path.is_dir():
            raise SourceError(f"local evaluator registry {path} is not a directory")
        return path

    def check(self) -> None:
        self.root  # noqa: B018 - raises SourceError when unset or not a directory

    def _bare(self, root: Path) -> bool:
        return not (root / ".git").exists() and (root / "HEAD").is_file() and (root / "objects").is_dir()

    def _git_revision(self, root: Path) -> str | None:
        """The revision to read from, or None to read the files on disk."""
        if self._revision is not None:
            return self._revision
        return "HEAD" if self._bare(root) else None

    def cache_key(self) -> str:
        root = self.root
        return f"local/{content_hash(str(root), self._revision or '')}"

    def configured(self, *, revision: str | None = None, path: str | None = None) -> EvaluatorSource:
        if revision is None and path is None:
            return self
        return LocalEvaluatorSource(path if path is not None else self._path, revision or self._revision)

    async def _git(self, root: Path, *args: str) -> bytes:
        from ..execution.program import run_command

        git = shutil.which("git")
        if not git:
            raise SourceError(f"git not found on PATH (needed to read {root} at a revision)")
        result = await run_command([git, "-C", str(root), *args], deadline=current_deadline(GIT_TIMEOUT))
        if result.returncode != 0:
            last = result.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SourceError(f"git {args[0]} in {root} failed: {last[-1] if last else result.returncode}")
        return result.stdout

    async def _commit(self, root: Path) -> str | None:
        """The commit to read from, or None to read the files on disk."""
        revision = self._git_revision(root)
        if revision is None:
            return None
        try:
            return (await self._git(root, "rev-parse", "--verify", f"{revision}^{{commit}}")).decode().strip()
        except SourceError:
            raise SourceError(f"revision {revision!r} not found in {root}") from None

    async def _read(self, root: Path, ref: str, commit: str | None) -> bytes | None:
        if commit is None:
            path = (root / ref).resolve()
            if not path.is_relative_to(root):
                raise SourceError(f"ref {ref!r} points outside {root}")
            return path.read_bytes() if path.is_file() else None
        listed = await self._git(root, "ls-tree", "--name-only", commit, "--", ref)
        if not listed.strip():
            return None
        return await self._git(root, "show", f"{commit}:{ref}")

    def _where(self, root: Path) -> str:
        revision = self._git_revision(root)
        return f"{root}@{revision}" if revision else str(root)

    async def list_evaluators(self) -> list[EvaluatorInfo]:
        root = self.root
        body = await self._read(root, "index.yaml", await self._commit(root))
        if body is None:
            raise SourceError(f"{self._where(root)} has no index.yaml")
        return parse_index(body.decode("utf-8", "replace"), source=self.source_name,
                           where=f"{self._where(root)}:index.yaml")

    async def fetch_evaluator(self, ref: str, dest: Path) -> Path:
        root = self.root
        commit = await self._commit(root)
        body = await self._read(root, ref, commit)
        if body is None:
            raise SourceError(f"{ref} not found in {self._where(root)}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(body)
        for sibling, name in sibling_refs(ref):
            data = await self._read(root, sibling, commit)
            if data is not None:
                (dest.parent / name).write_bytes(data)
        return dest
