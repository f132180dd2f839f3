"""``execution.deadline.Deadline``: a pause (an environment setup) does not count, the deadline still fires."""

from __future__ import annotations

import asyncio

import pytest
from agentevals.errors import EvaluatorFailure
from agentevals.execution.deadline import Deadline


def test_time_spent_paused_does_not_count_and_the_deadline_fires_after():
    async def scenario() -> None:
        deadline = Deadline(2)

        async def slow_setup_then_result() -> str:
            with deadline.paused():
                await asyncio.sleep(3)  # longer than the whole deadline, but paused
            return "done"

        assert await deadline.wait(slow_setup_then_result()) == "done"
        with pytest.raises(EvaluatorFailure) as info:
            await deadline.wait(asyncio.sleep(3600), "sleeping")
        assert str(info.value) == "timed out after 2s while sleeping"

    asyncio.run(scenario())


def test_grace_and_note():
    async def scenario() -> None:
        deadline = Deadline(0.1, note="the setup limit, AGENTEVALS_SETUP_TIMEOUT")
        cancelled = asyncio.Event()

        async def ignores_the_deadline() -> None:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        with pytest.raises(EvaluatorFailure) as info:
            await deadline.wait(ignores_the_deadline(), "installing", grace=0.2)
        assert str(info.value) == "timed out after 0.1s while installing (the setup limit, AGENTEVALS_SETUP_TIMEOUT)"
        assert cancelled.is_set()  # cancelled, and awaited, before the failure is raised

    asyncio.run(scenario())
