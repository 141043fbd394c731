"""What a client puts on the wire for an A2A call, and the SSE reader of streamed answers.

`rest_request` turns an operation and its request (as a JSON object) into the HTTP+JSON
request its `google.api.http` rule gives: the `/{tenant}/…` rule when `tenant` is set,
the path variables taken out of the request, the rest as the body (POST) or as query
parameters (GET, DELETE). `jsonrpc_body` is the JSON-RPC request. `SseReader` splits a
`text/event-stream` body into events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import msgspec

from agentproto.a2a.generated.v1 import OPERATIONS, Operation

__all__ = ["SseEvent", "jsonrpc_body", "read_sse", "rest_request"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def rest_request(operation: Operation, request: dict[str, Any]) -> tuple[str, str, bytes | None]:
    """The HTTP+JSON request for `operation`: its method, its path and query relative to
    the interface URL, and its body (`None` for a bodiless call)."""
    info = OPERATIONS[operation]
    params = dict(request)
    tenant = params.get("tenant")
    rules = info.http
    rule = next((r for r in rules if "{tenant}" in r.path), rules[0]) if tenant else rules[0]
    segments = []
    for segment in rule.path.split("/"):
        if segment.startswith("{"):
            name, _, suffix = segment[1:].partition("}")
            value = params.pop(_camel(name), "")
            segments.append(quote(_scalar(value), safe="") + suffix)
        else:
            segments.append(segment)
    path = "/".join(segments)
    if rule.body and rule.method.lower() == "post":
        return "POST", path, msgspec.json.encode(params)
    pairs = []
    for key, value in params.items():
        for item in value if isinstance(value, list) else [value]:
            pairs.append(f"{quote(key, safe='')}={quote(_scalar(item), safe='')}")
    return rule.method.upper(), path + ("?" + "&".join(pairs) if pairs else ""), None


def jsonrpc_body(operation: Operation, request_id: int, params: bytes) -> bytes:
    """A JSON-RPC request calling `operation` with `params` (JSON text)."""
    head = b'{"jsonrpc":"2.0","id":%d,"method":"' % request_id
    return head + operation.value.encode() + b'","params":' + params + b"}"


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event."""

    data: bytes
    """The `data:` lines, joined with line feeds."""
    id: str | None = None
    event: str | None = None


async def read_sse(chunks: AsyncIterator[bytes], max_event: int = 64 << 20) -> AsyncIterator[SseEvent]:
    """The events of a `text/event-stream` body (comments and empty events skipped)."""
    buffer = bytearray()
    async for chunk in chunks:
        buffer += chunk.replace(b"\r\n", b"\n")
        while True:
            end = buffer.find(b"\n\n")
            if end < 0:
                if len(buffer) > max_event:
                    raise ValueError(f"an SSE event is larger than {max_event} bytes")
                break
            block = bytes(buffer[:end])
            del buffer[: end + 2]
            event = _parse(block)
            if event is not None:
                yield event


def _parse(block: bytes) -> SseEvent | None:
    data: list[bytes] = []
    event_id: str | None = None
    name: str | None = None
    for line in block.split(b"\n"):
        if not line or line.startswith(b":"):
            continue
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"id":
            event_id = value.decode("utf-8", "replace")
        elif field == b"event":
            name = value.decode("utf-8", "replace")
    if not data:
        return None
    return SseEvent(b"\n".join(data), event_id, name)
