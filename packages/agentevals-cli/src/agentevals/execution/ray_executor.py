"""``executor: ray``: evaluations across a Ray cluster (the ``ray`` extra; ``ray`` is imported only here,
only when a run asks for it).

Two ways in, one module:

- ``agentevals run --executor ray`` (``RayPool``): a reader actor on the cluster reads and converts the
  inputs (files it can open, or http(s) URLs it downloads) and keeps the converted traces in Ray's
  object store; the driver sees only each trace's ids, forms the cases as a local run does (same grouping, same sequence numbers) and sends them out in
  batches of ``BATCH_CASES`` to long-lived ``EvalWorker`` actors, one per CPU of the cluster. Each actor
  holds its own copy of the run's evaluators for the whole run (builtin metrics, AgentV checks,
  ``type: python`` and code evaluators alike, so their worker processes live as long as the actor) and
  evaluates a batch with ``runner.evaluate_cases``, the local engine's own code: same deadlines, limits
  and error rows. Results go back to the driver's consumers in the run's deterministic order.
- ``executor: ray`` on a ``code`` evaluator (``RayBackend``): that evaluator alone runs in
  ``ProgramWorker`` actors, the other evaluators locally.

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

Stored results (the run store's cache, ``--resume``, ``--rerun-failed``: ``RayPool.reuse``) are looked up
on the driver before a case is sent, with the case's traces fetched from the object store and matched
as the worker will: a case whose every result is stored is assembled on the driver, the others travel
with their stored rows, which the worker uses instead of running those evaluators.

Faults: a batch whose actor died (a killed worker process, a lost node) is sent again, up to
``MAX_ATTEMPTS`` times, to the restarted actor; the driver accepts each case once, so no row is
duplicated, and a batch that cannot be run becomes ERROR rows naming the cause, so no row is dropped.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
import secrets
import shutil
import sys
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from ..errors import AgentevalsError, ConfigError, EvaluatorFailure, MissingDependencyError, first_line
from ..protocol import EvalInput, EvalResult
from ..results import CaseResult, MetricResult
from .backends import EvaluatorBackend
from .commands import set_up
from .deadline import Deadline, current_deadline, deadline_scope
from .program import ProgramFailure

if TYPE_CHECKING:
    from ..consumers import ResultReuse
    from ..evalsets import EvalSet
    from ..evaluators.base import BaseEvaluator
    from ..options import RunOptions
    from ..runner import Case, Stored, TraceInput, _Output, _Pool
    from ..traces.model import ConvertedTrace

__all__ = ["BATCH_CASES", "MAX_ATTEMPTS", "RayBackend", "RayPool", "TraceRef", "connect", "require"]

log = logging.getLogger(__name__)

BATCH_CASES = 32
"""Cases per batch. A round trip to an actor costs ~1 ms (0.5–0.7 ms pipelined; tools/bench/ray_bench.py)
and the cheapest case (one builtin metric) ~5 ms: 32 cases keep the overhead under 1% while a batch stays
small enough to spread a run across many actors and to re-run cheaply when a worker is lost."""
MIN_BATCH = 4
"""Cases sent at once to an actor that has nothing to do (the start of a run, a large cluster)."""
IN_FLIGHT = 2
"""Batches sent to one actor at a time: the next is there when the current one finishes."""
MAX_ATTEMPTS = 3
"""Times a batch is sent before its rows become ERROR (a batch is re-sent only when its actor was lost)."""
READ_CHUNK = 64
"""Converted traces the reader puts in the object store as one object."""
REVIVE_TIMEOUT = 120.0
"""Seconds a lost actor gets to come back before the run goes on without it."""
CLOSE_TIMEOUT = 10.0
"""Seconds the actors get to stop their evaluator processes at the end of a run."""
DOWNLOAD_IDLE_TIMEOUT = 60.0
"""Seconds an http(s) input may send nothing before its download fails."""
CONNECT_TIMEOUT = 10.0
"""Seconds a cluster address gets to answer before the run stops with a usage error."""
FETCH_TIMEOUT = 60.0
"""Seconds the driver waits for a chunk of traces from the object store (to look up stored results)."""

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
    interface. Returns the module and whether this call started the connection (then its caller ends it)."""
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
    return ray, True


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


