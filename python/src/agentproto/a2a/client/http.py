"""A small HTTP/1.1 client on `asyncio.open_connection`: keep-alive connections per
origin, `Content-Length` and chunked bodies, and a body read piece by piece for SSE.

It is what the A2A client needs and no more, so that msgspec stays the package's one
dependency: no redirects, no cookies, no compression, no proxies (see `python/README.md`).
Every read is bounded by the caller's timeout.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from agentproto.errors import AgentprotoError

__all__ = ["HttpClient", "HttpError", "HttpResponse", "Origin"]

MAX_HEAD = 64 << 10
MAX_BODY = 64 << 20


class HttpError(AgentprotoError):
    """A transport failure: the connection could not be made, broke, or the answer is no
    valid HTTP/1.1. `sent` says whether the request may have reached the server."""

    def __init__(self, message: str, *, sent: bool = True) -> None:
        super().__init__(message)
        self.sent = sent


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> tuple[Origin, str]:
        """The origin of an `http(s)://` URL and its target (path and query)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http or https URL: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(parts.scheme, parts.hostname, port), target

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        self.writer.close()


class HttpResponse:
    """An answer whose head is read; its body is read with `read()` or `chunks()`."""

    def __init__(self, client: HttpClient, origin: Origin, conn: _Connection, status: int, headers: dict[str, str]):
        self._client = client
        self._origin = origin
        self._conn: _Connection | None = conn
        self.status = status
        self.headers = headers
        """Header names in lower case; repeated headers joined with `, `."""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, piece by piece as it arrives. The connection goes back to the pool
        when the body was read to its end, and is closed otherwise."""
        conn = self._conn
        if conn is None:
            return
        reader = conn.reader
        reusable = self.headers.get("connection", "").lower() != "close"
        try:
            if self.headers.get("transfer-encoding", "").lower().endswith("chunked"):
                while True:
                    size_line = await reader.readuntil(b"\n")
                    size = int(size_line.split(b";")[0].strip(), 16)
                    if size == 0:
                        while (await reader.readuntil(b"\n")).strip():
                            pass
                        break
                    yield await reader.readexactly(size)
                    await reader.readexactly(2)
            elif "content-length" in self.headers:
                left = int(self.headers["content-length"])
                while left > 0:
                    piece = await reader.read(min(left, 1 << 16))
                    if not piece:
                        raise HttpError("the connection closed inside the body")
                    left -= len(piece)
                    yield piece
            elif self.status in (204, 304) or 100 <= self.status < 200:
                pass
            else:
                reusable = False
                while piece := await reader.read(1 << 16):
                    yield piece
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, OSError) as e:
            self._release(False)
            raise HttpError(f"the answer's body broke off: {e}") from None
        except BaseException:
            self._release(False)
            raise
        self._release(reusable)

    async def read(self, limit: int = MAX_BODY) -> bytes:
        """The whole body (at most `limit` bytes)."""
        out = bytearray()
        async for piece in self.chunks():
            out += piece
            if len(out) > limit:
                self._release(False)
                raise HttpError(f"the answer's body is larger than {limit} bytes")
        return bytes(out)

    def _release(self, reusable: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if reusable:
            self._client._put(self._origin, conn)
        else:
            conn.close()

    def close(self) -> None:
        """Drops the connection unless the body was read to its end."""
        self._release(False)


class HttpClient:
    """Keep-alive HTTP/1.1 connections per origin (at most `max_idle` kept per origin).
    `resolve`, when given, picks the address a new connection dials for a host and port
    (push delivery checks every address there); TLS still verifies the host name."""

    def __init__(
        self,
        *,
        max_idle: int = 16,
        ssl_context: ssl.SSLContext | None = None,
        resolve: Callable[[str, int], Awaitable[str]] | None = None,
    ) -> None:
        self.max_idle = max_idle
        self._ssl = ssl_context
        self._resolve = resolve
        self._idle: dict[Origin, list[_Connection]] = {}

    def _put(self, origin: Origin, conn: _Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if len(idle) < self.max_idle:
            idle.append(conn)
        else:
            conn.close()

    async def _connect(self, origin: Origin) -> tuple[_Connection, bool]:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if not conn.reader.at_eof() and not conn.writer.is_closing():
                return conn, True
            conn.close()
        ctx: ssl.SSLContext | None = None
        if origin.scheme == "https":
            ctx = self._ssl or ssl.create_default_context()
        try:
            if self._resolve is None:
                reader, writer = await asyncio.open_connection(origin.host, origin.port, ssl=ctx, limit=MAX_HEAD)
            else:
                dial = await self._resolve(origin.host, origin.port)
                name = origin.host if ctx is not None else None
                reader, writer = await asyncio.open_connection(
                    dial, origin.port, ssl=ctx, server_hostname=name, limit=MAX_HEAD
                )
        except OSError as e:
            raise HttpError(f"cannot connect to {origin.host_header}: {e}", sent=False) from None
        raw = writer.get_extra_info("socket")
        if raw is not None:
            # Requests are written whole; waiting for more to coalesce only adds latency.
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Connection(reader, writer), False

    async def request(
        self, method: str, url: str, headers: Mapping[str, str] | None = None, body: bytes | None = None
    ) -> HttpResponse:
        """Sends a request and reads the answer's head. A kept-alive connection the server
        closed meanwhile is replaced by a new one, once.

        Raises:
            HttpError: the transport failed.
        """
        origin, target = Origin.of(url)
        lines = [f"{method} {target} HTTP/1.1", f"Host: {origin.host_header}"]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        for _ in range(2):
            conn, reused = await self._connect(origin)
            try:
                conn.writer.write(head + (body or b""))
                await conn.writer.drain()
                status, answer_headers = await _read_head(conn.reader)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
                conn.close()
                stale = isinstance(e, ConnectionError) or (isinstance(e, asyncio.IncompleteReadError) and not e.partial)
                if reused and stale:
                    continue  # a kept-alive connection the server had closed: nothing was answered
                raise HttpError(f"the request to {origin.host_header} failed: {e!r}") from None
            except BaseException:
                conn.close()
                raise
            return HttpResponse(self, origin, conn, status, answer_headers)
        raise HttpError(f"the request to {origin.host_header} failed", sent=False)

    async def close(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        if not version.startswith("HTTP/1."):
            raise ValueError(f"not an HTTP/1.1 answer: {lines[0]!r}")
        status = int(rest[:3])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        if status != 100:
            return status, headers
