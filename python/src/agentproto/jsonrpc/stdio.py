"""This process's stdin and stdout as a connection's byte streams (the agent side of ACP).

Pipes, sockets and terminals are read and written without blocking the event loop
(`loop.connect_read_pipe` / `connect_write_pipe`). A regular file cannot be watched by
the event loop (`agent < requests.jsonl > answers.jsonl`): it is read in a worker thread
and written directly, which never blocks for long on a file.

Write logs to stderr: anything else printed to stdout corrupts the stream.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import sys
from typing import BinaryIO

from agentproto.jsonrpc.transport import ByteReader, ByteWriter

__all__ = ["stdio_streams"]


class _FileReader:
    """Reads a file descriptor the event loop cannot watch, in a worker thread."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def read(self, n: int = -1, /) -> bytes:
        size = n if n > 0 else 64 * 1024
        return await asyncio.get_running_loop().run_in_executor(None, os.read, self._fd, size)


class _FileWriter:
    """Writes a file descriptor the event loop cannot watch, directly."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes, /) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.flush()


def _pollable(fd: int, events: int) -> bool:
    """Whether the event loop can watch `fd` (pipes, sockets, terminals can; regular
    files and `/dev/null` cannot: epoll refuses them, and `connect_read_pipe` would only
    find out later, in a callback)."""
    selector = selectors.DefaultSelector()
    try:
        selector.register(fd, events)
    except (OSError, ValueError):
        return False
    finally:
        selector.close()
    return True


async def stdio_streams() -> tuple[ByteReader, ByteWriter]:
    """Stdin as a `ByteReader` and stdout as a `ByteWriter`."""
    loop = asyncio.get_running_loop()
    stdin: ByteReader
    stdout: ByteWriter
    if _pollable(sys.stdin.fileno(), selectors.EVENT_READ):
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        stdin = reader
    else:
        stdin = _FileReader(sys.stdin.fileno())
    if _pollable(sys.stdout.fileno(), selectors.EVENT_WRITE):
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
        stdout = asyncio.StreamWriter(transport, protocol, None, loop)
    else:
        stdout = _FileWriter(sys.stdout.buffer)
    return stdin, stdout
