"""The official Python SDK's remote clients (agent-client-protocol 0.12.1, its `http`
extra) against an agent at URL: two prompt turns; prints one JSON line per turn,
`[stop_reason, text of the streamed chunks]`.

Usage: python3 official_remote_client.py URL [--ws]
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import acp

PROMPTS = ["alpha beta gamma delta", "epsilon zeta"]


class Recorder:
    def __init__(self) -> None:
        self.chunks: list[str] = []

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.chunks.append(update.content.text)

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> Any:
        from acp.schema import DeniedOutcome

        return acp.RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


async def main(url: str, websocket: bool) -> None:
    if websocket:
        from acp.ws.client import create_websocket_stream

        transport = await create_websocket_stream(url.replace("http://", "ws://"))
    else:
        from acp.http.client import create_http_stream

        transport = create_http_stream(url)
    app = Recorder()
    conn = acp.connect_to_agent(app, transport)
    try:
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd="/", mcp_servers=[])
        for text in PROMPTS:
            app.chunks.clear()
            answer = await conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block(text)]
            )
            print(json.dumps([answer.stop_reason, "".join(app.chunks)]), flush=True)
    finally:
        await conn.close()


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1], "--ws" in sys.argv[2:]), 30))
