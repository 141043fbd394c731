"""uvicorn's HTTP/1.1 protocol (h11) with a bound on how long a request's head may take.

uvicorn times out a kept-alive connection that sends nothing, but not one that sends a
request line and then its headers a byte at a time, nor one that connects and sends a
partial head: each would hold a socket (and a slot of the process's file descriptors)
for as long as the peer likes. Here a timer runs from the moment the connection is
accepted, and from the end of each exchange, until a whole request head has arrived; when
it fires the connection is closed. Any byte received does not restart it."""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["head_timed_protocol"]


class _HeadTimedH11(H11Protocol):
    head_timeout: float = 10.0
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        # Waiting for a head (a new connection, or the next request of a kept-alive one):
        # the timer runs; otherwise (a request in progress, a response streaming, a
        # WebSocket upgrade) it does not.
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self._head_timer is None:
                self._arm_head_timer()
        else:
            self._disarm_head_timer()

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_expired)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def head_timed_protocol(timeout: float) -> type[Any]:
    """An h11 protocol class for `uvicorn.Config(http=...)` that closes a connection whose
    request head has not fully arrived `timeout` seconds after it was accepted (or after
    the previous exchange ended)."""
    return type("HeadTimedH11Protocol", (_HeadTimedH11,), {"head_timeout": timeout})
