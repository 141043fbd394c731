"""The client side of RFC 6455 on asyncio streams: the opening handshake and framing,
enough for ACP (text messages out, text messages in; binary messages are skipped,
pings answered, fragments joined, messages over a size bound refused with 1009).
No extensions are negotiated. See `http1` for why this is not a dependency."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import struct

from agentproto.acp.remote.http1 import CookieJar, Endpoint, HttpError, Response, read_response, write_request

__all__ = ["WebSocket", "handshake"]

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_CONTINUATION, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class WebSocket:
    """An open WebSocket (client end)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_message: int) -> None:
        self._reader = reader
        self._writer = writer
        self._max = max_message
        self.closed = False

    def _frame(self, opcode: int, payload: bytes) -> bytes:
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        return head + mask + _masked(payload, mask)

    def send_text(self, payload: bytes) -> None:
        """Queues one text message (`payload` must be UTF-8); `drain` to wait for room."""
        if self.closed:
            raise BrokenPipeError("the WebSocket is closed")
        self._writer.write(self._frame(_TEXT, payload))

    async def drain(self) -> None:
        await self._writer.drain()

    async def receive(self) -> bytes | None:
        """The next text message, `None` once the socket closed."""
        parts: list[bytes] = []
        size = 0
        kind: int | None = None
        while True:
            try:
                fin, opcode, payload = await self._read_frame()
            except (asyncio.IncompleteReadError, ConnectionError):
                self.closed = True
                return None
            if opcode == _CLOSE:
                await self.close(1000)
                return None
            if opcode == _PING:
                if not self.closed:
                    self._writer.write(self._frame(_PONG, payload))
                continue
            if opcode == _PONG:
                continue
            if opcode != _CONTINUATION:
                kind, parts, size = opcode, [], 0
            size += len(payload)
            if size > self._max:
                await self.close(1009)
                return None
            parts.append(payload)
            if fin:
                if kind == _TEXT:
                    return b"".join(parts)
                kind, parts, size = None, [], 0  # a binary message: ignored

    async def _read_frame(self) -> tuple[bool, int, bytes]:
        first, second = await self._reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", await self._reader.readexactly(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", await self._reader.readexactly(8))
        if length > self._max:
            await self.close(1009)
            raise ConnectionError("a WebSocket frame over the size limit")
        mask = await self._reader.readexactly(4) if second & 0x80 else None
        payload = await self._reader.readexactly(length)
        if mask is not None:
            payload = _masked(payload, mask)
        return bool(first & 0x80), first & 0x0F, payload

    async def close(self, code: int = 1000) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._writer.write(self._frame(_CLOSE, struct.pack("!H", code)))
            await self._writer.drain()
        except (ConnectionError, RuntimeError):
            pass
        self._writer.close()


def _masked(payload: bytes, mask: bytes) -> bytes:
    if not payload:
        return payload
    # XOR as one big integer: fast in CPython for any length.
    repeated = (mask * (len(payload) // 4 + 1))[: len(payload)]
    value = int.from_bytes(payload, "little") ^ int.from_bytes(repeated, "little")
    return value.to_bytes(len(payload), "little")


async def handshake(
    endpoint: Endpoint, headers: list[tuple[str, str]], cookies: CookieJar, max_message: int
) -> tuple[WebSocket, Response]:
    """Opens the socket (a GET with `Upgrade: websocket`); raises `HttpError` unless the
    server switched protocols with the right accept key."""
    reader, writer = await endpoint.open()
    key = base64.b64encode(os.urandom(16)).decode()
    request = [
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", key),
        ("Sec-WebSocket-Version", "13"),
        *headers,
    ]
    cookie = cookies.header()
    if cookie is not None:
        request.append(("Cookie", cookie))
    try:
        write_request(writer, "GET", endpoint, request)
        await writer.drain()
        response = await read_response(reader)
        cookies.store(response.headers)
        if response.status != 101:
            raise HttpError(f"the WebSocket upgrade was refused with {response.status}", response.status)
        expected = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        if response.header("sec-websocket-accept") != expected:
            raise HttpError("the server's Sec-WebSocket-Accept does not match the key")
    except BaseException:
        writer.close()
        raise
    return WebSocket(reader, writer, max_message), response
