"""The community registry on GitHub: ``index.yaml`` and evaluator files over raw-file URLs.

Environment: ``AGENTEVALS_EVALUATOR_REPO`` (default ``agentevals-dev/evaluators``),
``AGENTEVALS_EVALUATOR_BRANCH`` (default ``main``; a config entry's ``revision:`` overrides it),
``AGENTEVALS_GITHUB_RAW_URL`` (default ``https://raw.githubusercontent.com``; for GitHub Enterprise,
mirrors and tests), ``AGENTEVALS_GITHUB_TOKEN`` or ``GITHUB_TOKEN`` (private repositories).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from urllib.parse import quote

from ..execution.cache import content_hash
from ..execution.deadline import current_deadline
from .base import EvaluatorInfo, EvaluatorSource, SourceError, parse_index, sibling_refs

__all__ = ["DEFAULT_BRANCH", "DEFAULT_RAW_URL", "DEFAULT_REPO", "GitHubEvaluatorSource"]

DEFAULT_REPO = "agentevals-dev/evaluators"
DEFAULT_BRANCH = "main"
DEFAULT_RAW_URL = "https://raw.githubusercontent.com"
LIST_TIMEOUT = 20.0
FETCH_TIMEOUT = 60.0


class GitHubEvaluatorSource(EvaluatorSource):
    """Evaluators in a GitHub repository with a CI-generated ``index.yaml`` at its root."""

    def __init__(
        self,
        repo: str | None = None,
        branch: str | None = None,
        *,
        index_path: str = "index.yaml",
        token: str | None = None,
        raw_url: str | None = None,
    ) -> None:
        self._repo = repo
        self._branch = branch
        self._index_path = index_path
        self._token = token
        self._raw_url = raw_url

    name = "github"

    @property
    def repo(self) -> str:
        return self._repo or os.environ.get("AGENTEVALS_EVALUATOR_REPO") or DEFAULT_REPO

    @property
    def branch(self) -> str:
        return self._branch or os.environ.get("AGENTEVALS_EVALUATOR_BRANCH") or DEFAULT_BRANCH

    @property
    def raw_url(self) -> str:
        return (self._raw_url or os.environ.get("AGENTEVALS_GITHUB_RAW_URL") or DEFAULT_RAW_URL).rstrip("/")

    def _headers(self) -> dict[str, str]:
        token = self._token or os.environ.get("AGENTEVALS_GITHUB_TOKEN") or os.environ.get("GITHUB_TOKEN")
        return {"Authorization": f"token {token}"} if token else {}

    def url(self, path: str) -> str:
        quoted = "/".join(quote(segment, safe="") for segment in path.split("/"))
        repo = "/".join(quote(segment, safe="") for segment in self.repo.split("/"))  # from the environment
        return f"{self.raw_url}/{repo}/{quote(self.branch, safe='')}/{quoted}"

    def cache_key(self) -> str:
        # Different repos, branches or mirrors never share cached files.
        return f"github/{content_hash(self.raw_url, self.repo, self.branch)}"

    def configured(self, *, revision: str | None = None, path: str | None = None) -> EvaluatorSource:
        if path is not None:
            raise ValueError("source 'github' does not take 'path' (set AGENTEVALS_EVALUATOR_REPO)")
        if revision is None:
            return self
        return GitHubEvaluatorSource(self._repo, revision, index_path=self._index_path, token=self._token,
                                     raw_url=self._raw_url)

    async def _get(self, path: str, *, default_timeout: float) -> bytes | None:
        from ._http import http_get

        return await http_get(self.url(path), deadline=current_deadline(default_timeout), headers=self._headers())

    async def list_evaluators(self) -> list[EvaluatorInfo]:
        body = await self._get(self._index_path, default_timeout=LIST_TIMEOUT)
        where = f"{self.repo}@{self.branch}:{self._index_path}"
        if body is None:
            raise SourceError(f"{where} not found (HTTP 404)")
        return parse_index(body.decode("utf-8", "replace"), source=self.source_name, where=where)

    async def fetch_evaluator(self, ref: str, dest: Path) -> Path:
        # return_exceptions: every download has finished when this returns (none is left running
        # to fail unobserved at exit); then the evaluator's own failure is the one reported.
        outcomes = await asyncio.gather(
            self._get(ref, default_timeout=FETCH_TIMEOUT),
            *(self._get(sibling, default_timeout=FETCH_TIMEOUT) for sibling, _ in sibling_refs(ref)),
            return_exceptions=True,
        )
        bodies: list[bytes | None] = []
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
            bodies.append(outcome)
        main, *siblings = bodies
        if main is None:
            raise SourceError(f"{ref} not found in {self.repo}@{self.branch} (HTTP 404)")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(main)
        for (_, name), body in zip(sibling_refs(ref), siblings, strict=True):
            if body is not None:
                (dest.parent / name).write_bytes(body)
        return dest
