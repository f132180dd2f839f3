"""``executor: ray``: evaluations across a Ray cluster (the ``ray`` extra; ``ray`` is imported only here,
only when a run asks for it).

This module is the execution side: connecting to a cluster (``connect``), shipping evaluators and their
files to actors (``ship_evaluators``, ``unpack_bundle``), and ``executor: ray`` on one ``code`` evaluator
(``RayBackend``: that evaluator alone runs in ``ProgramWorker`` actors, the other evaluators locally).
It imports nothing from the engine (``agentevals.engine``).

The run-level mode, ``agentevals run --executor ray``, is the engine's Ray pool: ``agentevals.engine.ray_pool``
(``RayPool``, ``TraceReader``, ``EvalWorker``), which forms cases and orders results as the engine does and
uses this module to reach the cluster. ``RayPool`` and its companions are still importable from here
(deprecated; loaded by name on first use, so this module does not import the engine).

Files travel with the job: the folder of each ``code`` / ``python`` evaluator given by a relative path is
zipped into the object store and unpacked by each actor as its working folder (Ray's ``runtime_env``
``working_dir`` takes a local folder only for a whole job, at ``ray.init``, which a run cannot set on a
cluster its caller already joined); a ``requirements.txt`` beside a ``type: python`` evaluator (or a
``code`` evaluator under ``executor: ray``) becomes the actors' ``runtime_env`` ``pip``, and
``docker.image`` in an ``evaluator.yaml`` their ``runtime_env`` ``image_uri``. An absolute path is used
as it is (a shared filesystem).

Secrets follow the local rules (``sandbox_env``): evaluator processes on the cluster start with the
minimal environment plus what their entry lists under ``env:``; those listed variables, and only they,
travel from this process as the actors' ``runtime_env`` ``env_vars`` (``env: inherit`` means the
environment of the cluster's worker, not of this process).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..errors import AgentevalsError, ConfigError, MissingDependencyError, first_line
from ..protocol import EvalInput, EvalResult
from .backends import EvaluatorBackend
from .commands import set_up
from .deadline import Deadline, current_deadline, deadline_scope
from .program import ProgramFailure

if TYPE_CHECKING:
    from ..evaluators.base import BaseEvaluator

__all__ = ["CLOSE_TIMEOUT", "IDLE_SECONDS", "MAX_ATTEMPTS", "NAMESPACE", "ProgramWorker", "RayBackend", "RayExecutor",
           "connect", "disconnect", "end_idle", "keep_idle", "require", "ship_evaluators", "take_idle", "unpack_bundle"]

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
"""Times a batch (or one evaluation under ``executor: ray``) is sent before it becomes ERROR (it is re-sent
only when its actor was lost)."""
CLOSE_TIMEOUT = 10.0
"""Seconds the actors get to stop their evaluator processes at the end of a run."""
CONNECT_TIMEOUT = 10.0
"""Seconds a cluster address gets to answer before the run stops with a usage error."""
NAMESPACE = "agentevals"
"""Ray namespace of the run's actors (the evaluation actors are named ``agentevals-eval-<run>-<n>``)."""

_STAGED_TYPES = ("code", "python")
"""Evaluator types whose file (and its folder) travels with the job to the actors."""


