"""JSON-RPC 2.0, protocol-agnostic: the envelope (decode once, params and results kept
raw), error codes and the wire `ErrorObject`, NDJSON framing, and the asyncio
`Connection` (ordered delivery, bounded queues, cancellation both ways)."""

from __future__ import annotations

from agentproto.jsonrpc.cancellation import CancellationToken
from agentproto.jsonrpc.connection import Connection
from agentproto.jsonrpc.error import ErrorCode, ErrorObject, RequestError
from agentproto.jsonrpc.frame import DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, Oversize, split_lines
from agentproto.jsonrpc.handler import Handler, NotificationContext, RequestContext
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
from agentproto.jsonrpc.peer import Peer
from agentproto.jsonrpc.transport import ByteReader, ByteWriter

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
