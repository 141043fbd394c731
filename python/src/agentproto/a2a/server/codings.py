"""The codings a request may come in, checked before any route sees it.

The server reads bodies as they arrive: it decodes no content coding, and its ASGI server
decodes `chunked` framing only. A body in another coding would be read as if it were plain
JSON, so it is refused instead (as the Rust and TypeScript servers do):

- a `Transfer-Encoding` listing a coding other than `chunked`: 501 (RFC 9112 §6.1), the
  connection closed (an ASGI server that refuses such framing itself answers first);
- a `Content-Encoding` other than `identity`: 415 with `Accept-Encoding: identity`, the
  codings that would have been accepted (RFC 9110 §15.5.16).

The answers are plain text: no binding has read the request, so there is no JSON-RPC id.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["refusal"]

_PLAIN = (b"content-type", b"text/plain; charset=utf-8")


def _foreign(value: str | None, allowed: str) -> str | None:
    """The first coding in a comma-separated field value that is not `allowed` (compared
    without case or parameters), else `None`."""
    if not value:
        return None
    for coding in value.split(","):
        token = coding.partition(";")[0].strip()
        if token and token.lower() != allowed:
            return token
    return None


def refusal(headers: Mapping[str, str]) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
    """The answer (status, body, headers) to a request in a coding the server does not
    decode, else `None`. `headers`: lower-case names, repeated fields joined with commas."""
    transfer = _foreign(headers.get("transfer-encoding"), "chunked")
    if transfer is not None:
        text = f'transfer coding "{transfer}" is not supported; only chunked is\n'
        return 501, text.encode(), [_PLAIN, (b"connection", b"close")]
    content = _foreign(headers.get("content-encoding"), "identity")
    if content is not None:
        text = f'content coding "{content}" is not supported; send the body without one\n'
        return 415, text.encode(), [_PLAIN, (b"accept-encoding", b"identity")]
    return None
