"""What the two roles' handles to their peer share: extension calls, the negotiated
version, the peer's advertised capabilities, flushing and the closed state.

`ClientConnectionBase` (the agent's handle) and `AgentConnectionBase` (the client's)
differ only in how their typed calls are cancelled: by the prompt turn on the agent
side, by a `with_cancellation` token on the client side.
"""

from __future__ import annotations

from typing import Any

from msgspec import Raw

from agentproto.acp.endpoint import Endpoint
from agentproto.jsonrpc.cancellation import CancellationToken

__all__ = ["PeerHandle"]


class PeerHandle:
    """The shared part of a role's handle to its peer."""

    __slots__ = ("_endpoint",)

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint

    def _ext_cancel(self) -> CancellationToken | None:
        """The token that cancels this handle's extension calls, if any."""
        return None

    async def _notify(self, method: str, params: object) -> None:
        await self._endpoint.notify(method, params)

    async def ext_method(self, method: str, params: Raw | bytes | None = None) -> Raw:
        """Sends an extension request (its name starts with `_`) and returns the raw result."""
        return await self._endpoint.ext_request(method, params, self._ext_cancel())

    async def ext_notification(self, method: str, params: Raw | bytes | None = None) -> None:
        """Sends an extension notification (its name starts with `_`)."""
        await self._endpoint.ext_notify(method, params)

    @property
    def protocol_version(self) -> int | None:
        """The version `initialize` negotiated, once it has completed."""
        negotiated = self._endpoint.negotiated
        return None if negotiated is None else negotiated.version

    def _peer_initialize(self) -> Any:
        """The peer's typed `initialize` message (`None` before `initialize` has
        completed); the generated handles read its capabilities from it."""
        negotiated = self._endpoint.negotiated
        return None if negotiated is None else negotiated.peer

    def knows_session(self, session_id: str) -> bool:
        """Whether `session_id` is a session of this connection: opened by an answer
        (`session/new`, `session/load`, ...) and not closed since."""
        return session_id in self._endpoint.sessions

    async def flush(self) -> None:
        """Waits until everything sent so far has been written out."""
        await self._endpoint.peer.flush()

    @property
    def is_closed(self) -> bool:
        return self._endpoint.peer.is_closed