# --- the driver's side of ``--executor ray`` -----------------------------------------------------------


@dataclass
class TraceRef:
    """What the driver knows of a trace read on the cluster: enough to form cases, and where it lives."""

    trace_id: str
    session_id: Optional[str]
    start_ns: int
    source: str
    chunk: Any
    """``ObjectRef`` of the reader's chunk (a list of ``ConvertedTrace``)."""
    index: int


_Item = tuple[int, "Case", bool, Optional["Stored"]]
"""One case of a batch: ``(seq, case, only_trace, results stored for some of its evaluators)``."""


@dataclass
class _Batch:
    items: list[_Item]
    """``(seq, case, only_trace, stored)`` as ``runner.evaluate_cases`` takes them."""
    attempts: int = 0
    errors: list[str] = field(default_factory=list)


class RayPool:
    """The run's pool under ``--executor ray``: the engine's ``_Pool`` interface (``read``, ``room``,
    ``submit``, ``join``, ``cancel``) over batches sent to ``EvalWorker`` actors."""

    def __init__(self, evaluators: Sequence[BaseEvaluator], options: RunOptions, output: _Output,
                 eval_set: Optional[EvalSet] = None) -> None:
        self.evaluators = list(evaluators)
        self.options = options
        self.output = output
        self.batch_size = BATCH_CASES
        self._ray, self._started = connect(options.ray_address)
        shipped, staged, runtime_env, bundle = _prepare(self.evaluators)
        actors = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        state = (shipped, options, eval_set, staged, bundle)  # small states travel inline with each actor
        worker = self._ray.remote(EvalWorker)
        run = secrets.token_hex(4)
        self.actors = [worker.options(num_cpus=1, max_restarts=-1, max_task_retries=0, runtime_env=runtime_env or None,
                                      name=f"agentevals-eval-{run}-{i}", namespace=NAMESPACE).remote(state)
                       for i in range(actors)]
        self._in_flight = [0] * actors
        self._down: set[int] = set()
        """Actors lost and not yet answering again (restarting): nothing is sent to them."""
        self._waiting: deque[_Batch] = deque()
        self._pending: list[_Item] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._progress = asyncio.Event()
        self._failure: Optional[BaseException] = None
        self._reader: Any = None
        self.eval_set = eval_set
        self.reuse: Optional[ResultReuse] = None
        """Stored results that stand in for running a pair (the run store's cache, resume, rerun-failed):
        looked up here, before a case is sent; a case whose every result is stored is not sent at all."""
        self._chunks: dict[Any, list[ConvertedTrace]] = {}
        """The last few trace chunks fetched for lookups (a case's traces usually sit in the latest)."""
        self._looked_up: dict[int, Case] = {}
        """Cases in flight whose results are looked up here, with their traces, until their results
        come back (``ResultReuse.produced`` needs them)."""
        self._here: Optional[_Pool] = None

    async def read(self, inputs: list[TraceInput], trace_format: Optional[str], *,
                   keep_spans: bool) -> AsyncIterator[tuple[Union[TraceRef, Any], float]]:
        """Traces as ``TraceRef``s (and input errors), in input order, each with the fraction of the input
        read (as ``_Pool.read``); the files are opened by the reader actor, where they live (paths relative
        to this directory, or absolute on a shared filesystem)."""
        reader_cls = self._ray.remote(TraceReader).options(num_cpus=0, max_restarts=0, namespace=NAMESPACE)
        self._reader = reader_cls.remote(inputs, trace_format, keep_spans, os.getcwd())
        pending = self._reader.next.remote()
        while True:
            try:
                index, chunks, done = await pending
            except self._ray.exceptions.RayTaskError as exc:
                raise exc.as_instanceof_cause() from None
            except self._ray.exceptions.RayError as exc:
                raise EvaluatorFailure(f"ray: the trace reader was lost: {first_line(exc)}") from None
            if not done:
                pending = self._reader.next.remote()  # read ahead while this chunk is grouped
            for entry in index:
                if len(entry) == 2:  # an input error and the fraction read
                    yield entry
                else:
                    trace_id, session_id, start_ns, source, position, fraction = entry
                    yield TraceRef(trace_id, session_id, start_ns, source, chunks[0], position), fraction
            if done:
                return

    def submit(self, seq: int, case: Case, *, only_trace: bool = False) -> None:
        if self.output.stopped_by is not None:
            return
        stored: Optional[Stored] = None
        if self.reuse is not None:
            looked_up = self._look_up(case, only_trace)
            if looked_up is not None:
                full, stored = looked_up
                if len(stored) == len(self.evaluators):  # nothing to run: the case is finished here
                    self._finish_here(seq, full, only_trace, stored)
                    return
                self._looked_up[seq] = full
        self._pending.append((seq, case, only_trace, stored or None))
        idle = not self._waiting and any(self._in_flight[i] == 0 for i in range(len(self.actors))
                                         if i not in self._down)
        if len(self._pending) >= (MIN_BATCH if idle else self.batch_size):  # idle actors get work at once
            self._queue([self._pending])
            self._pending = []

    async def room(self) -> None:
        """Wait while every actor has a batch waiting: the reader (and the cases the driver holds) stay
        a few batches ahead of the actors, whatever the input's size."""
        while len(self._waiting) >= len(self.actors) and self._failure is None and self.output.stopped_by is None:
            self._progress.clear()
            await self._progress.wait()
        if self._failure is not None:
            raise self._failure

    async def join(self) -> None:
        """Send what is left (spread over the actors), wait for every batch, raise a consumer's error."""
        if self._pending:
            size = max(1, min(self.batch_size, math.ceil(len(self._pending) / len(self.actors))))
            self._queue([self._pending[i:i + size] for i in range(0, len(self._pending), size)])
            self._pending = []
        await self._idle.wait()
        if self._failure is not None:
            raise self._failure

    async def cancel(self) -> None:
        """Stop: cancel what is in flight, let the actors stop their evaluator processes, end them."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        ray = self._ray
        try:
            closing = [actor.close.remote() for actor in self.actors]
            await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), CLOSE_TIMEOUT)
        except Exception:  # a timeout, a lost cluster: the actors are ended below all the same
            log.debug("closing the Ray actors failed", exc_info=True)
        for actor in [*self.actors, *([self._reader] if self._reader is not None else [])]:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                log.debug("ending a Ray actor failed", exc_info=True)
        self.actors = []
        if self._started:
            ray.shutdown()

    def _look_up(self, case: Case, only_trace: bool) -> Optional[tuple[Case, Stored]]:
        """The case with its traces (fetched from the object store) matched to its eval case, as the
        worker will, and what ``reuse`` has stored for it by evaluator index; None when nothing is to be
        looked up (a case with no agent turns, which is NOT_EVALUATED; a chunk that cannot be fetched:
        the case then runs)."""
        from ..runner import Case, _match

        assert self.reuse is not None
        try:
            full = Case(case_id=case.case_id, traces=[self._trace(t) for t in case.traces])
        except self._ray.exceptions.RayError:
            log.debug("ray: fetching a case's traces for the result cache failed; it runs", exc_info=True)
            return None
        _match(full, self.eval_set, only_trace=only_trace)
        if full.traces and not full.invocations:
            return None
        stored = {}
        for index, ev in enumerate(self.evaluators):
            found = self.reuse.lookup(full, ev)
            if found is not None:
                stored[index] = found
        return full, stored

    def _trace(self, ref: Union[TraceRef, ConvertedTrace]) -> ConvertedTrace:
        if not isinstance(ref, TraceRef):
            return ref
        chunk = self._chunks.get(ref.chunk)
        if chunk is None:
            chunk = self._chunks[ref.chunk] = self._ray.get(ref.chunk, timeout=FETCH_TIMEOUT)
            while len(self._chunks) > 4:
                del self._chunks[next(iter(self._chunks))]
        return chunk[ref.index]

    def _finish_here(self, seq: int, case: Case, only_trace: bool, stored: Stored) -> None:
        """A case whose every result is stored: assembled in this process, exactly as a local run does."""
        from ..runner import GivenResults, _Pool

        if self._here is None:
            self._here = _Pool(self.evaluators, self.options, self.output, self.eval_set)
        self._here.reuse = GivenResults(self.evaluators, {id(case): stored}, forward=self.reuse)
        self._here.submit(seq, case, only_trace=only_trace)

    def _produced(self, seq: int, result: CaseResult) -> None:
        """Tell ``reuse`` what each evaluator of a case that ran on the cluster ended up with."""
        case = self._looked_up.pop(seq, None)
        rows = result._evaluator_rows
        if case is None or self.reuse is None or rows is None:
            return
        start = 0
        for ev, count in zip(self.evaluators, rows, strict=True):
            self.reuse.produced(case, ev, result.metrics[start:start + count])
            start += count

    def _queue(self, batches: list[list[_Item]]) -> None:
        self._waiting.extend(_Batch(items) for items in batches if items)
        self._pump()

    def _pump(self) -> None:
        """Send waiting batches to the least busy actors that have room."""
        while self._waiting and self.output.stopped_by is None:
            alive = [i for i in range(len(self.actors)) if i not in self._down]
            if not alive:
                break
            slot = min(alive, key=self._in_flight.__getitem__)
            if self._in_flight[slot] >= IN_FLIGHT:
                break
            batch = self._waiting.popleft()
            batch.attempts += 1
            self._in_flight[slot] += 1
            self._idle.clear()
            ref = self.actors[slot].run_batch.remote(batch.items)
            self._track(self._collect(batch, slot, ref))
        if not any(self._in_flight) and (not self._waiting or self.output.stopped_by is not None):
            self._idle.set()

    async def _collect(self, batch: _Batch, slot: int, ref: Any) -> None:
        exceptions = self._ray.exceptions
        results: Optional[list[tuple[int, CaseResult]]] = None
        try:
            results = await ref
        except exceptions.RayTaskError as exc:  # the batch itself failed: not worth re-sending
            cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
            if isinstance(cause, exceptions.RayError):  # e.g. the reader's chunk was lost: re-send
                batch.errors.append(first_line(cause))
            else:
                batch.attempts = MAX_ATTEMPTS
                batch.errors.append(first_line(cause))
        except exceptions.RayError as exc:  # the actor (its process or node) was lost: re-send
            log.debug("a Ray batch was lost", exc_info=True)
            batch.errors.append(first_line(exc))
            if isinstance(exc, exceptions.RayActorError) and slot not in self._down:
                self._down.add(slot)
                self._track(self._revive(slot))
        self._in_flight[slot] -= 1
        try:
            if results is not None:
                for seq, result in results:
                    self._produced(seq, result)
                    self.output.finished(seq, result)
            elif batch.attempts < MAX_ATTEMPTS:
                log.warning("ray: a batch of %d case(s) was lost (%s); sending it again", len(batch.items),
                            batch.errors[-1])
                self._waiting.appendleft(batch)
            else:
                why = batch.errors[-1] if batch.errors else "unknown error"
                for seq, case, *_ in batch.items:
                    self._looked_up.pop(seq, None)  # nothing produced: the pairs run again next time
                    self.output.finished(seq, _errored_case(case, self.evaluators, batch.attempts, why))
        except BaseException as exc:  # a consumer failed: the run stops with its error
            self._failure = self._failure or exc
            self._waiting.clear()
        self._pump()
        self._progress.set()


    def _track(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _revive(self, slot: int) -> None:
        """Wait until a lost actor answers again (Ray restarts it), then use it again; one that does not
        within ``REVIVE_TIMEOUT`` stays out of the run (its batches go to the others)."""
        deadline = asyncio.get_running_loop().time() + REVIVE_TIMEOUT
        while asyncio.get_running_loop().time() < deadline:
            try:
                await asyncio.wait_for(self.actors[slot].pid.remote(), 10)
                self._down.discard(slot)
                break
            except (asyncio.TimeoutError, self._ray.exceptions.RayError):
                await asyncio.sleep(0.5)
        else:
            log.warning("ray: an evaluation actor did not come back within %gs; going on without it",
                        REVIVE_TIMEOUT)
            if len(self._down) == len(self.actors):  # nobody left: the waiting batches cannot run
                while self._waiting:
                    batch = self._waiting.popleft()
                    for seq, case, *_ in batch.items:
                        self._looked_up.pop(seq, None)
                        self.output.finished(seq, _errored_case(case, self.evaluators, batch.attempts,
                                                                "no Ray actor is left to run it"))
                self._down.clear()
        self._pump()
        self._progress.set()


def _errored_case(case: Case, evaluators: Sequence[BaseEvaluator], attempts: int, why: str) -> CaseResult:
    """The rows of a case whose batch could not be run: one ERROR per evaluator, none lost."""
    from ..scoring import case_score

    text = f"ray: batch failed after {attempts} attempt(s): {why}"
    result = CaseResult(case_id=case.case_id, trace_ids=[t.trace_id for t in case.traces],
                        sources=sorted({t.source for t in case.traces}),
                        metrics=[MetricResult.errored(ev.display_name, text, type=ev.name) for ev in evaluators],
                        evaluation_status="evaluation_failed")
    result.score, result.verdict = case_score(result.metrics)
    return result


def _prepare(evaluators: Sequence[BaseEvaluator]) -> tuple[list[Any], dict[int, str], dict[str, Any],
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


def _unzip(data: Optional[bytes]) -> Optional[Path]:
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
    lines = (line.split("#", 1)[0].strip() for line in requirements.read_text("utf-8").splitlines())
    return [line for line in lines if line]


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


# --- what runs on the cluster --------------------------------------------------------------------------


class TraceReader:
    """Reads and converts the run's inputs on the cluster (``runner.iter_traces``, the local reader's own
    code), a chunk at a time; the chunks stay in the object store, the driver gets their references."""

    def __init__(self, inputs: list[Any], trace_format: Optional[str], keep_spans: bool, cwd: str) -> None:
        from ..runner import _iter_positioned

        if os.path.isdir(cwd):  # the driver's folder, when this node sees it: relative paths read as there
            os.chdir(cwd)
        self._urls: dict[str, str] = {}
        """Downloaded file → its URL (the name the results keep)."""
        self._errors: list[Any] = []
        self._folder = Path(tempfile.mkdtemp(prefix="agentevals-read-"))
        local = [self._download(item) if _is_url(item) else item for item in inputs]
        self._items = _iter_positioned([item for item in local if item is not None], trace_format=trace_format,
                                       keep_spans=keep_spans, workers=1)

    def _download(self, url: str) -> Optional[str]:
        """An http(s) input, streamed to a file of this node (never through the driver); ``None`` and an
        input error when it cannot be fetched."""
        import requests

        from ..results import InputError

        path = self._folder / f"{len(self._urls)}-{Path(url.split('?')[0]).name or 'input'}"
        try:
            with requests.get(url, stream=True, timeout=(CONNECT_TIMEOUT, DOWNLOAD_IDLE_TIMEOUT)) as answer:
                answer.raise_for_status()
                with path.open("wb") as out:
                    for block in answer.iter_content(1 << 20):
                        out.write(block)
        except (OSError, requests.RequestException) as exc:
            self._errors.append((InputError(source=url, error=f"{url}: cannot download: {first_line(exc)}"), 0.0))
            return None
        self._urls[str(path)] = url
        return str(path)

    def next(self) -> tuple[list[Any], list[Any], bool]:
        """The next chunk: index entries (a trace's ``(trace_id, session_id, start_ns, source, position in
        the chunk, fraction of the input read)``, or ``(InputError, fraction read)``), ``[ObjectRef]`` of the
        chunk's traces (``[]`` when none), and whether it is the last."""
        import ray

        from ..results import InputError

        index: list[Any] = self._errors
        self._errors = []
        chunk: list[ConvertedTrace] = []
        for item, fraction in itertools.islice(self._items, READ_CHUNK):
            for path, url in self._urls.items():  # a downloaded input keeps its URL as its name
                if isinstance(item, InputError):
                    item.source, item.error = item.source.replace(path, url), item.error.replace(path, url)
                elif item.source == path:
                    item.source = url
            if isinstance(item, InputError):
                index.append((item, fraction))
            else:
                index.append((item.trace_id, item.session_id, item.start_ns, item.source, len(chunk), fraction))
                chunk.append(item)
        done = len(index) < READ_CHUNK
        if done:
            shutil.rmtree(self._folder, ignore_errors=True)
        return index, [ray.put(chunk)] if chunk else [], done


