"""Tuples on the wire: reading and writing `[type, name, payload]`.

Every message is a MessagePack array of three elements, always in one shape (facts of the
TypeScript 7 API server's sync channel, `tsc --api` of npm `typescript@7.0.2`; the Rust
crate `crates/sync/src/frame.rs` reads and writes the same bytes):

=================================  ==================================================
byte(s)                            meaning
=================================  ==================================================
``0x93``                           fixarray of 3
``0x01``-``0x06``, or ``0xcc`` +   the `MessageType` (positive fixint; a reader also
one byte                           takes uint8)
``0xc4`` len8 / ``0xc5`` len16 BE  the name (a method or callback name)
/ ``0xc6`` len32 BE, the bytes
the same bin forms                 the payload
=================================  ==================================================

The reader is strict: any other byte where one of these is expected is a `FrameError`
naming what was expected and what was found, and a length over the `Limits` is refused
before anything is allocated. The writer always uses the shortest bin form and a positive
fixint type.

`FrameReader` reads payloads with `readinto` into one `bytearray` reused from tuple to
tuple and hands out `memoryview`s of it: a payload is valid until the next `read`. The
buffer only ever grows by replacement (a bigger one is allocated), so a view kept too long
shows newer bytes but never points at freed memory.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import NamedTuple, Protocol

from agentproto.sync.errors import Field, FrameError, FrameProblem, MessageType

__all__ = [
    "ARRAY_HEADER",
    "BIN8",
    "BIN16",
    "BIN32",
    "UINT8_MARKER",
    "BytesLike",
    "Frame",
    "FrameReader",
    "FrameWriter",
    "Limits",
    "Readable",
    "Writable",
    "bin_header",
    "encode",
]

ARRAY_HEADER = 0x93
"""The first byte of every tuple: a MessagePack fixarray of three elements."""
UINT8_MARKER = 0xCC
"""MessagePack `uint8`: a type byte follows (accepted on read, never written)."""
BIN8 = 0xC4
"""MessagePack `bin 8`: a one-byte length follows."""
BIN16 = 0xC5
"""MessagePack `bin 16`: a big-endian two-byte length follows."""
BIN32 = 0xC6
"""MessagePack `bin 32`: a big-endian four-byte length follows."""

BytesLike = bytes | bytearray | memoryview
"""What a payload may be given as (anything with the buffer protocol, in byte format)."""

_COALESCE_LIMIT = 64 * 1024
"""Payloads up to this size are copied next to their header and written with one write."""

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_TYPES = {kind.value: kind for kind in MessageType}


class Readable(Protocol):
    """What a `FrameReader` reads from: `io.BufferedReader` (or `io.BytesIO`)."""

    def read(self, size: int, /) -> bytes: ...

    def readinto(self, buffer: memoryview, /) -> int | None: ...


class Writable(Protocol):
    """What a `FrameWriter` writes to: a raw `io.FileIO` (unbuffered is best), a buffered
    stream, or `io.BytesIO`. `write` may write less than it was given."""

    def write(self, data: bytes | bytearray | memoryview, /) -> int | None: ...

    def flush(self) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """The largest name and payload a reader accepts (the wire allows up to 4 GiB - 1)."""

    max_name: int = 64 * 1024
    max_payload: int = 1 << 30


class Frame(NamedTuple):
    """One tuple read. `payload` is a view of the reader's reused buffer: valid until the
    reader's next `read` (copy it with `bytes(frame.payload)` to keep it)."""

    kind: MessageType
    name: bytes
    payload: memoryview


def _eof(stage: str) -> FrameError:
    return FrameError(
        FrameProblem.UNEXPECTED_EOF, f"end of stream in the middle of a tuple, while reading the {stage}", stage=stage
    )


