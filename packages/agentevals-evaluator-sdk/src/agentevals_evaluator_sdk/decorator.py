"""``@evaluator``: turn a scoring function into a stdin/stdout evaluator program.

Example:
    ```python
    from agentevals_evaluator_sdk import evaluator, EvalInput, EvalResult

    @evaluator
    def has_answer(input: EvalInput) -> EvalResult:
        scores = [1.0 if inv.final_response else 0.0 for inv in input.invocations]
        return EvalResult(score=sum(scores) / len(scores) if scores else 0.0, per_invocation_scores=scores)

    if __name__ == "__main__":
        has_answer.run()
    ```
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import IO, Any, Optional, Union, overload

from pydantic import ValidationError

from .errors import EvaluatorDefinitionError, EvaluatorError, InputError, ResultError
from .protocol import PROTOCOL_VERSION, negotiate, parse_version
from .types import _WORKER_FIELDS, EvalInput, EvalResult

__all__ = ["Evaluator", "EvaluatorFunction", "check_result", "evaluator", "format_validation_error", "parse_input"]

EvaluatorFunction = Callable[
    [EvalInput], Union[EvalResult, dict[str, Any], Awaitable[Union[EvalResult, dict[str, Any]]]]
]


def format_validation_error(error: ValidationError) -> str:
    """Render a pydantic error as one line: ``field.path: message (got value)`` joined by ``; ``."""
    parts = []
    for item in error.errors():
        path = ""
        for loc in item.get("loc", ()):
            path += f"[{loc}]" if isinstance(loc, int) else (f".{loc}" if path else str(loc))
        message = item.get("msg", "invalid").removeprefix("Value error, ")
        where = f"{path}: " if path else ""
        got = f" (got {item['input']!r})" if "input" in item and item.get("type") != "value_error" else ""
        parts.append(f"{where}{message}{got}")
    return "; ".join(parts)


def parse_input(text: str) -> tuple[EvalInput, str]:
    """Parse stdin text into an EvalInput and the negotiated protocol version."""
    return _check_input(_parse_json(text))


def _parse_json(text: str) -> Any:
    text = text.removeprefix("\ufeff")  # a byte order mark some Windows shells put before piped text
    if not text.strip():
        raise InputError("empty stdin: expected one EvalInput JSON document")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"stdin is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} (char {exc.pos})"
        ) from None


def _check_input(data: Any) -> tuple[EvalInput, str]:
    """``parse_input`` of a value already parsed (a worker line is parsed once, for its request_id too)."""
    if not isinstance(data, dict):
        raise InputError(f"stdin must be a JSON object (EvalInput), got {type(data).__name__}")
    used = negotiate(data.get("protocol_version", "1.0"))
    try:
        return EvalInput.model_validate(data), used
    except ValidationError as exc:
        raise InputError(f"invalid EvalInput: {format_validation_error(exc)}") from None


def check_result(value: Any, eval_input: EvalInput, version: str, *, name: str = "evaluator") -> EvalResult:
    """Validate what an evaluator returned, as the host will, and stamp the protocol version.

    Input is read as the 0.2 SDK read it (``score="0.5"`` and ``score=True`` are numbers); the JSON written
    is strict (numbers only).
    """
    if isinstance(value, EvalResult):
        data = value.model_dump()
    elif isinstance(value, dict):
        data = value
    else:
        raise ResultError(f"{name} returned {type(value).__name__}, expected EvalResult")
    try:
        result = EvalResult.model_validate(data)
    except ValidationError as exc:
        raise ResultError(f"{name} returned an invalid EvalResult: {format_validation_error(exc)}") from None
    # An explicit status that contradicts score vs threshold, or per_invocation_scores of another length,
    # are kept as returned: the host honours the status and shows a warning in the result's row.
    result.protocol_version = version
    return result


class Evaluator:
    """A scoring function that can also run as a stdin/stdout evaluator program.

    Calling the object calls the function unchanged; ``run()`` speaks the wire protocol.
    """

    def __init__(self, func: EvaluatorFunction, *, name: Optional[str] = None) -> None:
        _check_signature(func)
        functools.update_wrapper(self, func)
        self.func = func
        self.name = name or func.__name__

    def __call__(self, eval_input: EvalInput) -> Any:
        return self.func(eval_input)

    def evaluate(self, eval_input: EvalInput, *, version: Optional[str] = None) -> EvalResult:
        """Call the function (awaiting it when async) and validate its result like ``run()`` does."""
        used = version or negotiate(eval_input.protocol_version)
        try:
            value = self.func(eval_input)
            if inspect.isawaitable(value):
                value = _run_awaitable(value)
        except ValidationError as exc:
            if exc.title != EvalResult.__name__:
                raise
            raise ResultError(f"{self.name} built an invalid EvalResult: {format_validation_error(exc)}") from None
        return check_result(value, eval_input, used, name=self.name)

    def run(self, *, stdin: Optional[IO[str]] = None, stdout: Optional[IO[str]] = None) -> None:
        """Read one EvalInput from stdin, evaluate, write one EvalResult to stdout, and exit.

        Exits 0 on success; on any error prints one ``error: …`` line to stderr and exits 1.
        Anything the function prints goes to stderr so that stdout stays one JSON document.

        When the host offers a persistent worker (protocol 1.2, ``EvalInput.worker``), the offer is
        accepted: the first result says ``"worker": true``, and further inputs are read as JSON lines
        from the offered file descriptor, each answered by one result line on stdout (an input that
        fails gets a result with ``error`` set; the worker keeps going) until that descriptor ends.
        """
        out = stdout or sys.stdout
        try:
            eval_input, version = parse_input((stdin or sys.stdin).read())
            result = self._evaluate_logged(eval_input, version)
        except (EvaluatorError, _Raised) as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(1)
        offer = eval_input.worker if parse_version(version) >= (1, 2) else None
        if offer is not None:
            result.worker = True
            result.request_id = eval_input.request_id
        _write(out, _dump(result))
        if offer is not None:
            self._serve(offer.input_fd, out)
        sys.exit(0)

    def _evaluate_logged(self, eval_input: EvalInput, version: str) -> EvalResult:
        """``evaluate`` with the function's prints sent to stderr and its exceptions made one line."""
        with contextlib.redirect_stdout(sys.stderr):
            try:
                return self.evaluate(eval_input, version=version)
            except EvaluatorError:
                raise
            except Exception as exc:  # the author's code failed: show where (its frames, not ours)
                frames = exc.__traceback__
                while frames is not None and frames.tb_frame.f_code.co_filename == __file__:
                    frames = frames.tb_next
                traceback.print_exception(type(exc), exc, frames or exc.__traceback__, file=sys.stderr)
                message = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
                raise _Raised(f"evaluator '{self.name}' raised {type(exc).__name__}: {message}") from None

    def _serve(self, input_fd: int, out: IO[str]) -> None:
        """The persistent worker loop: one EvalInput line in, one EvalResult line out, until end of file."""
        with open(input_fd, encoding="utf-8", closefd=True) as lines:
            for line in lines:
                if not line.strip():
                    continue
                request_id = None
                try:
                    data = json.loads(line)  # once: for its request_id, and as the input
                    request_id = data.get("request_id") if isinstance(data, dict) else None
                    eval_input, version = _check_input(data)
                    result = self._evaluate_logged(eval_input, version)
                    result.request_id = eval_input.request_id
                    _write(out, _dump(result))
                except (EvaluatorError, _Raised, ValueError) as exc:
                    print(f"error: {exc}", file=sys.stderr, flush=True)
                    _write(out, {"request_id": request_id, "error": str(exc), "protocol_version": PROTOCOL_VERSION})


