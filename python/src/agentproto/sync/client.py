"""The client side: a server child process and the requests sent to it.

`Client.spawn` starts the server with piped stdin and stdout and the caller's stderr, in
a process group of its own (`process_group=0`). `close()`, leaving a `with` block, any
failure that leaves the channel unusable, garbage collection and interpreter exit each
end the whole group with SIGKILL and reap the child. A client killed with SIGKILL runs
none of that: `spawn(die_with_parent=True)` (Linux) then has the kernel SIGKILL the server
when the thread that spawned it ends, as the Rust client's option does (it follows the
*thread*, reaches the direct child only, and makes `subprocess` fork with a hook).

All I/O is blocking. The answer of `request` is a `memoryview` of the client's reused
payload buffer: valid until the next request (`request_bytes` returns a copy).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar, cast, overload

import msgspec

from agentproto.sync.errors import (
    CallbackError,
    ChannelClosed,
    ChannelIOError,
    ChildExited,
    DecodeResultError,
    EncodeParamsError,
    FrameError,
    FrameProblem,
    MessageType,
    NameMismatch,
    ProtocolError,
    ServerError,
    UnexpectedMessage,
)
from agentproto.sync.frame import BytesLike, FrameReader, FrameWriter, Limits

__all__ = ["Callback", "Client"]

T = TypeVar("T")

Callback = Callable[[memoryview], BytesLike | None]
"""A callback the server may call mid-request. It gets the call's payload (a view valid
during the call only) and returns its answer (`None`: empty, which the TypeScript server
reads as "use the real file system"). Raising `CallbackError(text)` answers a `CALL_ERROR`
with that text; any other exception answers one too, as Rust does for a panic."""

_READ_AHEAD = 64 * 1024
_json_encoder = msgspec.json.Encoder()


def _text(data: BytesLike) -> str:
    return bytes(data).decode("utf-8", "replace")


def _exception_text(error: BaseException) -> str:
    return str(error) or type(error).__name__


class _Child:
    """The process, its group, and ending both once (shared by `Client` and its finalizer,
    which must not refer to the client)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lock = threading.Lock()
        self.status: int | None = None

    def kill(self) -> None:
        """SIGKILLs the group unless the child has been reaped (its pid may be reused)."""
        with self.lock:
            if self.status is None:
                _kill(self.process.pid)

    def end(self) -> int:
        """Closes stdin, SIGKILLs the group (the child too, should it have left it), reaps
        the child and closes stdout. Returns its status (its own if it had exited)."""
        with self.lock:
            if self.status is not None:
                return self.status
            process = self.process
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            _kill(process.pid)
            with contextlib.suppress(ProcessLookupError, OSError):
                process.send_signal(signal.SIGKILL)  # does nothing once reaped
            self.status = process.wait()
            if process.stdout is not None:
                process.stdout.close()
            return self.status


