"""A small HTTP/1.1 client on `asyncio.open_connection`, with what the ACP client
transports need and nothing more: requests with a body, responses read by
`Content-Length`, `chunked` or to the end of the connection, a cookie jar, and the
upgrade handshake the WebSocket client builds on.

Why not httpx or aiohttp: the client then needs no dependency beyond msgspec (only
serving needs the `http` extra), a stream's bytes go straight from the socket into the
connection's feed with the socket's own flow control as backpressure (a client that
reads slowly slows the server down instead of buffering), and the whole exchange is a
few hundred lines to audit. The price is HTTP/1.1 only: each open SSE stream holds one
TCP connection, as with the official Python client against uvicorn.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["CookieJar", "Endpoint", "HttpError", "Response", "open_stream", "read_response", "write_request"]

_MAX_HEAD = 64 * 1024


class HttpError(Exception):
    """The server answered something this client cannot use (a status, a malformed head)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where the ACP endpoint is: `http://host:port/path` or `https://…`."""

    host: str
    port: int
    path: str
    tls: bool

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
            raise ValueError(f"not an http(s) or ws(s) URL: {url!r}")
        tls = parts.scheme in ("https", "wss")
        port = parts.port or (443 if tls else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(parts.hostname, port, path, tls)

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else f"{host}:{self.port}"

    async def open(self, limit: int = 64 * 1024) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        context = ssl.create_default_context() if self.tls else None
        return await asyncio.open_connection(self.host, self.port, ssl=context, limit=limit)


@dataclass(slots=True)
class CookieJar:
    """The cookies a server set, returned on every later request to it (the RFD asks
    clients to keep them for the connection's life, for sticky routing). Attributes
    other than the name and value are not interpreted: one endpoint, one jar."""

    cookies: dict[str, str] = field(default_factory=dict)

    def store(self, headers: list[tuple[str, str]]) -> None:
        for name, value in headers:
            if name != "set-cookie":
                continue
            pair = value.split(";", 1)[0]
            key, sep, val = pair.partition("=")
            if sep and key.strip():
                self.cookies[key.strip()] = val.strip()

    def header(self) -> str | None:
        if not self.cookies:
            return None
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())


@dataclass(slots=True)
class Response:
    status: int
    headers: list[tuple[str, str]]
    """Names lowercased, in order."""

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None


def write_request(
    writer: asyncio.StreamWriter,
    method: str,
    endpoint: Endpoint,
    headers: list[tuple[str, str]],
    body: bytes | None = None,
) -> None:
    lines = [f"{method} {endpoint.path} HTTP/1.1", f"Host: {endpoint.authority}"]
    lines += [f"{name}: {value}" for name, value in headers]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    writer.write(head + body if body else head)


async def read_response(reader: asyncio.StreamReader) -> Response:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        raise HttpError("the server closed the connection before answering") from e
    except asyncio.LimitOverrunError as e:
        raise HttpError("the response head is too long") from e
    if len(head) > _MAX_HEAD:
        raise HttpError("the response head is too long")
    status_line, *rest = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise HttpError(f"not an HTTP/1.1 status line: {status_line!r}")
    headers: list[tuple[str, str]] = []
    for line in rest:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise HttpError(f"a malformed header line: {line!r}")
        headers.append((name.strip().lower(), value.strip()))
    return Response(int(parts[1]), headers)


async def open_stream(reader: asyncio.StreamReader, response: Response, chunk_size: int) -> AsyncIterator[bytes]:
    """The body of `response`, as it arrives."""
    if (response.header("transfer-encoding") or "").lower().endswith("chunked"):
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise HttpError("the chunked body ended early")
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError as e:
                raise HttpError(f"a malformed chunk size: {size_line[:40]!r}") from e
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            remaining = size
            while remaining:
                data = await reader.read(min(remaining, chunk_size))
                if not data:
                    raise HttpError("the chunked body ended early")
                remaining -= len(data)
                yield data
            await reader.readexactly(2)
        return
    length = response.header("content-length")
    if length is not None:
        remaining = int(length)
        while remaining:
            data = await reader.read(min(remaining, chunk_size))
            if not data:
                raise HttpError("the body ended early")
            remaining -= len(data)
            yield data
        return
    if response.status in (204, 304) or 100 <= response.status < 200:
        return
    while data := await reader.read(chunk_size):
        yield data


async def read_body(reader: asyncio.StreamReader, response: Response, limit: int) -> bytes:
    """The whole body of `response` (at most `limit` bytes)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in open_stream(reader, response, 64 * 1024):
        size += len(chunk)
        if size > limit:
            raise HttpError(f"the response body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
