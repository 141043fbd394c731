"""`AcpError`: how a typed call or notification failed.

The classes are generated from the `[[local_errors]]` table of rules/acp.toml
(`agentproto.acp.generated.errors`): the same kinds, texts and handler answers as the
Rust and TypeScript SDKs'. The peer's own error answer is `PeerError`; every other class
happened on this side. A handler that lets one of these escape answers -32603 naming the
call (`data.method`, and `data.cause` for a peer error), or -32800 for `Cancelled`: the
peer's code is never passed on as the handler's own (a -32601 from the peer does not mean
this method is missing).
"""

from __future__ import annotations

from agentproto.acp.generated.errors import (
    AcpError,
    Cancelled,
    CapabilityNotAdvertised,
    ConnectionFailed,
    InvalidParams,
    InvalidResult,
    NotAnnounced,
    NotInitialized,
    PeerError,
    UnsupportedVersion,
)

__all__ = [
    "AcpError",
    "Cancelled",
    "CapabilityNotAdvertised",
    "ConnectionFailed",
    "InvalidParams",
    "InvalidResult",
    "NotAnnounced",
    "NotInitialized",
    "PeerError",
    "UnsupportedVersion",
]