def _kill(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class Client:
    """A server child process and the blocking channel to it. Not thread-safe, except
    `kill()`, which any thread may call (a watchdog enforcing a deadline)."""

    def __init__(self, process: subprocess.Popen[bytes], limits: Limits | None = None) -> None:
        """Takes over a process started with piped stdin and stdout, unbuffered
        (`bufsize=0`), in its own process group; `Client.spawn` does that."""
        if process.stdin is None or process.stdout is None:
            raise ValueError("the server process needs piped stdin and stdout")
        self._child = _Child(process)
        self._finalizer = weakref.finalize(self, self._child.end)
        # With `bufsize=0` both pipes are raw `io.FileIO`s.
        stdout = cast(io.RawIOBase, process.stdout)
        self._reader = FrameReader(io.BufferedReader(stdout, _READ_AHEAD), limits)
        self._writer: FrameWriter | None = FrameWriter(cast(io.RawIOBase, process.stdin))
        self._callbacks: dict[bytes, Callback] = {}
        self._in_flight = False

    @classmethod
    def spawn(
        cls,
        command: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        die_with_parent: bool = False,
    ) -> Client:
        """Starts `command` as the server: stdin and stdout piped, stderr inherited, in a
        process group of its own. `OSError` if it cannot start (or if `die_with_parent` is
        asked for off Linux)."""
        if not command:
            raise ValueError("a server command needs at least the program")
        hook = None
        if die_with_parent:
            # The ACP process module's `prctl(PR_SET_PDEATHSIG)` hook, imported on demand.
            from agentproto.acp.process import _death_signal_hook

            hook = _death_signal_hook()
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            bufsize=0,
            cwd=cwd,
            env=None if env is None else dict(env),
            process_group=0,
            preexec_fn=hook,  # noqa: PLW1509 - only with die_with_parent: two system calls, no lock
        )
        try:
            return cls(process, limits)
        except BaseException:
            _Child(process).end()
            raise

    @property
    def pid(self) -> int:
        """The server's pid (also its process group id)."""
        return self._child.process.pid

    @property
    def returncode(self) -> int | None:
        """The server's status once the client has reaped it, else `None`."""
        return self._child.status

    def kill(self) -> None:
        """SIGKILLs the server's process group from any thread, unless it has been reaped:
        a request blocked on it then fails with `ChildExited`."""
        self._child.kill()

    def register_callback(self, name: str, callback: Callback) -> None:
        """Registers the callback `name` (replacing one of the same name). A call to a name
        that is not registered is answered with a `CALL_ERROR`. The client keeps reading
        after any answer until the server answers the request in flight."""
        self._callbacks[name.encode()] = callback

    def request(self, method: str, payload: BytesLike = b"") -> memoryview:
        """Sends the request `method` with `payload` and waits for its answer, answering
        the server's callbacks meanwhile. The result is a view of the client's reused
        buffer, valid until the next request; empty is what the server sends for "no
        value". Raises `ServerError`, `ProtocolError`, `ChildExited`, `ChannelClosed`,
        `ChannelIOError`."""
        writer = self._writer
        if writer is None:
            raise self._closed_error()
        if self._in_flight:
            raise RuntimeError("a request is already in flight on this channel (from a callback, or another thread)")
        expected = method.encode()
        if (
            len(expected) > 0xFFFF_FFFF
            or (payload.nbytes if isinstance(payload, memoryview) else len(payload)) > 0xFFFF_FFFF
        ):
            raise ValueError("a name or payload over 4 GiB - 1 bytes does not fit a bin32")
        self._in_flight = True
        try:
            try:
                writer.write(MessageType.REQUEST, expected, payload)
            except OSError as error:
                raise self._fail_io(error) from error
            while True:
                try:
                    frame = self._reader.read()
                except FrameError as error:
                    if error.problem is FrameProblem.UNEXPECTED_EOF:
                        # The child went away in the middle of a tuple (killed while answering).
                        raise self._child_gone() from error
                    raise self._fail(error) from None
                except OSError as error:
                    raise self._fail_io(error) from error
                if frame is None:
                    raise self._child_gone()
                kind = frame.kind
                if kind is MessageType.RESPONSE or kind is MessageType.ERROR:
                    if frame.name != expected:
                        raise self._fail(NameMismatch(kind, method, _text(frame.name)))
                    if kind is MessageType.ERROR:
                        raise ServerError(_text(frame.payload))
                    return frame.payload
                if kind is MessageType.CALL:
                    self._answer_call(frame.name, frame.payload)
                else:
                    raise self._fail(UnexpectedMessage(kind, _text(frame.name)))
        except (ServerError, ProtocolError, ChildExited, ChannelClosed, ChannelIOError):
            raise
        except BaseException:
            # Interrupted mid-exchange (KeyboardInterrupt, ...): the stream cannot be resumed.
            self._child.end()
            self._writer = None
            raise
        finally:
            self._in_flight = False

    def request_bytes(self, method: str, payload: BytesLike = b"") -> bytes:
        """`request`, with the result copied out of the reused buffer."""
        return bytes(self.request(method, payload))

    @overload
    def request_json(self, method: str, params: Any) -> Any: ...

    @overload
    def request_json(self, method: str, params: Any, result_type: type[T]) -> T | None: ...

    def request_json(self, method: str, params: Any, result_type: Any = Any) -> Any:
        """Sends `params` encoded as JSON by msgspec and decodes the JSON result as
        `result_type` (msgspec's types: a Struct, `dict[str, Any]`, ...; default: plain
        Python values); `None` when the server's result is empty ("undefined"). Raises
        `EncodeParamsError`, `DecodeResultError` and what `request` raises."""
        try:
            encoded = _json_encoder.encode(params)
        except (TypeError, ValueError, msgspec.MsgspecError) as error:
            raise EncodeParamsError(method) from error
        result = self.request(method, encoded)
        if not result:
            return None
        try:
            return msgspec.json.decode(result, type=result_type)
        except msgspec.MsgspecError as error:
            raise DecodeResultError(method) from error

    def close(self) -> int:
        """Closes the server's stdin, ends its process group and reaps it. Returns its
        status (a server that had already exited by itself reports its own; otherwise it is
        `-SIGKILL`)."""
        self._writer = None
        return self._child.end()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._writer is not None else f"closed, status {self._child.status}"
        return f"<Client pid={self.pid} {state} callbacks={sorted(name.decode() for name in self._callbacks)}>"

    def _answer_call(self, name: bytes, payload: memoryview) -> None:
        callback = self._callbacks.get(name)
        failure: str | None = None
        answer: BytesLike | None = None
        if callback is None:
            failure = f"unknown callback `{_text(name)}`"
        else:
            try:
                answer = callback(payload)
                if answer is not None and not isinstance(answer, bytes | bytearray | memoryview):
                    raise TypeError(f"returned {type(answer).__name__}, not bytes, bytearray, memoryview or None")
            except CallbackError as error:
                failure = error.text
            except Exception as error:  # noqa: BLE001 - answered as a CallError, as Rust answers a panic
                failure = f"callback `{_text(name)}` panicked: {_exception_text(error)}"
        writer = self._writer
        if writer is None:
            raise self._closed_error()
        try:
            if failure is None:
                writer.write(MessageType.CALL_RESPONSE, name, answer if answer is not None else b"")
            else:
                writer.write(MessageType.CALL_ERROR, name, failure.encode())
        except OSError as error:
            raise self._fail_io(error) from error

    def _closed_error(self) -> ChildExited | ChannelClosed:
        status = self._child.status
        return ChildExited(status) if status is not None else ChannelClosed()

    def _child_gone(self) -> ChildExited:
        """The server closed stdout: reap it and report how it ended."""
        self._writer = None
        return ChildExited(self._child.end())

    def _fail_io(self, error: OSError) -> ChildExited | ChannelIOError:
        if isinstance(error, BrokenPipeError | ConnectionResetError):
            return self._child_gone()
        self._writer = None
        self._child.end()
        return ChannelIOError(f"i/o error on the channel: {error}")

    def _fail(self, error: ProtocolError) -> ProtocolError:
        # Past a tuple that does not fit, the stream cannot be resynchronised.
        self._writer = None
        self._child.end()
        return error
