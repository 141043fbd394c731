"""Serving a `RemoteAgentApp` on a TCP port with uvicorn (the `agentproto[http]` extra:
uvicorn, and websockets for its WebSocket protocol).

uvicorn speaks HTTP/1.1, not HTTP/2, which the RFD asks of Streamable HTTP: every
stream then holds one TCP connection (the official SDKs' clients and ours work over
HTTP/1.1). Put an HTTP/2 proxy in front where that matters; WebSocket is unaffected.
"""

from __future__ import annotations

import socket
from typing import Any

from agentproto.acp.remote.limits import ServerLimits
from agentproto.acp.remote.server import RemoteAgentApp

__all__ = ["bind", "listen"]


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0: any free port; read it from `getsockname()`).
    Connections are queued by the kernel until `listen` accepts them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on connections accepted from a socket
    # that says it is TCP; without it each answer on a kept-alive connection can wait ~40 ms
    # for the peer's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def server(app: Any, sock: socket.socket, **config: Any) -> Any:
    """A `uvicorn.Server` for the ASGI `app` (a `RemoteAgentApp`, or one wrapping it) on `sock` (not started: `await server.serve([sock])`,
    stop it with `server.should_exit = True`). `config` goes to `uvicorn.Config`."""
    try:
        import uvicorn
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("serving over the network needs the http extra: pip install 'agentproto[http]'") from e
    from agentproto.acp.remote.head_timeout import head_timed_protocol

    limits = getattr(app, "limits", ServerLimits())
    settings: dict[str, Any] = {
        "log_level": "warning",
        "http": head_timed_protocol(limits.header_timeout),
        "ws": "websockets-sansio",
        "ws_max_size": limits.max_body_bytes,
        "ws_per_message_deflate": False,
        "lifespan": "on",
        # Open SSE streams would hold a graceful shutdown forever.
        "timeout_graceful_shutdown": 2,
    }
    settings.update(config)
    return uvicorn.Server(uvicorn.Config(app, **settings))


async def listen(app: RemoteAgentApp, sock: socket.socket, **config: Any) -> None:
    """Serves `app` on `sock` until cancelled or stopped by a signal."""
    await server(app, sock, **config).serve(sockets=[sock])