class FrameReader:
    """Reads tuples from a byte stream into a payload buffer reused from tuple to tuple."""

    __slots__ = ("_buffer", "_limits", "_name", "_payload", "_spare", "_stream")

    def __init__(self, stream: Readable, limits: Limits | None = None) -> None:
        self._stream = stream
        self._limits = limits if limits is not None else Limits()
        self._buffer = bytearray(4096)
        self._spare: bytearray | None = None
        self._name = b""
        self._payload = memoryview(self._buffer)[:0]

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def name(self) -> bytes:
        """The last name read (empty before the first read)."""
        return self._name

    @property
    def payload(self) -> memoryview:
        """The last payload read (empty before the first read)."""
        return self._payload

    def swap_buffers(self) -> None:
        """Makes the next tuples read into a second buffer (allocated on first use), so
        that the last payload stays valid while more tuples are read: for a server whose
        handler reads callback answers while it still needs its request. Called again, it
        goes back to the first buffer; no copy either way."""
        if self._spare is None:
            self._spare = bytearray(4096)
        self._buffer, self._spare = self._spare, self._buffer

    def read(self) -> Frame | None:
        """Reads the next tuple; `None` is a clean end of stream (nothing of a new tuple
        had been read). Raises `FrameError`; `OSError`s of the stream go through."""
        stream = self._stream
        first = stream.read(1)
        if not first:
            return None
        if first[0] != ARRAY_HEADER:
            raise FrameError(
                FrameProblem.ARRAY_HEADER, f"expected a fixarray of 3 (0x93), found 0x{first[0]:02x}", found=first[0]
            )
        kind = self._read_type()
        name_length = self._read_length(Field.NAME, self._limits.max_name)
        name = stream.read(name_length) if name_length else b""
        if len(name) < name_length:
            raise _eof("name")
        payload_length = self._read_length(Field.PAYLOAD, self._limits.max_payload)
        if payload_length > len(self._buffer):
            # Replaced, never resized: a view handed out earlier keeps its memory.
            self._buffer = bytearray(min(max(payload_length, 2 * len(self._buffer)), self._limits.max_payload))
        payload = memoryview(self._buffer)[:payload_length]
        filled = 0
        while filled < payload_length:
            count = stream.readinto(payload[filled:])
            if not count:
                raise _eof("payload")
            filled += count
        self._name = name
        self._payload = payload
        return Frame(kind, name, payload)

    def _read_byte(self, stage: str) -> int:
        byte = self._stream.read(1)
        if not byte:
            raise _eof(stage)
        return byte[0]

    def _read_type(self) -> MessageType:
        marker = self._read_byte("message type")
        if marker <= 0x7F:
            value = marker
        elif marker == UINT8_MARKER:
            value = self._read_byte("message type")
        else:
            raise FrameError(
                FrameProblem.TYPE_MARKER,
                f"expected the message type as a positive fixint or uint8 (0xcc), found 0x{marker:02x}",
                found=marker,
            )
        kind = _TYPES.get(value)
        if kind is None:
            raise FrameError(FrameProblem.UNKNOWN_TYPE, f"unknown message type {value} (expected 1 to 6)", value=value)
        return kind

    def _read_length(self, field: Field, limit: int) -> int:
        stage = f"{field.value} length"
        marker = self._read_byte(stage)
        if marker == BIN8:
            length = self._read_byte(stage)
        elif marker == BIN16 or marker == BIN32:
            size = 2 if marker == BIN16 else 4
            raw = self._stream.read(size)
            if len(raw) < size:
                raise _eof(stage)
            length = int.from_bytes(raw, "big")
        else:
            raise FrameError(
                FrameProblem.BIN_MARKER,
                f"expected bin8, bin16 or bin32 (0xc4-0xc6) for the {field.value}, found 0x{marker:02x}",
                field=field,
                found=marker,
            )
        if length > limit:
            raise FrameError(
                FrameProblem.TOO_LONG,
                f"{field.value} of {length} bytes is over the limit of {limit} bytes",
                field=field,
                length=length,
                limit=limit,
            )
        return length


def bin_header(length: int) -> bytes:
    """The bytes of a bin header for `length`, in the shortest form."""
    if length < 0x100:
        return bytes((BIN8, length))
    if length < 0x10000:
        return b"\xc5" + _U16.pack(length)
    if length <= 0xFFFF_FFFF:
        return b"\xc6" + _U32.pack(length)
    raise ValueError(f"{length} bytes do not fit a bin32")


def _header(kind: MessageType, name: bytes, payload_length: int) -> bytes:
    if len(name) > 0xFFFF_FFFF:
        raise ValueError(f"name of {len(name)} bytes does not fit a bin32")
    if payload_length > 0xFFFF_FFFF:
        raise ValueError(f"payload of {payload_length} bytes does not fit a bin32")
    if len(name) < 0x100:
        start = bytes((ARRAY_HEADER, kind, BIN8, len(name)))
    else:
        start = bytes((ARRAY_HEADER, kind)) + bin_header(len(name))
    return start + name + bin_header(payload_length)


def _byte_length(payload: BytesLike) -> int:
    return payload.nbytes if isinstance(payload, memoryview) else len(payload)


def encode(kind: MessageType, name: bytes, payload: BytesLike) -> bytes:
    """One whole tuple."""
    return _header(kind, name, _byte_length(payload)) + payload


class FrameWriter:
    """Writes tuples to a byte stream, each written whole and then flushed."""

    __slots__ = ("_buffer", "_stream")

    def __init__(self, stream: Writable) -> None:
        self._stream = stream
        self._buffer = bytearray()

    @property
    def stream(self) -> Writable:
        return self._stream

    def write(self, kind: MessageType, name: bytes, payload: BytesLike) -> None:
        """Writes one tuple and flushes. `OSError`s of the stream go through."""
        length = _byte_length(payload)
        header = _header(kind, name, length)
        if length <= _COALESCE_LIMIT:
            buffer = self._buffer
            buffer[:] = header
            buffer += payload
            self._write_all(buffer)
        else:
            self._write_all(header)
            self._write_all(payload)
        self._stream.flush()

    def _write_all(self, data: BytesLike) -> None:
        with memoryview(data) as view, view.cast("B") as view:
            total = view.nbytes
            done = self._stream.write(view)
            while done is None or done < total:
                count = self._stream.write(view[done or 0 :])
                if not count:
                    raise OSError("the stream accepted no bytes (a non-blocking stream?)")
                done = (done or 0) + count