def require() -> Any:
    """The ``ray`` module, or ``MissingDependencyError`` with the install command."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("the ray executor", "ray") from None
    return ray


def connect(address: Optional[str] = None) -> tuple[Any, bool]:
    """Ray, connected: to ``address``, else ``$RAY_ADDRESS``, else a new local instance on the loopback
    interface. Returns the module and whether this call started the connection.

    Once per process: a connection (or local instance) made here stays for the next run of the same process
    (starting a local instance costs seconds, more than a thousand cases' evaluation) and ends with the
    process (Ray's own exit handler), or with ``disconnect``; a connection the caller made is used as it is.

        ray, started = connect()      # a local instance, started now
        ray, started = connect()      # the same one: started is False
    """
    ray = require()
    if ray.is_initialized():
        return ray, False
    address = address or os.environ.get("RAY_ADDRESS")
    common: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if address:
        _check_reachable(address)
    try:
        if address:
            ray.init(address=address, **common)
        else:
            ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", **common)
    except Exception as exc:  # a wrong address, a cluster of another Ray version…: a usage error (exit 2)
        where = address or "a local instance"
        raise ConfigError(f"ray: cannot connect to {where}: {first_line(exc)}") from None
    global _connected_here
    _connected_here = True
    return ray, True


_connected_here = False
"""Whether ``connect`` made this process's Ray connection (``disconnect`` ends only such a one)."""


def disconnect() -> bool:
    """End the Ray connection (and the local instance) that ``connect`` made, if it made one; whether it did.
    Not needed before exit; for a long-lived process that is done with Ray, or wants another cluster."""
    global _connected_here
    if not _connected_here:
        return False
    _connected_here = False
    end_idle()
    import ray

    if ray.is_initialized():
        ray.shutdown()
    return True


IDLE_SECONDS = 30.0
"""How long the evaluation actors of a finished run wait for the process's next run (``keep_idle``)."""

_idle: dict[str, list[Any]] = {}
_idle_lock = threading.Lock()
_idle_timer: Optional[threading.Timer] = None


def idle_key(ray: Any, runtime_env: dict[str, Any]) -> Optional[str]:
    """What a run's actors must share with another run's to serve it (the instance and the ``runtime_env``),
    or None when actors are not kept: only on a local instance this process started (``connect``), never on
    a cluster the caller joined, whose CPUs an idle actor would hold from others."""
    if not _connected_here:
        return None
    return json.dumps([ray.get_runtime_context().gcs_address, runtime_env], sort_keys=True, default=str)


def take_idle(key: Optional[str], count: int) -> list[Any]:
    """Up to ``count`` actors kept under ``key`` by an earlier run of this process (the others are ended)."""
    if key is None:
        return []
    with _idle_lock:
        actors = _idle.pop(key, [])
    _end(actors[count:])
    return actors[:count]


def keep_idle(key: Optional[str], actors: list[Any]) -> bool:
    """Keep a finished run's actors (closed: no evaluator left running) for this process's next run, up to
    ``IDLE_SECONDS``: an actor is a process that imported agentevals, seconds to start again. False (nothing
    kept) when ``key`` is None."""
    global _idle_timer
    if key is None:
        return False
    with _idle_lock:
        _idle.setdefault(key, []).extend(actors)
        if _idle_timer is not None:
            _idle_timer.cancel()
        _idle_timer = threading.Timer(IDLE_SECONDS, end_idle)
        _idle_timer.daemon = True
        _idle_timer.start()
    return True


def end_idle() -> None:
    """End every kept actor (their CPUs are free again): after ``IDLE_SECONDS``, before actors of another kind
    are started (``executor: ray`` on one evaluator), and on ``disconnect``."""
    with _idle_lock:
        actors = [actor for kept in _idle.values() for actor in kept]
        _idle.clear()
    _end(actors)


def _end(actors: list[Any]) -> None:
    if not actors:
        return
    import ray

    for actor in actors:
        try:
            ray.kill(actor, no_restart=True)
        except Exception:  # already gone, or Ray shut down
            log.debug("ending a kept Ray actor failed", exc_info=True)


def _check_reachable(address: str) -> None:
    """``ConfigError`` when a ``host:port`` (or ``ray://host:port``) address does not answer within
    ``CONNECT_TIMEOUT``: Ray itself keeps retrying an unreachable head for minutes."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        return
    if not host or not port:
        return  # ``auto``, ``local``…: Ray resolves them at once
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise ConfigError(f"ray: cannot connect to {address}: {exc.strerror or exc}") from None


def ship_evaluators(evaluators: Sequence[BaseEvaluator]) -> tuple[list[Any], dict[int, str], dict[str, Any],
                                                            Optional[bytes]]:
    """Copies of the evaluators to ship, the staged folder of each that reads a file by a relative path
    (index → folder in the bundle), the actors' ``runtime_env``, and the bundle (a zip of the staged files)."""
    import copy

    shipped: list[Any] = []
    staged: dict[int, str] = {}
    pip: list[str] = []
    stage: Optional[Path] = None
    folders: dict[Path, str] = {}
    for index, ev in enumerate(evaluators):
        ev = copy.copy(ev)
        if getattr(ev.config, "executor", None) == "ray":  # already on the cluster: run it there locally
            ev.config = ev.config.model_copy(update={"executor": "local"})
        relative = _relative_file(ev)
        if relative is not None:
            stage = stage or Path(tempfile.mkdtemp(prefix="agentevals-ray-"))
            folder = folders.setdefault(ev.base_dir, str(len(folders)))
            _stage_file(ev.base_dir, relative, stage / folder)
            staged[index] = folder
            requirements = (ev.base_dir / relative).parent / "requirements.txt"
            if ev.name == "python" and requirements.is_file():
                pip += _requirement_lines(requirements)
        if ev.name == "python" and (relative is not None or _in_memory_class(ev)):
            _portable_python(ev, by_value=relative is None)
        shipped.append(ev)
    runtime_env: dict[str, Any] = {}
    if pip:
        runtime_env["pip"] = sorted(set(pip))
    env_vars = _listed_env([getattr(ev.config, "env", None) for ev in evaluators])
    if env_vars:
        runtime_env["env_vars"] = env_vars
    return shipped, staged, runtime_env, _zip(stage) if stage is not None else None


def _listed_env(settings: Sequence[Any]) -> dict[str, str]:
    """This process's values of the variables evaluator entries list under ``env:`` (explicitly passed to
    their programs, so they go to the cluster too); nothing for ``inherit`` or an empty list."""
    names = {name for setting in settings if isinstance(setting, list) for name in setting}
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}


def _zip(folder: Path) -> bytes:
    """The staged files as zip bytes (the folder is removed)."""
    try:
        archive = shutil.make_archive(str(folder), "zip", root_dir=folder)
        data = Path(archive).read_bytes()
        os.unlink(archive)
        return data
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def unpack_bundle(data: Optional[bytes]) -> Optional[Path]:
    """Unpack a bundle into a new folder of this node (removed by ``close``)."""
    if data is None:
        return None
    import io
    import zipfile

    folder = Path(tempfile.mkdtemp(prefix="agentevals-ray-"))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(folder)
    return folder


def _relative_file(ev: BaseEvaluator) -> Optional[Path]:
    """The file a ``code`` / ``python`` evaluator reads, when given relative to its config's folder."""
    if ev.name not in _STAGED_TYPES:
        return None
    text = str(getattr(ev.config, "path", "") or "")
    if ev.name == "python":
        target, sep, _ = text.rpartition(":")
        if not sep or not (target.endswith(".py") or "/" in target or "\\" in target):
            return None  # an installed module: it must be installed on the cluster
        text = target
    path = Path(text).expanduser()
    if not text or path.is_absolute() or ".." in path.parts or not (ev.base_dir / path).is_file():
        return None  # an absolute path is used as it is (a shared filesystem)
    return path


_MANIFESTS = ("requirements.txt", "package.json", "package-lock.json", "evaluator.yaml")


def _stage_file(base_dir: Path, relative: Path, into: Path) -> None:
    """Copy an evaluator's folder when it is one (it holds a manifest such as ``requirements.txt``), else
    the file and the manifests beside it: a file next to the config must not take the traces along."""
    source = base_dir / relative
    target = into / relative
    folder = source.parent
    if folder.resolve() == base_dir.resolve() or not any((folder / name).is_file() for name in _MANIFESTS):
        target.parent.mkdir(parents=True, exist_ok=True)
        for name in (relative.name, *_MANIFESTS):
            if (folder / name).is_file():
                shutil.copy2(folder / name, target.parent / name)
        return
    if not target.parent.exists():
        shutil.copytree(source.parent, target.parent, symlinks=True,
                        ignore=shutil.ignore_patterns("node_modules", ".venv", "__pycache__", ".git"))


def _requirement_lines(requirements: Path) -> list[str]:
    from .environments import requirement_lines

    return [line for _, line in requirement_lines(requirements)]


def _in_memory_class(ev: BaseEvaluator) -> bool:
    return str(getattr(ev.config, "path", "")).startswith("<in-memory>:")


def _portable_python(ev: Any, *, by_value: bool) -> None:
    """A ``type: python`` evaluator as it can travel: a class loaded from a file is dropped (the actor
    loads it again from the staged file); a class given in memory is pickled by value."""
    if not by_value:
        ev._cls = None
        return
    module = sys.modules.get(getattr(ev._cls, "__module__", ""))
    if module is not None and module.__name__ != "__main__":
        from ray import cloudpickle

        cloudpickle.register_pickle_by_value(module)


# --- ``executor: ray`` on one evaluator ---------------------------------------------------------------


class ProgramWorker:
    """An actor that runs one evaluator program from its unpacked folder (a local subprocess there)."""

    def __init__(self, bundle: bytes, relative: str, timeout: float, own_python: bool) -> None:
        from .backends import SubprocessBackend
        from .runtimes import PythonRuntime

        self.folder = unpack_bundle(bundle)
        runtime = PythonRuntime(sys.executable) if own_python else None  # runtime_env pip installed its needs
        # a bundle is given, so there is a folder
        self.backend = SubprocessBackend(self.folder / relative, timeout, runtime=runtime)  # type: ignore[operator]
        self.backend.use_workers(1)  # a persistent worker (protocol 1.2) per actor, when the program accepts

    async def run(self, payload: dict[str, Any], metric_name: str, remaining: float,
                  env_setting: Any = None) -> dict[str, Any]:
        from .sandbox_env import env_scope

        with deadline_scope(Deadline(remaining)), env_scope(env_setting):  # the entry's ``env:``, as locally
            result = await self.backend.run(EvalInput.model_validate(payload), metric_name)
        return result.model_dump(mode="json")

    async def ready(self) -> bool:
        """Answers once the actor runs (its process started, its ``runtime_env`` installed)."""
        return True

    async def close(self) -> None:
        await self.backend.aclose()
        shutil.rmtree(self.folder, ignore_errors=True)  # type: ignore[arg-type]  # a bundle is given: a folder


class RayExecutor(EvaluatorBackend):
    """``executor: ray``: one evaluator's program runs in Ray actors (one per CPU of the cluster, up to
    ``max_actors``), its folder unpacked on their node, its ``requirements.txt`` as their ``pip``."""

    name = "ray"
    require = staticmethod(require)

    def __init__(self, path: Path, timeout: float = 30, *, max_actors: int = 4) -> None:
        self._path = Path(path).resolve()
        self._timeout = float(timeout)
        self._max_actors = max_actors
        if not self._path.is_file():
            raise FileNotFoundError(f"evaluator file not found: {self._path}")
        self._actors: list[Any] = []
        self._ready: Optional[asyncio.Future[Any]] = None
        self._next = 0
        self._ray: Any = None
        self._env_setting: Any = None

    def _start(self) -> None:
        from .manifest import read_manifest
        from .sandbox_env import current_env_setting

        self._ray, _ = connect(None)
        end_idle()  # kept evaluation actors would hold the CPUs this evaluator's actors need
        self._env_setting = current_env_setting()  # the entry's ``env:`` (this runs within its evaluation)
        stage = Path(tempfile.mkdtemp(prefix="agentevals-ray-"))
        _stage_file(self._path.parent, Path(self._path.name), stage)  # the evaluator's folder is its own here
        bundle = self._ray.put(_zip(stage))
        runtime_env: dict[str, Any] = {}
        requirements = self._path.parent / "requirements.txt"
        own_python = self._path.suffix == ".py" and requirements.is_file()
        if own_python:
            runtime_env["pip"] = _requirement_lines(requirements)
        manifest = read_manifest(self._path.parent)
        docker: Any = (manifest.model_extra or {}).get("docker") if manifest else None  # as ``executor: docker``
        image = docker.get("image") if isinstance(docker, dict) else None
        if image:
            runtime_env["image_uri"] = image
        env_vars = _listed_env([self._env_setting])
        if env_vars:
            runtime_env["env_vars"] = env_vars
        count = max(1, min(self._max_actors, int(self._ray.cluster_resources().get("CPU", 1))))
        worker = self._ray.remote(ProgramWorker).options(num_cpus=1, max_restarts=-1, max_task_retries=0,
                                                         runtime_env=runtime_env or None)
        self._actors = [worker.remote(bundle, self._path.name, self._timeout, own_python) for _ in range(count)]

    async def _all_ready(self) -> None:
        try:
            await asyncio.gather(*(actor.ready.remote() for actor in self._actors))
        except self._ray.exceptions.RayError as exc:
            raise ProgramFailure(f"ray: the evaluator's actors did not start: {first_line(exc)}") from None

    async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
        deadline = current_deadline(self._timeout)
        if not self._actors:
            self._start()
        # Starting the actors (a process each, their runtime_env's pip install) is setup, as a local venv is:
        # under its own deadline, not this evaluation's, so a busy cluster does not turn it into an ERROR.
        if self._ready is None or self._ready.get_loop() is not asyncio.get_running_loop():
            self._ready = asyncio.ensure_future(self._all_ready())  # once per event loop (a run)
        ready = self._ready
        await set_up(deadline, lambda _setup: asyncio.shield(ready), f"starting the Ray actors of {self._path.name}")
        payload = eval_input.model_dump(mode="json")
        errors: list[str] = []
        for _ in range(MAX_ATTEMPTS):
            actor = self._actors[self._next % len(self._actors)]
            self._next += 1
            try:
                ref = actor.run.remote(payload, metric_name, deadline.remaining(), self._env_setting)
                return EvalResult.model_validate(await ref)
            except self._ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, AgentevalsError):
                    raise ProgramFailure(str(cause), stderr=getattr(cause, "stderr", "")) from None
                raise ProgramFailure(f"ray: {first_line(cause or exc)}") from None
            except self._ray.exceptions.RayError as exc:  # the actor was lost: another try, same deadline
                errors.append(first_line(exc))
        raise ProgramFailure(f"ray: the evaluator's worker was lost {MAX_ATTEMPTS} times: {errors[-1]}")

    async def aclose(self) -> None:
        if self._ray is None:
            return
        try:
            await asyncio.wait_for(asyncio.gather(*(a.close.remote() for a in self._actors),
                                                  return_exceptions=True), CLOSE_TIMEOUT)
        except asyncio.TimeoutError:
            pass
        for actor in self._actors:
            self._ray.kill(actor, no_restart=True)
        self._actors = []
        self._ready = None  # Ray itself stays connected for the process's next run (``connect``)


RayBackend = RayExecutor
"""Deprecated alias of ``RayExecutor`` (agentevals-cli 0.11's name)."""


_MOVED = ("BATCH_CASES", "EvalWorker", "FETCH_TIMEOUT", "IN_FLIGHT", "MIN_BATCH", "READ_CHUNK", "REVIVE_TIMEOUT",
          "RayPool", "TraceReader", "TraceRef")
"""Names now in ``agentevals.engine.ray_pool`` (the run-level mode), still importable from here."""


def __getattr__(name: str) -> Any:
    if name in _MOVED:  # by name, at run time: execution does not import the engine (see the docstring)
        import importlib

        return getattr(importlib.import_module("agentevals.engine.ray_pool"), name)
    if name == "DOWNLOAD_IDLE_TIMEOUT":
        import importlib

        return importlib.import_module("agentevals.trace_sources.http").DOWNLOAD_IDLE_TIMEOUT
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