def _dump(result: EvalResult) -> dict[str, Any]:
    """The result's JSON, without the persistent-worker fields when they are unset (a 1.0/1.1 result)."""
    data = result.model_dump(mode="json")
    for key in _WORKER_FIELDS:
        if data.get(key) is None:
            data.pop(key, None)
    return data



def _write(out: IO[str], data: dict[str, Any]) -> None:
    out.write(json.dumps(data, ensure_ascii=False) + "\n")
    out.flush()


class _Raised(Exception):
    """The evaluator function raised; message already formatted."""


async def _await(value: Awaitable[Any]) -> Any:
    return await value


def _run_awaitable(value: Awaitable[Any]) -> Any:
    """Await ``value`` to completion, also when called from code already inside an event loop (async tests)."""
    # Imported here: asyncio is a tenth of this package's import, and only async evaluators need it.
    import asyncio
    import threading

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(value))
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(_await(value))
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="agentevals-evaluator")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _check_signature(func: Callable[..., Any]) -> None:
    if not callable(func):
        raise EvaluatorDefinitionError(f"@evaluator needs a function, got {type(func).__name__}")
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if (not positional and not any(p.kind is p.VAR_POSITIONAL for p in params)) or len(required) > 1:
        raise EvaluatorDefinitionError(
            f"@evaluator function '{getattr(func, '__name__', func)}' must take exactly one argument "
            f"(the EvalInput), got ({', '.join(p.name for p in params)})"
        )


@overload
def evaluator(func: EvaluatorFunction, /) -> Evaluator: ...
@overload
def evaluator(*, name: Optional[str] = None) -> Callable[[EvaluatorFunction], Evaluator]: ...
def evaluator(
    func: Optional[EvaluatorFunction] = None, /, *, name: Optional[str] = None
) -> Union[Evaluator, Callable[[EvaluatorFunction], Evaluator]]:
    """Mark a function ``(EvalInput) -> EvalResult`` (sync or async) as an evaluator.

    Works bare (``@evaluator``) and called (``@evaluator(name="quality")``).
    """
    if func is not None:
        return Evaluator(func, name=name)
    return lambda f: Evaluator(f, name=name)
