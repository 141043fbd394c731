"""In-memory byte pipes for tests and embedding.

A `pipe` behaves like an OS pipe: `write` buffers, `drain` waits while more than
`capacity` bytes are unread (so a writer that outpaces its reader is held back), `read`
waits for data and returns `b""` once the writer closed and everything was read. A
reader that closes its end makes later writes fail with `BrokenPipeError`.
"""

from __future__ import annotations

import asyncio

__all__ = ["DEFAULT_PIPE_CAPACITY", "PipeReader", "PipeWriter", "duplex", "pipe"]

DEFAULT_PIPE_CAPACITY = 64 * 1024
"""The default capacity of a pipe: 64 KiB, like a Linux pipe."""


class _Pipe:
    __slots__ = ("buffer", "capacity", "readable", "reader_closed", "writable", "writer_closed")

    def __init__(self, capacity: int) -> None:
        self.buffer = bytearray()
        self.capacity = max(1, capacity)
        self.writer_closed = False
        self.reader_closed = False
        self.readable: asyncio.Future[None] | None = None  # a reader waits for data
        self.writable: asyncio.Future[None] | None = None  # a writer waits for room

    @staticmethod
    def wake(future: asyncio.Future[None] | None) -> None:
        if future is not None and not future.done():
            future.set_result(None)


class PipeReader:
    """The reading end of a `pipe`."""

    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    async def read(self, n: int = -1, /) -> bytes:
        pipe = self._pipe
        while not pipe.buffer:
            if pipe.writer_closed or pipe.reader_closed:
                return b""
            pipe.readable = asyncio.get_running_loop().create_future()
            await pipe.readable
        if n < 0 or n >= len(pipe.buffer):
            data = bytes(pipe.buffer)
            pipe.buffer.clear()
        else:
            data = bytes(pipe.buffer[:n])
            del pipe.buffer[:n]
        if len(pipe.buffer) <= pipe.capacity:
            _Pipe.wake(pipe.writable)
        return data

    def close(self) -> None:
        """Stops reading: buffered bytes are dropped, later writes fail."""
        pipe = self._pipe
        pipe.reader_closed = True
        pipe.buffer.clear()
        _Pipe.wake(pipe.writable)
        _Pipe.wake(pipe.readable)


class PipeWriter:
    """The writing end of a `pipe`."""

    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    def write(self, data: bytes, /) -> None:
        pipe = self._pipe
        if pipe.reader_closed:
            raise BrokenPipeError("the reading end of the pipe is closed")
        if pipe.writer_closed:
            raise BrokenPipeError("the pipe is closed")
        if data:
            pipe.buffer += data
            _Pipe.wake(pipe.readable)

    async def drain(self) -> None:
        pipe = self._pipe
        while len(pipe.buffer) > pipe.capacity:
            if pipe.reader_closed:
                break
            pipe.writable = asyncio.get_running_loop().create_future()
            await pipe.writable
        if pipe.reader_closed:
            raise BrokenPipeError("the reading end of the pipe is closed")

    def close(self) -> None:
        pipe = self._pipe
        pipe.writer_closed = True
        _Pipe.wake(pipe.readable)

    def is_closing(self) -> bool:
        return self._pipe.writer_closed

    async def wait_closed(self) -> None:
        return None


def pipe(capacity: int = DEFAULT_PIPE_CAPACITY) -> tuple[PipeReader, PipeWriter]:
    """One direction: bytes written to the writer are read from the reader."""
    shared = _Pipe(capacity)
    return PipeReader(shared), PipeWriter(shared)


def duplex(
    capacity: int = DEFAULT_PIPE_CAPACITY,
) -> tuple[tuple[PipeReader, PipeWriter], tuple[PipeReader, PipeWriter]]:
    """Two connected ends, each a (reader, writer) pair: what one end writes the other reads."""
    a_reader, b_writer = pipe(capacity)
    b_reader, a_writer = pipe(capacity)
    return (a_reader, a_writer), (b_reader, b_writer)
