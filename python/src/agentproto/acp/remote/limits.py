"""The limits of a remote ACP server, and what they bound."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServerLimits"]


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """How much one server holds.

    Memory per ACP connection is bounded by `max_queued_bytes` twice (messages received
    and not read yet by the connection; messages written and not sent yet, over all its
    streams) plus the bodies being received (`max_body_bytes` each) plus the
    connection's own queues (`AcpOptions.connection`); per server, by `max_connections`
    times that. A connection that is over its outgoing bound stops its agent's sends (the
    agent's calls wait), one over its incoming bound holds the POST or stops reading the
    WebSocket: nothing is dropped.
    """

    max_connections: int = 1024
    """ACP connections at once; an `initialize` POST or a WebSocket upgrade beyond it is
    refused (503 / a close before the handshake completes)."""
    max_body_bytes: int = 16 * 1024 * 1024
    """The largest POST body (refused with 413 before it is buffered: by its
    `Content-Length`, or as soon as a chunked body grows past it) and, under `listen`,
    the largest WebSocket message (the socket is closed with 1009)."""
    max_queued_bytes: int = 4 * 1024 * 1024
    """Bytes one connection queues in each direction before it waits."""
    idle_timeout: float = 60.0
    """Seconds after which a Streamable HTTP connection with no stream open and no request
    in that time is ended, as by DELETE. A WebSocket connection ends with its socket."""
    keepalive_interval: float = 15.0
    """Seconds of silence after which an SSE stream gets a comment line."""
    initialize_timeout: float = 30.0
    """Seconds the `initialize` POST waits for the agent's answer (then 504)."""
    stall_timeout: float = 60.0
    """Seconds a connection's output may stay over its bound (a stream nobody reads, a
    WebSocket peer that does not read) before the connection is ended."""
    header_timeout: float = 10.0
    """Seconds a request's head (request line and headers) may take to arrive, counted
    from the connection's accept or the end of its previous exchange; then the TCP
    connection is closed. Enforced when served by `listen` (uvicorn)."""
