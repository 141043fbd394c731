"""agentproto's Python SDK (package ``agentproto``, python/) in the seed-000 loops,
doing with one line what its connections do with a line they read: ``classify`` from
``agentproto.acp.receive`` (the envelope decoded with its params kept as raw bytes,
then the params decoded by method into the generated v1 types: the msgspec fast path,
falling back to the authoritative validating path). Requests are classified by the
agent's receiving side (``v1.AGENT``), session/update by the client's (``v1.CLIENT``),
with no pending calls; a line counts as decoded when it comes out as the expected
request or notification.

The harness hands every Python adapter the line as ``str``; agentproto's receive path
reads bytes (its reader never makes text), so this adapter encodes the line to UTF-8
first, a step the ``json.loads`` adapters do not pay.

Answers are built as the agent role sends a handler's result: the typed response
encoded by the canonical encoder (``agentproto.codec.encode``), then wrapped in the
response envelope (``agentproto.jsonrpc.encode_response``), as bytes. Not included: the
asyncio connection machinery (the end-to-end run covers it).
"""

from __future__ import annotations

from agentproto.acp import v1
from agentproto.acp.receive import IncomingNotification, IncomingRequest, classify
from agentproto.codec import encode
from agentproto.jsonrpc import encode_response
from harness import Adapter, main

NO_PENDING: dict = {}
AGENT, CLIENT = v1.AGENT, v1.CLIENT
EXPECTED = {
    "initialize": v1.InitializeRequest,
    "session/new": v1.NewSessionRequest,
    "session/prompt": v1.PromptRequest,
    "session/update": v1.SessionNotification,
}


def decode(kind: str, line: str) -> bool:
    if kind == "session/update":
        incoming = classify(line.encode(), CLIENT, NO_PENDING)
        wanted = IncomingNotification
    else:
        incoming = classify(line.encode(), AGENT, NO_PENDING)
        wanted = IncomingRequest
    return type(incoming) is wanted and incoming.method == kind and type(incoming.params) is EXPECTED[kind]


def respond(request_id: int, result: object) -> bytes:
    return encode_response(request_id, encode(result))


if __name__ == "__main__":
    main(
        Adapter(
            decode=decode,
            encode_session_result=lambda i, sid: respond(i, v1.NewSessionResponse(session_id=sid)),
            encode_initialize_result=lambda i: respond(i, v1.InitializeResponse(protocol_version=1)).decode(),
        )
    )
