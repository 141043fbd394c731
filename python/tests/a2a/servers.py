"""Test support: an ASGI app served by uvicorn on 127.0.0.1 (a free port) in a thread of
its own, and raw HTTP/1.1 exchanges over a plain socket. Every wait is bounded."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import uvicorn

BOUND = 10.0
"""Seconds any wait may take."""


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


class ServerThread:
    """The app `make(base_url)` returns, served on 127.0.0.1 in a thread; `stop()` ends
    it (also on `with` exit)."""

    def __init__(self, make: Callable[[str], Any]) -> None:
        # IPPROTO_TCP named: asyncio turns Nagle off only on sockets that say they are TCP.
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port: int = self.listener.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._ready = threading.Event()
        self.app = make(self.base)
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=2
        )
        self._server = _Server(config, self._ready)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(BOUND):
            self.stop()
            raise TimeoutError("the server did not start within the bound")

    def _run(self) -> None:
        asyncio.run(self._server.serve(sockets=[self.listener]))

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(BOUND)
        self.listener.close()
        assert not self._thread.is_alive(), "the server thread did not end within the bound"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def request_bytes(method: str, target: str, headers: dict[str, str], body: bytes | None, port: int) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def exchange(port: int, raw: bytes) -> RawResponse:
    """Sends `raw` on a new connection and reads the answer until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as s:
        s.sendall(raw)
        data = bytearray()
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = dechunk(body)
    return RawResponse(int(lines[0].split(" ")[1]), headers, body)


def dechunk(data: bytes) -> bytes:
    out = bytearray()
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2 :]
    return bytes(out)
