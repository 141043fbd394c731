"""What uvicorn does not do itself, for serving `create_app` on it (the example server
`agentproto.examples.a2a_server` runs with it):

- the header timeout: uvicorn closes a kept-alive connection that stays idle after an
  answer, but a connection that never sends a byte, or sends part of a request head and
  stops, is held until the client goes away, and enough of them take every descriptor. The
  protocol is `agentproto.acp.remote.head_timeout`'s (the ACP remote server has the same
  need): a connection whose request head has not arrived within the timeout (from its accept,
  or from the end of its previous exchange) is closed;
- a transfer coding other than `chunked`: uvicorn's h11 protocol refuses it before the
  application sees the request, with 400; here with 501 (RFC 9112 §6.1), as the
  application answers it under a server that passes it on (`agentproto.a2a.server.codings`);
- closing a connection from the application: each request's scope gets the extension
  `agentproto.close` (`{"close": ...}`, aborting the transport, which drops what it still
  holds), with which the stream budget cuts off a client that stopped reading
  (`agentproto.a2a.server.stream_budget`).

```python
config = uvicorn.Config(app, http=uvicorn_protocol(header_timeout=15.0))
```

Imports uvicorn (h11) when called.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["uvicorn_protocol"]


def uvicorn_protocol(*, header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol class with the header timeout, 501 for transfer codings it
    does not decode and the `agentproto.close` scope extension (see the module
    documentation)."""
    import h11

    from agentproto.acp.remote.head_timeout import head_timed_protocol

    base: Any = head_timed_protocol(header_timeout)

    class Guarded(base):  # type: ignore[misc]
        _status_hint = 400

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            read = self.conn.next_event

            def next_event() -> Any:
                try:
                    return read()
                except h11.RemoteProtocolError as e:
                    self._status_hint = e.error_status_hint
                    raise

            self.conn.next_event = next_event

        def handle_events(self) -> None:
            super().handle_events()
            cycle = getattr(self, "cycle", None)  # the request just read, its task not yet run
            if cycle is not None and not cycle.response_started:
                cycle.scope.setdefault("extensions", {}).setdefault("agentproto.close", {"close": self.transport.abort})

        def send_400_response(self, msg: str) -> None:
            if self._status_hint != 501:
                super().send_400_response(msg)
                return
            plain = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
            text = b"the request's transfer coding is not supported; only chunked is\n"
            for event in (
                h11.Response(status_code=501, headers=plain, reason=b"Not Implemented"),
                h11.Data(data=text),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event))
            self.transport.close()

    return Guarded
