"""`Connection`: JSON-RPC 2.0 over a byte stream pair, on asyncio.

One connection is driven by one coroutine, `run()`. Inside it, a reader task frames and
decodes the input and routes each message (module `reader`), a worker handles
notifications one at a time (module `handler`), each request runs in its own task, and a
writer task drains the bounded outgoing queue (module `writer`). The application
supplies a `Handler` and sends through `Connection.peer`. The guarantees are the Rust
SDK's (`crates/jsonrpc`, crate docs): ordering (a response reaches its caller after the
notifications read before it were handled), backpressure (bounded queues, nothing
dropped), cancellation both ways (`$/cancel_request`), failures that stay local (a bad
line is answered or reported, a handler exception becomes -32603), and the shutdown
below.

**Shutdown.** At the end of the input, pending calls fail at once with
`ConnectionClosed`, and so does every later call; the tokens of requests still running
fire (they are answered -32800 unless they handle cancellation); notifications already
queued are still handled; handlers get `shutdown_grace` seconds, then are cancelled;
the writer then gets as long to flush, closes the output, and `run()` returns. A read or
write failure ends the connection the same way and `run()` raises `TransportError`.
Cancelling `run()` stops everything it started at once.
"""

from __future__ import annotations

import asyncio
import contextlib

from agentproto.jsonrpc.handler import Handler
from agentproto.jsonrpc.local_error import TransportError
from agentproto.jsonrpc.options import ConnectionOptions, InputClosed
from agentproto.jsonrpc.peer import Peer
from agentproto.jsonrpc.reader import Reader
from agentproto.jsonrpc.transport import ByteReader, ByteWriter
from agentproto.jsonrpc.writer import write_loop

__all__ = ["Connection"]

# After the input ended the peer may be gone already: failing to flush the last answers is expected.
_GONE = (BrokenPipeError, ConnectionResetError)


class Connection:
    """One JSON-RPC connection: reads `input`, dispatches to `handler`, writes `output`.

    Nothing happens until `run()` is awaited.
    """

    def __init__(
        self, input: ByteReader, output: ByteWriter, handler: Handler, options: ConnectionOptions | None = None
    ) -> None:
        self.options = options if options is not None else ConnectionOptions()
        self.peer = Peer(self.options)
        """The handle to call and notify the other side."""
        self._output = output
        self._reader = Reader(input, handler, self.peer, self.options)

    async def run(self) -> None:
        """Runs until the input ends (returns) or the transport fails (raises `TransportError`)."""
        peer = self.peer
        reader = self._reader
        grace = max(0.0, self.options.shutdown_grace)
        writer = asyncio.create_task(write_loop(peer, self._output))
        worker = reader.start_worker()
        peer._worker = worker
        reading = asyncio.create_task(reader.read())
        failure: BaseException | None = None
        try:
            await asyncio.wait((reading, writer), return_when=asyncio.FIRST_COMPLETED)
            if reading.done():
                failure = reading.exception()
                if failure is None:
                    peer.report(InputClosed())
            else:
                reading.cancel()
                failure = writer.exception() or TransportError("the writer ended")
            # No answer can arrive any more.
            peer.close()
            reader.shutdown.cancel()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + grace
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(deadline):
                    await reader.dispatch_deferred()
            reader.queue.put(None)  # the worker ends after what is queued
            waits = {worker, *reader.tasks}
            await asyncio.wait(waits, timeout=max(0.0, deadline - loop.time()))
            # Work the notification handlers handed off, the last of it started by the
            # last notification handled.
            while reader.background and loop.time() < deadline:
                await asyncio.wait(set(reader.background), timeout=max(0.0, deadline - loop.time()))
            # Hard stop: what is still running is cancelled, unanswered.
            reader.hard_stop = True
            await _cancel_all({worker, *reader.tasks, *reader.background})
            peer._stopping = True
            peer._wake_writer()
            if not writer.done():
                await asyncio.wait((writer,), timeout=grace)
            if not writer.done():
                await _cancel_all({writer})
            elif failure is None and not writer.cancelled():
                error = writer.exception()
                if error is not None and not isinstance(error, _GONE):
                    failure = error
        finally:
            # Also when `run()` itself is cancelled: nothing it started outlives it.
            reader.hard_stop = True
            peer.close()
            peer._stopping = True
            await _cancel_all({reading, worker, writer, *reader.tasks, *reader.background})
            peer._writer_ended()
        if failure is not None:
            if isinstance(failure, TransportError):
                raise failure
            raise TransportError(f"the connection's transport failed: {failure!r}") from failure


async def _cancel_all(tasks: set[asyncio.Task[None]]) -> None:
    """Cancels the tasks and waits until each has ended."""
    running = {t for t in tasks if not t.done()}
    for task in running:
        task.cancel()
    if running:
        await asyncio.wait(running)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: reported through `run()` or not at all
