"""JSON-RPC 2.0, protocol-agnostic: the envelope (decode once, params and results kept
raw), error codes and the wire `ErrorObject`, NDJSON framing, and the asyncio
`Connection` (ordered delivery, bounded queues, cancellation both ways).

The connection and what it is made of (`Connection`, `Handler`, the contexts, `Peer`,
`CancellationToken`) are imported on first use: decoding messages does not load asyncio."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproto._lazy import lazy_names
from agentproto.jsonrpc.error import ErrorCode, ErrorObject, RequestError
from agentproto.jsonrpc.frame import DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, Oversize, split_lines
from agentproto.jsonrpc.local_error import (
    CallAborted,
    CallError,
    CallTimeout,
    ConnectionClosed,
    InvalidResponse,
    ResponseTooLarge,
    RpcError,
    TransportError,
)
from agentproto.jsonrpc.message import (
    MAX_NESTING_DEPTH,
    EnvelopeError,
    EnvelopeErrorKind,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode,
    encode_notification,
    encode_request,
    encode_response,
)
from agentproto.jsonrpc.options import CancelNotification, ConnectionEvent, ConnectionOptions, Observer
from agentproto.jsonrpc.transport import ByteReader, ByteWriter

if TYPE_CHECKING:
    from agentproto.jsonrpc.cancellation import CancellationToken
    from agentproto.jsonrpc.connection import Connection
    from agentproto.jsonrpc.handler import Handler, NotificationContext, RequestContext
    from agentproto.jsonrpc.peer import Peer

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "MAX_NESTING_DEPTH",
    "ByteReader",
    "ByteWriter",
    "CallAborted",
    "CallError",
    "CallTimeout",
    "CancelNotification",
    "CancellationToken",
    "Connection",
    "ConnectionClosed",
    "ConnectionEvent",
    "ConnectionOptions",
    "EnvelopeError",
    "EnvelopeErrorKind",
    "ErrorCode",
    "ErrorObject",
    "Handler",
    "InvalidResponse",
    "LineSplitter",
    "Message",
    "Notification",
    "NotificationContext",
    "Observer",
    "Oversize",
    "Peer",
    "Request",
    "RequestContext",
    "RequestError",
    "RequestId",
    "Response",
    "ResponseTooLarge",
    "RpcError",
    "TransportError",
    "decode",
    "encode",
    "encode_notification",
    "encode_request",
    "encode_response",
    "split_lines",
]

# The names that need asyncio, and the module each comes from.
_LAZY = {
    "CancellationToken": "agentproto.jsonrpc.cancellation",
    "Connection": "agentproto.jsonrpc.connection",
    "Handler": "agentproto.jsonrpc.handler",
    "NotificationContext": "agentproto.jsonrpc.handler",
    "Peer": "agentproto.jsonrpc.peer",
    "RequestContext": "agentproto.jsonrpc.handler",
}


__getattr__ = lazy_names(__name__, globals(), _LAZY)
