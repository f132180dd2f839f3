"""Run-level executors (``agentevals run --executor NAME``, ``executor=`` in the API): where a whole run's
work goes. Each is a class with a ``name``, a ``require()`` that checks its extra is installed, and a
``pool`` that makes the run's ``RunPool``; they live in ``RUN_EXECUTORS`` (entry-point group
``agentevals.run_executors``).

Built in: ``local`` (``LocalPool``: this process) and ``ray`` (``agentevals.engine.ray_pool``: batches of
cases across a Ray cluster). Not to be confused with the per-evaluator executors of
``agentevals.execution.backends.EXECUTORS`` (``executor: docker`` on one evaluator): those run one
evaluator's program somewhere; these run the whole (case × evaluator) stream.

A third-party run executor is one class and one entry point::

    class DaskExecutor:
        name: ClassVar[str] = "dask"
        aliases: ClassVar[tuple[str, ...]] = ()

        @staticmethod
        def require() -> None: ...            # raise MissingDependencyError when dask is missing

        pool = DaskPool                       # a class implementing agentevals.engine.RunPool

    # pyproject.toml: [project.entry-points."agentevals.run_executors"] dask = "my_pkg:DaskExecutor"
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from ..core._registry import Registry, did_you_mean
from ..errors import ConfigError, MissingDependencyError
from .pool import LocalPool, PoolFactory

__all__ = ["RUN_EXECUTORS", "LocalExecutor", "RunExecutor", "check_executor", "pool_for"]


class RunExecutor(Protocol):
    """A run-level executor: its registry name, its extra's check, its pool."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]]

    @staticmethod
    def require() -> object:
        """Raise ``MissingDependencyError`` (with the install command) when the executor cannot run here."""
        ...

    pool: PoolFactory
    """Makes the run's ``RunPool``: ``pool(evaluators, options, output, eval_set)``."""


class LocalExecutor:
    """``--executor local`` (the default): every evaluation in this process, under ``LocalPool``."""

    name: ClassVar[str] = "local"
    aliases: ClassVar[tuple[str, ...]] = ()
    pool: ClassVar[PoolFactory] = LocalPool

    @staticmethod
    def require() -> None:
        """Nothing to install."""


RUN_EXECUTORS: Registry[type[RunExecutor]] = Registry("run executor", "agentevals.run_executors", {
    "local": "agentevals.engine.executors:LocalExecutor",
    "ray": "agentevals.engine.ray_pool:RayExecutor",  # the `ray` extra
})  # no ``base=``: ``RunExecutor`` is a Protocol (any class with these members); names are still checked


def check_executor(name: str) -> str:
    """``name`` if it is a run-level executor whose extra is installed, else ``ConfigError`` (exit 2)."""
    if name == "local":
        return name
    known = RUN_EXECUTORS.names()
    if name not in known:
        from ..execution.backends import EXECUTORS

        if name in EXECUTORS.names():
            raise ConfigError(f"executor '{name}' runs single evaluators only: set 'executor: {name}' on an "
                              f"evaluator in eval_config.yaml (run-level executors: {', '.join(known)})")
        raise ConfigError(f"unknown executor '{name}'{did_you_mean(name, known)}; run-level executors: "
                          f"{', '.join(known)}")
    try:
        RUN_EXECUTORS.get(name).require()
    except MissingDependencyError as exc:
        raise ConfigError(str(exc)) from None
    return name


def pool_for(name: str) -> PoolFactory:
    """The pool factory of a run-level executor (checked by ``check_executor`` beforehand)."""
    return RUN_EXECUTORS.get(check_executor(name)).pool
