"""`CancellationToken`: a one-shot signal with callbacks, and children that fire with it.

asyncio's own cancellation (`Task.cancel`) stops a task at its next `await`; a token
instead says *that* something was cancelled and lets the code that owns the work decide
what to do (answer -32800, return a partial result, abandon one call). The connection
gives every incoming request one, a prompt turn gets a child of its request's token,
and a typed call can take one to send `$/cancel_request` while it keeps waiting.

Callbacks run synchronously inside `cancel`, in registration order; they must be quick
and must not raise (an exception is reported by the event loop's handler and the rest
still run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["CancellationToken", "finished_before"]


def _nothing() -> None:
    pass


class CancellationToken:
    """Fires once; everything waiting on it is told."""

    __slots__ = ("_callbacks", "_cancelled", "_detach", "_next")

    def __init__(self) -> None:
        self._cancelled = False
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._detach: Callable[[], None] = _nothing

    @property
    def is_cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Fires the token (again: nothing happens)."""
        if self._cancelled:
            return
        self._cancelled = True
        callbacks = list(self._callbacks.values())
        self._callbacks.clear()
        self._detach = _nothing
        for callback in callbacks:
            try:
                callback()
            except Exception as e:  # noqa: BLE001 - a callback bug must not stop the others
                asyncio.get_running_loop().call_exception_handler(
                    {"message": "cancellation callback failed", "exception": e}
                )

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Runs `callback` when the token fires (at once if it has); returns a function
        that unregisters it."""
        if self._cancelled:
            callback()
            return _nothing
        key = self._next
        self._next += 1
        self._callbacks[key] = callback
        return lambda: self._callbacks.pop(key, None) and None

    def child(self) -> CancellationToken:
        """A token that fires when this one does (and can also fire on its own).

        Call `detach` on the child when it is no longer needed, so that a long-lived
        parent does not keep it."""
        child = CancellationToken()
        child._detach = self.add_callback(child.cancel)
        return child

    def detach(self) -> None:
        """Forgets the link to the parent (see `child`); the token itself is unchanged."""
        detach, self._detach = self._detach, _nothing
        detach()

    async def wait(self) -> None:
        """Returns once the token has fired."""
        if self._cancelled:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        remove = self.add_callback(wake)
        try:
            await future
        finally:
            remove()


def _retrieve(task: asyncio.Task[object]) -> None:
    if not task.cancelled():
        task.exception()


async def finished_before(task: asyncio.Task[object], *tokens: CancellationToken) -> bool:
    """Waits until `task` is done (`True`) or one of `tokens` fires first (`False`);
    when both happened, the task wins. The task is not cancelled here; whatever it ends
    with later is retrieved, so an abandoned task never logs "exception was never
    retrieved"."""
    task.add_done_callback(_retrieve)
    if task.done() or any(t.is_cancelled for t in tokens):
        return task.done()
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake(*_: object) -> None:
        if not future.done():
            future.set_result(None)

    task.add_done_callback(wake)
    removers = [t.add_callback(wake) for t in tokens]
    try:
        await future
    finally:
        task.remove_done_callback(wake)
        for remove in removers:
            remove()
    return task.done()
