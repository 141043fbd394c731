"""The server side: requests read from a stream, handlers by method name, callbacks into
the client mid-request.

Each request runs its handler to completion before the next is read (the protocol has one
request in flight). An unknown method, a handler's `HandlerError` and any other exception
a handler raises are each answered with an `ERROR` tuple and serving goes on; only the
channel itself failing ends it. `Server.serve` returns when the input ends between two
tuples.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable

from agentproto.sync.errors import (
    ChannelBroken,
    ChannelIOError,
    ClientCallError,
    EndedDuringCall,
    FrameError,
    FrameProblem,
    HandlerError,
    MessageType,
    NameMismatch,
    SyncError,
    UnexpectedMessage,
)
from agentproto.sync.frame import BytesLike, FrameReader, FrameWriter, Limits, Readable, Writable

__all__ = ["Handler", "Peer", "Server"]

Handler = Callable[["Peer", memoryview], BytesLike | None]
"""A handler: gets the peer (to call back into the client) and the request's payload (a
view valid until the handler returns, callbacks or not) and returns its result (`None`: empty). Raising
`HandlerError(text)` answers an `ERROR` with exactly that text (`ClientCallError`, which
`Peer.call` raises, is one: `client error: TEXT`); any other exception answers
``handler `NAME` panicked: TEXT``, the Rust server's words for a panic."""


def _text(data: BytesLike) -> str:
    return bytes(data).decode("utf-8", "replace")


class Peer:
    """What a handler uses to call back into the client during its request."""

    __slots__ = ("_broken", "_called", "_done", "_reader", "_writer")

    def __init__(self, reader: FrameReader, writer: FrameWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._broken: SyncError | None = None
        self._called = False
        self._done = False

    def call(self, name: str, payload: BytesLike = b"") -> memoryview:
        """Calls the client's callback `name` with `payload` and waits for its answer (a
        view valid until the next call). Raises `ClientCallError` with the client's text,
        or `ChannelBroken` when the channel broke (then `serve` ends once the handler
        returns, raising the cause)."""
        if self._done:
            raise RuntimeError("a peer can call back only during its own request")
        if self._broken is not None:
            raise ChannelBroken()
        encoded = name.encode()
        if not self._called:
            # The handler's request payload is in the reader's buffer: read answers into the other.
            self._reader.swap_buffers()
            self._called = True
        try:
            self._writer.write(MessageType.CALL, encoded, payload)
        except OSError as error:
            raise self._break(ChannelIOError(f"i/o error on the channel: {error}")) from error
        try:
            frame = self._reader.read()
        except FrameError as error:
            if error.problem is FrameProblem.UNEXPECTED_EOF:
                raise self._break(EndedDuringCall(name)) from error
            raise self._break(error) from error
        except OSError as error:
            raise self._break(ChannelIOError(f"i/o error on the channel: {error}")) from error
        if frame is None:
            raise self._break(EndedDuringCall(name))
        kind = frame.kind
        if kind is MessageType.CALL_RESPONSE or kind is MessageType.CALL_ERROR:
            if frame.name != encoded:
                raise self._break(NameMismatch(kind, name, _text(frame.name)))
            if kind is MessageType.CALL_ERROR:
                raise ClientCallError(_text(frame.payload))
            return frame.payload
        raise self._break(UnexpectedMessage(kind, _text(frame.name)))

    def _finish(self) -> SyncError | None:
        """Ends the peer's request: no more calls; returns why the channel broke, if it did."""
        self._done = True
        return self._broken

    def _break(self, error: SyncError) -> ChannelBroken:
        self._broken = error
        return ChannelBroken()


class Server:
    """Handlers by method name, served over a pair of streams."""

    def __init__(self, limits: Limits | None = None) -> None:
        self._handlers: dict[bytes, Handler] = {}
        self._limits = limits if limits is not None else Limits()

    def handle(self, method: str, handler: Handler) -> Server:
        """Registers the handler of `method` (replacing one of the same name)."""
        self._handlers[method.encode()] = handler
        return self

    def serve(self, input: Readable, output: Writable) -> None:
        """Serves requests read from `input` (an `io.BufferedReader`), answering on
        `output` (a raw `io.FileIO` is best), until `input` ends between two tuples
        (returns) or the channel fails: raises `ProtocolError` (a malformed tuple, or one
        that does not fit), `EndedDuringCall`, or `ChannelIOError`."""
        reader = FrameReader(input, self._limits)
        writer = FrameWriter(output)
        while True:
            try:
                frame = reader.read()
            except OSError as error:
                raise ChannelIOError(f"i/o error on the channel: {error}") from error
            if frame is None:
                return
            if frame.kind is not MessageType.REQUEST:
                raise UnexpectedMessage(frame.kind, _text(frame.name))
            method = frame.name
            # A handler that calls back reads more tuples while it still needs its
            # request's payload: `Peer.call` switches the reader to its other buffer.
            handler = self._handlers.get(method)
            peer = Peer(reader, writer)
            failure: str | None = None
            result: BytesLike | None = None
            if handler is None:
                failure = f"unknown method `{_text(method)}`"
            else:
                try:
                    result = handler(peer, frame.payload)
                    if result is not None and not isinstance(result, bytes | bytearray | memoryview):
                        raise TypeError(f"returned {type(result).__name__}, not bytes, bytearray, memoryview or None")
                except HandlerError as error:
                    failure = error.text
                except Exception as error:  # noqa: BLE001 - answered as an Error tuple; serving goes on
                    failure = f"handler `{_text(method)}` panicked: {str(error) or type(error).__name__}"
            broken = peer._finish()
            if broken is not None:
                raise broken
            try:
                if failure is None:
                    writer.write(MessageType.RESPONSE, method, result if result is not None else b"")
                else:
                    writer.write(MessageType.ERROR, method, failure.encode())
            except OSError as error:
                raise ChannelIOError(f"i/o error on the channel: {error}") from error

    def serve_stdio(self) -> None:
        """`serve` on this process's stdin and stdout, through duplicated descriptors
        (unbuffered output, no text layer). Nothing else may write to stdout meanwhile."""
        input = io.BufferedReader(io.FileIO(os.dup(0), "rb"), 64 * 1024)
        output = io.FileIO(os.dup(1), "wb")
        with input, output:
            self.serve(input, output)
