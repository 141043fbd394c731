"""Time limits on the calls a server runs (the body read, a unary operation), kept together.

`asyncio.timeout` schedules a timer per use: a `TimerHandle` pushed on the event loop's heap
(ordered by Python-level comparisons) and cancelled again when the call ends in time, as
nearly every call does; at two limits a request, under concurrent load that was a
noticeable share of a small request's cost. `Deadlines` keeps the limits of one server in
a dict instead, and one timer per `tick` while any is active cancels the calls past their
deadline. A call is cancelled at most one tick after its deadline; otherwise a limit
behaves as `asyncio.timeout`: the call's task is cancelled, and the `async with` block
raises `TimeoutError` unless another cancellation came meanwhile.
"""

from __future__ import annotations

import asyncio
import weakref
from types import TracebackType
from typing import Any, Self

__all__ = ["Deadlines", "Limit"]

TICK = 0.05
"""Seconds between two sweeps while a limit is active: how late a limit may fire."""

_ENTERED, _EXPIRING, _DONE = 1, 2, 3


class Deadlines:
    """The limits of one server (see the module documentation). Each event loop it runs on
    has its own sweep."""

    def __init__(self, tick: float = TICK) -> None:
        if tick <= 0:
            raise ValueError("tick must be positive")
        self.tick = tick
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweep] = weakref.WeakKeyDictionary()
        self._last: tuple[asyncio.AbstractEventLoop, _Sweep] | None = None

    def limit(self, seconds: float) -> Limit:
        """An async context manager: the block is cancelled (`TimeoutError`) once `seconds`
        have passed, give or take a tick."""
        return Limit(self, seconds)

    def _sweep_of(self, loop: asyncio.AbstractEventLoop) -> _Sweep:
        sweep = self._loops.get(loop)
        if sweep is None:
            sweep = _Sweep(loop, self.tick)
            self._loops[loop] = sweep
        self._last = (loop, sweep)
        return sweep

    @property
    def active(self) -> int:
        """How many limits are in force on the running loop."""
        return len(self._sweep_of(asyncio.get_running_loop()).active)


class _Sweep:
    """The limits in force on one event loop, and the timer of their next sweep."""

    __slots__ = ("active", "loop", "tick", "timer")

    def __init__(self, loop: asyncio.AbstractEventLoop, tick: float) -> None:
        self.loop = loop
        self.tick = tick
        self.active: dict[Limit, None] = {}
        self.timer: asyncio.TimerHandle | None = None

    def run(self) -> None:
        self.timer = None
        now = self.loop.time()
        expired = [limit for limit in self.active if limit.when <= now]
        for limit in expired:
            del self.active[limit]
            limit.expire()
        if self.active:
            self.timer = self.loop.call_later(self.tick, self.run)


class Limit:
    """One use of a limit (`Deadlines.limit`)."""

    __slots__ = ("_cancelling", "_deadlines", "_seconds", "_state", "_sweep", "_task", "when")
    _task: asyncio.Task[Any]
    _cancelling: int
    _sweep: _Sweep
    when: float

    def __init__(self, deadlines: Deadlines, seconds: float) -> None:
        self._deadlines = deadlines
        self._seconds = seconds
        self._state = 0
        # The rest is set on entering: _task, _cancelling, _sweep, when.

    def expire(self) -> None:
        if self._state == _ENTERED:
            self._state = _EXPIRING
            self._task.cancel()

    async def __aenter__(self) -> Self:
        if self._state:
            raise RuntimeError("a limit is entered once")
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a limit is used inside a task")
        loop = task.get_loop()
        self._task = task
        self._cancelling = task.cancelling()
        self._state = _ENTERED
        self.when = loop.time() + self._seconds
        deadlines = self._deadlines
        last = deadlines._last
        sweep = last[1] if last is not None and last[0] is loop else deadlines._sweep_of(loop)
        self._sweep = sweep
        sweep.active[self] = None
        if sweep.timer is None:
            sweep.timer = loop.call_later(sweep.tick, sweep.run)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._sweep.active.pop(self, None)  # a sweep has removed it if it expired
        state, self._state = self._state, _DONE
        # As asyncio.timeout: the cancellation is this limit's unless another came since.
        if state == _EXPIRING and self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc
