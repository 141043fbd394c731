"""End-to-end benchmark agent on the official Python SDK (agent-client-protocol
0.12.1), on stdio. A prompt whose text is ``"<count> <tokens>"`` is answered by
``count`` agent_message_chunk updates of ``"word " * tokens``, then end_turn.
"""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from harness import parse_e2e_prompt


class Streamer:
    def __init__(self) -> None:
        self._conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=1)

    async def new_session(self, cwd: str, **kwargs: Any) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id="sess-001")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> acp.PromptResponse:
        asked = parse_e2e_prompt(getattr(prompt[0], "text", "") if prompt else "")
        if asked is None:
            raise acp.RequestError.invalid_params({"prompt": 'expected "<count> <tokens>"'})
        count, tokens = asked
        text = "word " * tokens
        for _ in range(count):
            await self._conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))
        return acp.PromptResponse(stop_reason="end_turn")


async def main() -> None:
    reader, writer = await acp.stdio_streams(limit=50 * 1024 * 1024)
    await acp.run_agent(Streamer(), writer, reader)


if __name__ == "__main__":
    asyncio.run(main())