def _is_url(item: Any) -> bool:
    return isinstance(item, str) and item.startswith(("http://", "https://"))


class EvalWorker:
    """A long-lived actor: the run's evaluators, built once, evaluate batch after batch."""

    def __init__(self, state: tuple[list[Any], RunOptions, Optional[EvalSet], dict[int, str], Optional[bytes]]) -> None:
        self.evaluators, self.options, self.eval_set, staged, bundle = state
        self.setup_error: Optional[str] = None
        self.folder = _unzip(bundle)
        for index, folder in staged.items():
            ev = self.evaluators[index]
            ev.base_dir = self.folder / folder  # type: ignore[operator]  # staged files come with their bundle
            try:
                ev.check()  # loads a ``type: python`` class again, from the staged file
            except AgentevalsError as exc:
                self.setup_error = f"evaluator '{ev.display_name}': {exc}"

    async def run_batch(self, items: list[_Item]) -> list[tuple[int, CaseResult]]:
        from ..runner import evaluate_cases

        if self.setup_error is not None:
            raise EvaluatorFailure(self.setup_error)
        return await evaluate_cases(await _resolve(items), self.evaluators, self.options, self.eval_set)

    async def close(self) -> None:
        for ev in self.evaluators:
            try:
                await ev.aclose()
            except Exception:
                log.debug("closing %s failed", ev.display_name, exc_info=True)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def pid(self) -> int:
        """This actor's process id (what a test kills to lose a worker)."""
        return os.getpid()


