"""JSON-RPC 2.0, protocol-agnostic: the envelope (decode once, params and results kept
raw), error codes and the wire `ErrorObject`, NDJSON framing."""

from __future__ import annotations

from agentproto.jsonrpc.error import ErrorCode, ErrorObject
from agentproto.jsonrpc.frame import DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, Oversize, split_lines
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

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "MAX_NESTING_DEPTH",
    "EnvelopeError",
    "EnvelopeErrorKind",
    "ErrorCode",
    "ErrorObject",
    "LineSplitter",
    "Message",
    "Notification",
    "Oversize",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "encode",
    "encode_notification",
    "encode_request",
    "encode_response",
    "split_lines",
]
