"""Read-order bookkeeping for one ACP connection (see `agentproto.acp.endpoint`,
"Pipelined messages"): the requests read whose outcome later messages depend on and
that have not settled yet, and the waiters that re-check when one settles.

A request is recorded as it is read (on the reader, before its handler task starts) and
removed when its handler has finished. A later message waits for the unsettled requests
read before it that could change what it finds: an `initialize`, a request that could
make its session exist or stop existing, an earlier prompt on its session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Container

from agentproto.jsonrpc.handler import RequestContext

__all__ = ["ReadOrder", "ReadPoint"]

Later = tuple[str, int]
"""A message read later: `("request", index)` or `("notification", index)`."""


class ReadPoint:
    """Where a request was read: its number among requests, and how many notifications
    were read before it."""

    __slots__ = ("notifications", "request")

    def __init__(self, request: int, notifications: int) -> None:
        self.request = request
        self.notifications = notifications

    @classmethod
    def of(cls, rpc: RequestContext) -> ReadPoint:
        return cls(rpc.index, rpc.notifications_before)

    def before(self, later: Later) -> bool:
        """Whether this point was read before `later`."""
        kind, index = later
        return self.request < index if kind == "request" else self.notifications < index


class _Unsettled:
    __slots__ = ("at", "initialize", "prompt", "session")

    def __init__(self, at: ReadPoint, initialize: bool, session: str | None, prompt: bool) -> None:
        self.at = at
        self.initialize = initialize
        self.session = session  # a session request: the session it names (None: any, created)
        self.prompt = prompt  # a prompt turn on `session`


class ReadOrder:
    """The unsettled requests of one connection and the messages waiting for them."""

    __slots__ = ("_changes", "_unsettled")

    def __init__(self) -> None:
        self._unsettled: list[_Unsettled] = []
        self._changes: list[asyncio.Future[None]] = []

    def add(self, at: ReadPoint, initialize: bool, session: str | None, prompt: bool = False) -> None:
        """Records a request read at `at` as unsettled."""
        self._unsettled.append(_Unsettled(at, initialize, session, prompt))

    def changed(self) -> None:
        """Something a waiting message may wait for is done: wake every waiter to re-check."""
        changes, self._changes = self._changes, []
        for future in changes:
            if not future.done():
                future.set_result(None)

    def next_change(self) -> asyncio.Future[None]:
        """A future that `changed` completes."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._changes.append(future)
        return future

    async def _wait_while(self, blocked: Callable[[], bool]) -> None:
        while blocked():
            await self.next_change()

    def settle(self, index: int) -> None:
        """The handler of request number `index` has finished, its effect applied."""
        before = len(self._unsettled)
        if before:
            self._unsettled = [u for u in self._unsettled if u.at.request != index]
            if len(self._unsettled) != before:
                self.changed()

    async def settle_initialize(self, later: Later) -> None:
        """Waits until every `initialize` read before `later` has finished."""
        if not self._unsettled:
            return
        await self._wait_while(lambda: any(u.initialize and u.at.before(later) for u in self._unsettled))

    async def settle_session(self, later: Later, session: str, known: Container[str]) -> None:
        """Waits until no request read before `later` that could make `session` exist or
        stop existing is still running (`known`: the sessions that exist now)."""
        if not self._unsettled:
            return
        await self._wait_while(lambda: self.session_unsettled(later, session, known))

    def session_unsettled(self, later: Later, session: str, known: Container[str]) -> bool:
        """Whether a request read before `later` that could make `session` exist or stop
        existing is still running."""
        for u in self._unsettled:
            if not u.at.before(later) or u.initialize or u.prompt:
                continue
            if (u.session is None and session not in known) or u.session == session:
                return True
        return False

    async def settle_prompts(self, later: Later, session: str) -> None:
        """Waits until no prompt on `session` read before `later` is still running, so
        that prompts pipelined on one session run one after the other, in read order."""
        if not self._unsettled:
            return
        await self._wait_while(
            lambda: any(u.prompt and u.session == session and u.at.before(later) for u in self._unsettled)
        )
