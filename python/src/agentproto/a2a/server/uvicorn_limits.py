"""What uvicorn does not do itself, for serving `create_app` on it:

- the header timeout: uvicorn closes a kept-alive connection that stays idle after an
  answer, but a connection that never sends a byte, or sends part of a request head and
  stops, is held until the client goes away, and enough of them take every descriptor.
  Here a connection that has not sent a whole request head within the timeout (from its
  accept, or from the end of its previous answer) is closed;
- a transfer coding other than `chunked`: uvicorn's h11 protocol refuses it before the
  application sees the request, with 400; here with 501 (RFC 9112 §6.1), as the
  application answers it under a server that passes it on (`agentproto.a2a.server.codings`).

```python
config = uvicorn.Config(app, http=uvicorn_protocol(header_timeout=15.0))
```

It subclasses the protocol uvicorn would pick itself (httptools when installed, else
h11), so everything else stays as uvicorn does it. Imports uvicorn when called.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["uvicorn_protocol"]


def uvicorn_protocol(*, header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's own HTTP protocol class, closing connections whose request head has not
    arrived within `header_timeout` seconds (see the module documentation)."""
    from uvicorn.config import HTTP_PROTOCOLS
    from uvicorn.importer import import_from_string

    base: Any = import_from_string(HTTP_PROTOCOLS["auto"])

    class Guarded(base):  # type: ignore[misc]
        _head_timer: asyncio.TimerHandle | None = None
        _status_hint = 400

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            conn = getattr(self, "conn", None)
            if conn is not None and hasattr(conn, "their_state"):  # h11: keep its status hint
                self._watch_h11(conn)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            # The wait is for the head of the request after `cycle` (None: the first).
            self._head_timer = self.loop.call_later(header_timeout, self._late, self.cycle)

        def _late(self, waiting_after: Any) -> None:
            self._head_timer = None
            # A pipelined request may already have begun (then `cycle` is another), or be
            # the one armed for while still answering (then it is not complete).
            idle = waiting_after is None or waiting_after.response_complete
            if self.cycle is waiting_after and idle and not self.transport.is_closing():
                self.transport.close()

        def _watch_h11(self, conn: Any) -> None:
            import h11

            read = conn.next_event

            def next_event() -> Any:
                try:
                    return read()
                except h11.RemoteProtocolError as e:
                    self._status_hint = e.error_status_hint
                    raise

            conn.next_event = next_event

        def send_400_response(self, msg: str) -> None:
            if self._status_hint != 501:
                super().send_400_response(msg)
                return
            import h11

            plain = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
            text = b"the request's transfer coding is not supported; only chunked is\n"
            for event in (
                h11.Response(status_code=501, headers=plain, reason=b"Not Implemented"),
                h11.Data(data=text),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event))
            self.transport.close()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded
