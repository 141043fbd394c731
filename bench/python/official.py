"""The official Python SDK, agent-client-protocol 0.12.1 (module ``acp``, pydantic
models), in the seed-000 loops, doing what its receive path does with one line:
``json.loads`` (as its stdio transport does), the request/notification split of its
connection, then the params validated by method with the SDK's pydantic model
(``model_validate``, as its router does before calling a handler). Requests are
looked up among the agent-side methods, session/update among the client-side ones.
Answers are built as its connection builds them: the response model dumped with
``model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)``
into ``{jsonrpc, id, result}``, then ``json.dumps`` with compact separators as its
sender writes them. Not included: the asyncio transport and connection machinery.
"""

from __future__ import annotations

import json

import acp  # noqa: F401  (loaded as an application would; its start-up is part of the cost)
from acp.schema import (
    InitializeRequest,
    InitializeResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    SessionNotification,
)
from harness import Adapter, main
from pydantic import ValidationError

AGENT_SIDE = {"initialize": InitializeRequest, "session/new": NewSessionRequest, "session/prompt": PromptRequest}
CLIENT_SIDE = {"session/update": SessionNotification}
DUMP = {"mode": "json", "by_alias": True, "exclude_none": True, "exclude_unset": True}


def decode(kind: str, line: str) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    if not isinstance(message, dict) or message.get("method") != kind:
        return False
    model = (AGENT_SIDE if "id" in message else CLIENT_SIDE).get(kind)
    if model is None:
        return False
    try:
        model.model_validate(message.get("params"))
    except ValidationError:
        return False
    return True


def respond(request_id: int, result: object) -> str:
    payload = {"jsonrpc": "2.0", "id": request_id, "result": result.model_dump(**DUMP)}
    return json.dumps(payload, separators=(",", ":"))


if __name__ == "__main__":
    main(
        Adapter(
            decode=decode,
            encode_session_result=lambda i, sid: respond(i, NewSessionResponse(session_id=sid)),
            encode_initialize_result=lambda i: respond(i, InitializeResponse(protocol_version=1)),
        )
    )
