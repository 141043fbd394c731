"""What a connection reads from and writes to.

`asyncio.StreamReader` / `asyncio.StreamWriter` fit as they are (a subprocess's pipes,
a socket); `agentproto.jsonrpc.memory` has in-memory pipes for tests, and
`agentproto.jsonrpc.stdio` this process's stdin and stdout.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["ByteReader", "ByteWriter"]


class ByteReader(Protocol):
    """A byte stream to read."""

    async def read(self, n: int = -1, /) -> bytes:
        """Up to `n` bytes as soon as some are available; `b""` at the end of the stream."""
        ...


class ByteWriter(Protocol):
    """A byte stream to write, with flow control."""

    def write(self, data: bytes, /) -> None:
        """Buffers `data` (never blocks)."""
        ...

    async def drain(self) -> None:
        """Waits until the buffer is small enough to write more; raises when the stream broke."""
        ...

    def close(self) -> None:
        """Closes the stream (the reader on the other end sees its end)."""
        ...