async def _resolve(items: list[_Item]) -> list[_Item]:
    """Replace each case's ``TraceRef``s by the converted traces, fetching each chunk once."""
    refs = list({t.chunk: None for _, case, *_ in items for t in case.traces if isinstance(t, TraceRef)})
    chunks = dict(zip(refs, await asyncio.gather(*refs), strict=True)) if refs else {}
    for _, case, *_ in items:
        case.traces = [chunks[t.chunk][t.index] if isinstance(t, TraceRef) else t for t in case.traces]
    return items


# --- ``executor: ray`` on one evaluator ---------------------------------------------------------------


class ProgramWorker:
    """An actor that runs one evaluator program from its unpacked folder (a local subprocess there)."""

    def __init__(self, bundle: bytes, relative: str, timeout: float, own_python: bool) -> None:
        from .backends import SubprocessBackend
        from .runtimes import PythonRuntime

        self.folder = _unzip(bundle)
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


class RayBackend(EvaluatorBackend):
    """``executor: ray``: one evaluator's program runs in Ray actors (one per CPU of the cluster, up to
    ``max_actors``), its folder unpacked on their node, its ``requirements.txt`` as their ``pip``."""

    name = "ray"
    pool = RayPool
    """The run-level mode (``--executor ray``)."""
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
        self._started = False
        self._env_setting: Any = None

    def _start(self) -> None:
        from .manifest import read_manifest
        from .sandbox_env import current_env_setting

        self._ray, self._started = connect(None)
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
        self._ready = None
        if self._started:
            self._ray.shutdown()
