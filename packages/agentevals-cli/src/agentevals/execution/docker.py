"""``executor: docker``: run the evaluator in a throw-away container, its directory mounted read-only.

    docker run --rm -i --name agentevals-<id> --network none --read-only --tmpfs /tmp
               -v <evaluator dir>:/evaluator:ro -w /evaluator [SDK mount] <image> <command> <file>

- Image: ``docker.image`` in the evaluator's ``evaluator.yaml``, else ``$AGENTEVALS_DOCKER_IMAGE``, else
  by language: ``python:<the CLI's X.Y>-slim`` for ``.py``, ``node:22-slim`` for ``.js``/``.mjs``/
  ``.cjs``/``.ts`` (``.ts`` through Node's type stripping).
- Network: none, unless ``docker.network`` in ``evaluator.yaml`` names one (e.g. ``bridge``).
- Python evaluators import ``agentevals_evaluator_sdk`` from the CLI's own site-packages, mounted
  read-only (works when the host is Linux on the image's architecture; elsewhere use an image that
  has the SDK installed). ``requirements.txt`` is not installed: bake dependencies into the image.
- The deadline covers the container: at the deadline or on Ctrl-C it is removed (``docker rm -f``).
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import sys
from pathlib import Path
from typing import Any

from ..protocol import EvalInput, EvalResult, encode_input
from .backends import EvaluatorBackend
from .deadline import current_deadline
from .manifest import read_manifest
from .process import run_process
from .program import ProgramFailure, read_result, run_command

__all__ = ["IMAGE_ENV", "DockerBackend", "DockerExecutor"]

IMAGE_ENV = "AGENTEVALS_DOCKER_IMAGE"
MOUNT = "/evaluator"
SDK_MOUNT = "/opt/agentevals/site-packages"
NODE_IMAGE = "node:22-slim"
REMOVE_TIMEOUT = 10.0


def _sdk_site_packages() -> Path | None:
    """The directory that holds the CLI's ``agentevals_evaluator_sdk`` (not imported, only located)."""
    spec = importlib.util.find_spec("agentevals_evaluator_sdk")
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).resolve().parent.parent


class DockerExecutor(EvaluatorBackend):
    """Runs an evaluator file in a container (``executor: docker``)."""

    name = "docker"

    def __init__(self, path: Path, timeout: float = 30) -> None:
        self._path = Path(path).resolve()
        self._timeout = float(timeout)
        docker = shutil.which("docker")
        if not docker:
            raise RuntimeError("docker not found on PATH (needed for `executor: docker`); install Docker")
        self._docker = docker
        manifest = read_manifest(self._path.parent)
        settings: Any = (manifest.model_extra or {}).get("docker") if manifest else None
        settings = settings if isinstance(settings, dict) else {}
        self._image = str(settings.get("image") or os.environ.get(IMAGE_ENV) or self._default_image())
        self._network = str(settings.get("network") or "none")

    def _default_image(self) -> str:
        if self._path.suffix.lower() == ".py":
            return f"python:{sys.version_info.major}.{sys.version_info.minor}-slim"
        return NODE_IMAGE

    def command(self, container: str) -> list[str]:
        """The ``docker run`` argv for one evaluation in the container named ``container``."""
        argv = [self._docker, "run", "--rm", "-i", "--name", container, "--network", self._network,
                "--read-only", "--tmpfs", "/tmp", "-v", f"{self._path.parent}:{MOUNT}:ro", "-w", MOUNT]
        file = f"{MOUNT}/{self._path.name}"
        suffix = self._path.suffix.lower()
        if suffix == ".py":
            site = _sdk_site_packages()
            if site is not None:
                argv += ["-v", f"{site}:{SDK_MOUNT}:ro", "-e", f"PYTHONPATH={SDK_MOUNT}"]
            return [*argv, self._image, "python", file]
        if suffix == ".ts":
            return [*argv, self._image, "node", "--experimental-strip-types",
                    "--disable-warning=ExperimentalWarning", file]
        return [*argv, self._image, "node", file]

    async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
        version = eval_input.protocol_version
        payload = encode_input(eval_input, version).encode("utf-8")
        deadline = current_deadline(self._timeout)
        container = f"agentevals-{secrets.token_hex(6)}"
        deadline.phase = f"running {self._path.name} in docker ({self._image})"
        try:
            result = await run_command(self.command(container), deadline=deadline, payload=payload)
        except BaseException:
            # Killing the docker client (deadline, Ctrl-C) does not stop its container: remove it.
            await self._remove(container)
            raise
        if result.returncode == 125:  # docker itself failed (no daemon, no image…), not the evaluator
            lines = [line for line in result.stderr.decode("utf-8", "replace").splitlines()
                     if line.strip() and not line.startswith("Run 'docker")]  # the usage hint says nothing
            raise ProgramFailure(f"docker could not run {self._image}: {lines[-1].strip() if lines else 'exit 125'}",
                                 stderr=result.stderr)
        return read_result(result, name=metric_name, threshold=eval_input.threshold,
                           n_invocations=len(eval_input.invocations), sent_version=version)

    async def _remove(self, container: str) -> None:
        try:
            await run_process([self._docker, "rm", "-f", container], timeout=REMOVE_TIMEOUT)
        except Exception:  # best effort; the container was started with --rm
            pass


DockerBackend = DockerExecutor
"""Deprecated alias of ``DockerExecutor``."""
