"""`Context`: what a handler receives besides its params."""

from __future__ import annotations

from typing import Generic, TypeVar

from agentproto.jsonrpc.cancellation import CancellationToken
from agentproto.jsonrpc.handler import RequestContext
from agentproto.jsonrpc.message import RequestId

__all__ = ["Context"]

P = TypeVar("P")


class Context(Generic[P]):
    """The connection to the other side (`peer`) and the cancellation of the message
    being handled."""

    __slots__ = ("_rpc", "_token", "handles_cancellation", "peer", "strict")

    def __init__(self, peer: P, rpc: RequestContext | None, token: CancellationToken, strict: bool) -> None:
        self.peer = peer
        """The connection to the other side: call it, notify it. Inside a prompt turn (agent
        side) its calls end with `Cancelled` when the turn is cancelled, and the pending
        request is cancelled with `$/cancel_request`."""
        self.strict = strict
        """Whether outgoing messages are validated (`AcpOptions.strict`)."""
        self.handles_cancellation = False
        self._rpc = rpc
        self._token = token

    @property
    def request_id(self) -> RequestId | None:
        """The id of the request being handled (`None` in a notification handler)."""
        return None if self._rpc is None else self._rpc.id

    @property
    def cancellation_token(self) -> CancellationToken:
        """Fires when the request is cancelled: by `$/cancel_request`, by `session/cancel`
        for a prompt turn (agent side) or a permission request (client side), or because
        the connection is shutting down."""
        return self._token

    @property
    def is_cancelled(self) -> bool:
        return self._token.is_cancelled

    def handle_cancellation(self) -> None:
        """By default a cancelled request's handler is stopped (at its next `await`) and
        the connection answers for it (-32800; `stopReason: "cancelled"` for a prompt; the
        `cancelled` outcome for a permission request). After this call the handler keeps
        running and its own return value is sent instead (a prompt's stop reason is still
        forced to `cancelled`). Call it before the first `await`."""
        self.handles_cancellation = True
        if self._rpc is not None:
            self._rpc.handle_cancellation()
