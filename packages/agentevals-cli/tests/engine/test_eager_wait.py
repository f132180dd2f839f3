"""``engine.evaluate.eager_wait_for``: ``asyncio.wait_for`` with the first step run at once (no task for an
evaluation that does not wait), the same results, errors, deadline, cancellation and context."""

from __future__ import annotations

import asyncio
import contextvars

import pytest
from agentevals.engine.evaluate import eager_wait_for

DEADLINE: contextvars.ContextVar[str] = contextvars.ContextVar("deadline", default="none")


async def at_once() -> str:
    return "done"


async def waits(steps: int) -> int:
    for _ in range(steps):
        await asyncio.sleep(0)
    return steps


async def sets_then_resets() -> str:
    """What a deadline helper does: set in one step, reset in a later one (a different Context would refuse)."""
    token = DEADLINE.set("set")
    await asyncio.sleep(0)
    seen = DEADLINE.get()
    DEADLINE.reset(token)
    return seen


async def fails(after: int) -> None:
    for _ in range(after):
        await asyncio.sleep(0)
    raise ValueError("boom")


def test_a_coroutine_that_does_not_wait_runs_without_a_task():
    async def main() -> tuple[str, int]:
        before = len(asyncio.all_tasks())
        value = await eager_wait_for(at_once(), 1.0)
        return value, len(asyncio.all_tasks()) - before

    assert asyncio.run(main()) == ("done", 0)


def test_one_that_waits_finishes_under_the_deadline_in_one_context():
    async def main() -> tuple[int, str, str]:
        steps = await eager_wait_for(waits(5), 5.0)
        seen = await eager_wait_for(sets_then_resets(), 5.0)
        return steps, seen, DEADLINE.get()

    assert asyncio.run(main()) == (5, "set", "none")  # the caller's context is left as it was


@pytest.mark.parametrize("after", [0, 3])
def test_errors_come_out_as_they_were_raised(after):
    with pytest.raises(ValueError, match="boom"):
        asyncio.run(eager_wait_for(fails(after), 5.0))


async def sleeper(cancelled: list[bool]) -> None:
    """Waits long; says when it is cancelled."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        cancelled.append(True)
        raise


def test_the_deadline_fires_and_the_coroutine_is_cancelled():
    cancelled: list[bool] = []
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(eager_wait_for(sleeper(cancelled), 0.05))
    assert cancelled == [True]


def test_cancelling_the_caller_cancels_the_rest():
    cancelled: list[bool] = []

    async def main() -> None:
        task = asyncio.ensure_future(eager_wait_for(sleeper(cancelled), 60.0))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled == [True]
