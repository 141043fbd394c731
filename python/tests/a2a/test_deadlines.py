"""The server's time limits (`agentproto.a2a.server.deadlines`): a block past its limit is
cancelled into `TimeoutError` within a tick, one in time is left alone, another cancellation
stays a cancellation, the sweep stops when no limit is active, and each event loop has its
own sweep."""

from __future__ import annotations

import asyncio
import time

import pytest

from agentproto.a2a.server.deadlines import Deadlines

TICK = 0.02


def test_a_block_past_its_limit_raises_timeout_error_within_a_tick() -> None:
    deadlines = Deadlines(TICK)

    async def main() -> float:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            async with deadlines.limit(0.1):
                await asyncio.sleep(10)
        return time.monotonic() - started

    took = asyncio.run(main())
    assert 0.1 <= took < 0.1 + TICK + 1.0


def test_a_block_in_time_is_left_alone_and_the_sweep_stops() -> None:
    deadlines = Deadlines(TICK)

    async def main() -> None:
        for _ in range(100):
            async with deadlines.limit(5):
                await asyncio.sleep(0)
        assert deadlines.active == 0
        await asyncio.sleep(3 * TICK)
        sweep = deadlines._sweep_of(asyncio.get_running_loop())
        assert sweep.timer is None, "no timer while no limit is active"
        # The sweep starts again with the next limit.
        with pytest.raises(TimeoutError):
            async with deadlines.limit(0.01):
                await asyncio.sleep(10)

    asyncio.run(main())


def test_only_the_blocks_past_their_limit_are_cancelled() -> None:
    deadlines = Deadlines(TICK)

    async def call(seconds: float, work: float) -> str:
        try:
            async with deadlines.limit(seconds):
                await asyncio.sleep(work)
        except TimeoutError:
            return "late"
        return "done"

    async def main() -> list[str]:
        return await asyncio.gather(*(call(0.05 if i % 2 else 5, 0.3 if i % 2 else 0.1) for i in range(20)))

    assert asyncio.run(main()) == ["done", "late"] * 10


def test_another_cancellation_stays_a_cancellation() -> None:
    deadlines = Deadlines(TICK)

    async def main() -> None:
        async def guarded() -> None:
            async with deadlines.limit(5):
                await asyncio.sleep(10)

        task = asyncio.create_task(guarded())
        await asyncio.sleep(2 * TICK)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert deadlines.active == 0

    asyncio.run(main())


def test_a_cancellation_that_comes_with_the_limit_stays_a_cancellation() -> None:
    deadlines = Deadlines(TICK)

    async def main() -> None:
        entered = asyncio.Event()

        async def guarded() -> None:
            async with deadlines.limit(0.05):
                entered.set()
                try:
                    await asyncio.sleep(10)
                finally:
                    # The limit has cancelled the task; cancel it once more from outside.
                    asyncio.current_task().cancel()  # type: ignore[union-attr]
                    await asyncio.sleep(0)

        task = asyncio.create_task(guarded())
        await entered.wait()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_each_event_loop_has_its_own_sweep() -> None:
    deadlines = Deadlines(TICK)

    async def late() -> None:
        with pytest.raises(TimeoutError):
            async with deadlines.limit(0.02):
                await asyncio.sleep(10)

    for _ in range(3):
        asyncio.run(late())


def test_a_limit_is_entered_once_inside_a_task() -> None:
    deadlines = Deadlines(TICK)

    async def main() -> None:
        limit = deadlines.limit(1)
        async with limit:
            pass
        with pytest.raises(RuntimeError):
            async with limit:
                pass

    asyncio.run(main())
    with pytest.raises(ValueError):
        Deadlines(0)
