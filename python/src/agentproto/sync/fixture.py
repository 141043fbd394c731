"""A test peer: agentproto's Python sync-channel server on stdin/stdout with the methods
of the Rust one (`crates/sync/src/bin/agentproto-sync-fixture.rs`), so that the client of
every language can run the same tests against either. Not a product program.

- `echo`: answers its payload.
- `callback`: the payload is ``name NUL arg [NUL name NUL arg ...]``; calls the client's
  callback `name` with `arg` for each pair in turn and answers the answers joined with
  NUL. A `CALL_ERROR` from the client fails the request with ``client error: TEXT``.
- `fail`: fails with its payload as the error text.
- `panic`: raises (the server answers ``handler `panic` panicked: the fixture was asked to
  panic`` and goes on).
- `repeat`: the payload is COUNT in decimal; answers COUNT bytes 0..250 repeating.
- `exit`: exits the process with status 3 without answering.

Run it with ``python -m agentproto.sync.fixture``; it exits 0 when its stdin ends and 1
when the channel fails.
"""

from __future__ import annotations

import os
import sys

from agentproto.sync.errors import HandlerError, SyncError
from agentproto.sync.server import Peer, Server

__all__ = ["fixture_server", "main"]

_CYCLE = bytes(range(251))


def _echo(peer: Peer, payload: memoryview) -> memoryview:
    return payload


def _callback(peer: Peer, payload: memoryview) -> bytes:
    parts = bytes(payload).split(b"\0")
    if len(parts) % 2 != 0:
        raise HandlerError("expected name/argument pairs separated by NUL")
    answers = []
    for index in range(0, len(parts), 2):
        try:
            name = parts[index].decode()
        except UnicodeDecodeError:
            raise HandlerError("callback name is not UTF-8") from None
        answers.append(bytes(peer.call(name, parts[index + 1])))
    return b"\0".join(answers)


def _fail(peer: Peer, payload: memoryview) -> None:
    raise HandlerError(bytes(payload).decode("utf-8", "replace"))


def _panic(peer: Peer, payload: memoryview) -> None:
    raise RuntimeError("the fixture was asked to panic")


def _repeat(peer: Peer, payload: memoryview) -> bytes:
    text = bytes(payload)
    if not text.isdigit():
        raise HandlerError("expected a decimal count")
    count = int(text)
    whole, rest = divmod(count, len(_CYCLE))
    return _CYCLE * whole + _CYCLE[:rest]


def _exit(peer: Peer, payload: memoryview) -> None:
    os._exit(3)


def fixture_server() -> Server:
    """The fixture's server, its handlers registered."""
    server = Server()
    server.handle("echo", _echo).handle("callback", _callback).handle("fail", _fail)
    server.handle("panic", _panic).handle("repeat", _repeat).handle("exit", _exit)
    return server


def main() -> int:
    try:
        fixture_server().serve_stdio()
    except SyncError as error:
        print(f"agentproto-sync-fixture (python): {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
